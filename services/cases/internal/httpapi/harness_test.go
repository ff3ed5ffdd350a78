package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/awardkeys"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
	"github.com/pcourt/pcourt/services/cases/internal/settlementflow"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

// The partners of the test tenant ("tenant-test", sandbox, as authtest
// mints): the claimant files through partner-test, the respondent acts
// through partner-r, partner-c takes no part.
const (
	claimantPartner   = "partner-test"
	respondentPartner = "partner-r"
)

// stack is the cases service's HTTP surface over a real redis-server and
// real HTTP, with cases opened as the case-opened consumer opens them.
type stack struct {
	url         string
	rdb         *redis.Client
	credentials *auth.Store
	cases       *store.Cases
	opened      *events.Opened
	logger      *slog.Logger

	// Platform orchestrators: the claimant's partner, the respondent's
	// partner, a partner of the tenant taking no part, the claimant's
	// partner in another tenant and in the live environment.
	claimant, respondent, stranger, otherTenant, live string
	// respondentAgent is a respondent_agent of the respondent's partner
	// with no membership: it acts with the invitation only.
	respondentAgent string
	// claimantAgent is a claimant_agent of the claimant's partner with no
	// membership and no capability.
	claimantAgent string
	// The tribunal pool of the test tenant: two adjudicators (the rubric
	// configuration) and two reviewers, each under its own partner id,
	// with the public ids the cases name them by; scheduler assigns.
	adjudicator, adjudicator2, reviewer, reviewer2         string
	adjudicatorID, adjudicator2ID, reviewerID, reviewer2ID string
	// adjudicatorConfig is the configuration the first adjudicator pins.
	adjudicatorConfig award.Configuration
	scheduler         *caseflow.Scheduler
	// tickers are the subdomains' parts of the deadline scan, for a
	// scheduler at another instant (schedulerAt).
	tickers []caseflow.Ticker
	// afterAward is the stack's after-award flow, for the fee reconciler.
	afterAward *afterawardflow.Service
	// files keeps the exhibits (a directory store; the S3 test puts the
	// stack on a real S3 server with newStackOn), spool is where uploads
	// wait for their checks.
	files objectstore.Store
	spool string
	// ledger is the local x402 facilitator's ledger the stack's refund
	// rail pays through, from the operator's account (refunds_test.go).
	ledger   *localfacilitator.Ledger
	operator string
	// facilitator is the local facilitator's client; feeJournal the
	// settlement journal appeal fees are paid through, to feePayee.
	facilitator *facilitator.Client
	feeJournal  *journal.Journal
	feePayee    string
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newStack(t testing.TB) *stack {
	t.Helper()
	files, err := objectstore.NewDir(t.TempDir())
	require.NoError(t, err)
	return newStackOn(t, files)
}

// newStackOn is newStack keeping exhibits in files.
func newStackOn(t testing.TB, files objectstore.Store) *stack {
	t.Helper()
	rdb := redistest.NewClient(t)
	logger := discard()
	cfg := auth.DefaultStoreConfig()
	cfg.PerCredential = ratelimit.Off // the pacing itself is tested in libs/auth
	s := &stack{rdb: rdb, credentials: auth.NewStore(rdb, cfg), cases: newCases(t, rdb), logger: logger, files: files, spool: t.TempDir()}
	// Archived cases are read from the store their archives are in, the
	// exhibits' (archive_test.go).
	s.cases.ReadArchivesFrom(files)
	flow := caseflow.New(s.cases, nil)
	s.opened = events.NewOpened(flow, logger)
	orch := auth.RolePlatformOrchestrator
	s.claimant, _ = authtest.Mint(t, s.credentials, orch)
	s.respondent, _ = authtest.Mint(t, s.credentials, orch, authtest.WithPartner(respondentPartner))
	s.stranger, _ = authtest.Mint(t, s.credentials, orch, authtest.WithPartner("partner-c"))
	s.otherTenant, _ = authtest.Mint(t, s.credentials, orch, authtest.WithTenant("tenant-other"))
	s.live, _ = authtest.Mint(t, s.credentials, orch, authtest.WithEnvironment(auth.Live))
	s.respondentAgent, _ = authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner))
	s.claimantAgent, _ = authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)

	// The two adjudicators pin different configurations: an upheld
	// challenge moves the case to another one.
	second := rubricConfiguration
	second.ModelVersion = "2"
	s.adjudicator, s.adjudicatorID = s.tribunalMember(t, auth.RoleAdjudicator, "tribunal-ai-1", &rubricConfiguration)
	s.adjudicator2, s.adjudicator2ID = s.tribunalMember(t, auth.RoleAdjudicator, "tribunal-ai-2", &second)
	s.reviewer, s.reviewerID = s.tribunalMember(t, auth.RoleReviewer, "tribunal-rev-1", nil)
	s.reviewer2, s.reviewer2ID = s.tribunalMember(t, auth.RoleReviewer, "tribunal-rev-2", nil)
	// The pool is read in credential id order and the first eligible
	// member of each role is assigned: adjudicator and reviewer are the
	// ones a new case gets, whatever ids the mint drew.
	s.adjudicatorConfig = rubricConfiguration
	if s.adjudicator2ID < s.adjudicatorID {
		s.adjudicator, s.adjudicator2, s.adjudicatorID, s.adjudicator2ID = s.adjudicator2, s.adjudicator, s.adjudicator2ID, s.adjudicatorID
		s.adjudicatorConfig = second
	}
	if s.reviewer2ID < s.reviewerID {
		s.reviewer, s.reviewer2, s.reviewerID, s.reviewer2ID = s.reviewer2, s.reviewer, s.reviewer2ID, s.reviewerID
	}
	keys, err := awardkeys.Load(context.Background(), rdb, awardkeys.Config{DevEphemeral: true}, time.Now())
	require.NoError(t, err)
	decision := tribunalflow.New(flow, s.cases, s.credentials, keys, nil)
	refunds := s.refunds(t)
	payments, fees := s.appealFees(t)
	afterAward := afterawardflow.New(afterawardflow.Config{Flow: flow, Cases: s.cases, Tribunal: decision, Refunds: refunds, Payments: payments, Fees: fees})
	s.afterAward = afterAward
	s.tickers = []caseflow.Ticker{decision.Ticker(), afterAward.Ticker()}
	s.scheduler = caseflow.NewScheduler(s.cases, caseflow.DefaultSchedulerConfig(), logger, nil, s.tickers...)

	idempotent, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:cases"), logger)
	require.NoError(t, err)
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "cases", Logger: logger, Mapper: httpapi.Problem})
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: s.credentials,
		Cases:       s.cases,
		Flow:        flow,
		Journal:     idempotent,
		Logger:      logger,
		Tribunal:    decision,
		AwardKeys:   keys,
		Evidence:    evidenceflow.New(flow, s.cases, files, s.spool, nil),
		Signer:      keys,
		AfterAward:  afterAward,
		PublicBase:  publicBase(t),
		Settlement:  settlementflow.New(flow, decision, nil),
	})
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// publicBase is the public origin the stack's 402 challenges name.
func publicBase(t testing.TB) x402.PublicBase {
	t.Helper()
	b, err := x402.ParsePublicBase(x402.DefaultPublicBaseURL)
	require.NoError(t, err)
	return b
}

// tribunalMember mints a tribunal credential into the test tenant's pool,
// as pcadm tribunal add does; an adjudicator with its configuration.
func (s *stack) tribunalMember(t testing.TB, role auth.Role, partner string, config *award.Configuration) (token, publicID string) {
	t.Helper()
	token, cred, err := s.credentials.Mint(context.Background(), auth.MintRequest{
		Tenant: "tenant-test", Environment: auth.Sandbox, Role: role, PartnerID: partner, Label: "tribunal " + partner,
	})
	require.NoError(t, err)
	var cfg []byte
	if config != nil {
		cfg, err = award.Canonical(*config)
		require.NoError(t, err)
	}
	require.NoError(t, s.credentials.AddTribunalMember(context.Background(), cred.PublicID, cfg))
	return token, cred.PublicID
}

var rubricConfiguration = award.Configuration{
	Provider: "rubric", Model: "pcourt-rubric", ModelVersion: "1", InstructionsDigest: strings.Repeat("ab", 32),
	OutputSchemaVersion: award.SchemaProposal, Tools: []string{},
}

var caseCounter atomic.Int64

// opened is a case as filings opens it, with the secret behind its
// respondent_invite hash.
type opened struct {
	id          string
	inviteToken string
}

// caseOpened is the pc.filings.case-opened.v2 payload filings publishes
// for a case just confirmed by its claimant: the claimant acts through the
// filing partner, the respondent through partner-r and has not confirmed
// (it must be invited and join). Edits apply to the payload, which must
// still be the published schema's.
func caseOpened(id, inviteToken string, openedAt time.Time, edits ...func(payload map[string]any)) []byte {
	at := openedAt.UTC().Format("2006-01-02T15:04:05.000Z")
	payload := map[string]any{
		"schemaVersion": "filings-case-opened-v2",
		"eventId":       "case-opened:" + id, "openedAt": at,
		"caseId": id, "externalCaseId": "ext-" + id,
		"tenant": "tenant-test", "environment": "sandbox", "partnerId": claimantPartner,
		"draftId": "draft-" + id, "draftDigest": strings.Repeat("2", 64),
		"rules": map[string]any{"version": "pcourt-rules-2026-11", "hash": strings.Repeat("1", 64)},
		"procedure": map[string]any{
			"profile": "standard", "answerRequired": true, "evidenceRounds": 2,
			"rebuttalRounds": 1, "filingsPerSidePerStage": 2, "recordConfirmationRequired": true,
		},
		"participants": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "partnerId": claimantPartner, "principalId": "org-acme", "principalKind": "organization",
				"authorizationMode": "partner_credential", "initiator": true, "joined": true},
			{"participantId": "p-respondent", "side": "respondent", "partnerId": respondentPartner, "principalId": "org-beta", "principalKind": "organization",
				"authorizationMode": "partner_credential", "initiator": false, "joined": false},
		},
		"confirmations": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "required": true, "status": "confirmed", "confirmedAt": at},
			{"participantId": "p-respondent", "side": "respondent", "required": false, "status": "not_required"},
		},
		"fee":              map[string]any{"feeId": "fee-" + id, "currency": "USD", "amountMinor": 2500, "tier": "single_arbiter", "collection": "invoice_after_opening", "status": "quoted"},
		"capabilityHashes": map[string]any{"respondent_invite": auth.HashToken(inviteToken), "respondent_login": auth.HashToken("login-" + inviteToken)},
	}
	for _, edit := range edits {
		edit(payload)
	}
	addRecipients(payload)
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return b
}

// addRecipients names each side's partners as filings does: every
// participant's partnerId (for a hosted respondent, the partner that
// delivers its invitation), each once; an account's participant names
// none.
func addRecipients(payload map[string]any) {
	recipients := map[string][]map[string]any{"claimant": {}, "respondent": {}}
	seen := map[string]bool{}
	for _, p := range payload["participants"].([]map[string]any) {
		side, partner := p["side"].(string), p["partnerId"].(string)
		if partner == "" || seen[side+"/"+partner] {
			continue
		}
		seen[side+"/"+partner] = true
		recipients[side] = append(recipients[side], map[string]any{"tenant": payload["tenant"], "environment": payload["environment"], "partnerId": partner})
	}
	payload["recipients"] = recipients
}

// respondentAgentID binds the respondent participant to an immutable agent id.
func respondentAgentID(agentID string) func(map[string]any) {
	return func(payload map[string]any) {
		participants := payload["participants"].([]map[string]any)
		participants[1]["agentId"] = agentID
	}
}

// open applies a new case's case-opened fact as the consumer does.
func (s *stack) open(t testing.TB, edits ...func(map[string]any)) opened {
	t.Helper()
	return s.openAt(t, time.Now(), edits...)
}

// openAt is open with the case opened at openedAt.
func (s *stack) openAt(t testing.TB, openedAt time.Time, edits ...func(map[string]any)) opened {
	t.Helper()
	o := opened{id: fmt.Sprintf("cs_test_%d_%d", time.Now().UnixNano()%1e6, caseCounter.Add(1)), inviteToken: auth.NewToken("pc_inv_")}
	value := caseOpened(o.id, o.inviteToken, openedAt, edits...)
	apitest.Event(t, api.CaseOpenedSchema+".schema.json", value)
	err := s.opened.Handle(context.Background(), kafka.Message{
		Topic: api.CaseOpenedTopic, Key: o.id, EventID: "case-opened:" + o.id, Schema: api.CaseOpenedSchema, Value: value,
	})
	require.NoError(t, err)
	return o
}

type reply struct {
	status int
	header http.Header
	body   []byte
	code   string // the problem code, or the website envelope's error code
}

// do sends a request and validates the exchange against the OpenAPI
// document. headers are name, value pairs.
func (s *stack) do(t testing.TB, method, path, token, key string, body any, headers ...string) reply {
	t.Helper()
	req := s.request(t, method, path, token, key, body, headers...)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	return s.reply(t, resp, raw)
}

// doUndocumented sends a request to a route the OpenAPI document does not
// describe (a route answering 501).
func (s *stack) doUndocumented(t testing.TB, method, path, token string) reply {
	t.Helper()
	req := s.request(t, method, path, token, "", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return s.reply(t, resp, raw)
}

func (s *stack) request(t testing.TB, method, path, token, key string, body any, headers ...string) *http.Request {
	t.Helper()
	var r io.Reader
	var b []byte
	if body != nil {
		var ok bool
		if b, ok = body.([]byte); !ok {
			var err error
			b, err = json.Marshal(body)
			require.NoError(t, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return req
}

func (s *stack) reply(t testing.TB, resp *http.Response, raw []byte) reply {
	t.Helper()
	dump, err := httputil.DumpResponse(resp, false)
	require.NoError(t, err)
	require.Less(t, len(dump), 4096, "the header block must pass an ingress with default buffers")
	rep := reply{status: resp.StatusCode, header: resp.Header, body: raw}
	// A 402 is an x402 challenge, not a problem.
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusPaymentRequired {
		var p struct {
			Code  string
			Error struct{ Code string }
		}
		require.NoError(t, json.Unmarshal(raw, &p), string(raw))
		rep.code = p.Code
		if rep.code == "" {
			rep.code = p.Error.Code
		}
	}
	return rep
}

var keyCounter atomic.Int64

func newKey() string { return fmt.Sprintf("test-key-%d-%d", time.Now().UnixNano(), keyCounter.Add(1)) }

// bookkeeping says which keys a refusal may write: the idempotency journal
// (a refusal is journaled as the answer to its key) and the rate limiter's
// counters. Everything else (cases, dockets, outbox, deadlines, documents,
// memberships, capabilities) must stay as it was.
func bookkeeping(key string) bool {
	return strings.Contains(key, ":idem:") || strings.HasPrefix(key, "pc:auth:rl")
}

// unchanged runs act and requires it to leave the Redis state as it was.
func (s *stack) unchanged(t testing.TB, act func()) {
	t.Helper()
	redistest.Unchanged(t, s.rdb, bookkeeping, act)
}

// data decodes the data member of a canonical answer, or of a website envelope.
func data[T any](t testing.TB, rep reply) T {
	t.Helper()
	var env struct {
		OK   *bool
		Data T
	}
	require.NoError(t, json.Unmarshal(rep.body, &env), string(rep.body))
	return env.Data
}

// caseData is the part of a case the tests read.
type caseData struct {
	CaseID       string `json:"caseId"`
	Status       string `json:"status"`
	LastSequence int64  `json:"lastSequence"`
	Participants []struct {
		ParticipantID string `json:"participantId"`
		Side          string `json:"side"`
		Joined        bool   `json:"joined"`
	} `json:"participants"`
	Answer *struct {
		ParticipantID string `json:"participantId"`
		Digest        string `json:"digest"`
		Text          string `json:"text"`
	} `json:"answer"`
}

type actData struct {
	Case   caseData `json:"case"`
	Events []struct {
		EventID  string `json:"eventId"`
		Sequence int64  `json:"sequence"`
		Type     string `json:"type"`
	} `json:"events"`
	Invitation *struct {
		RespondentInviteToken string `json:"respondentInviteToken"`
		CapabilityDelivery    string `json:"capabilityDelivery"`
	} `json:"invitation"`
	SubmissionID  string `json:"submissionId"`
	TerminationID string `json:"terminationId"`
}

type docketData struct {
	Events []struct {
		EventID        string `json:"eventId"`
		Sequence       int64  `json:"sequence"`
		Type           string `json:"type"`
		ActionRequired bool   `json:"actionRequired"`
	} `json:"events"`
	NextCursor   *string `json:"nextCursor"`
	LastSequence int64   `json:"lastSequence"`
}

// docketTypes reads the whole docket of a case as the claimant's partner.
func (s *stack) docketTypes(t testing.TB, id string) []string {
	t.Helper()
	rep := s.do(t, http.MethodGet, "/api/cases/"+id+"/events", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	var types []string
	for _, e := range data[docketData](t, rep).Events {
		types = append(types, e.Type)
	}
	return types
}

// newCases is the store of cases as the service runs it by default: 16
// shards, no durable-write confirmation.
func newCases(tb testing.TB, rdb redis.UniversalClient) *store.Cases {
	tb.Helper()
	cases, err := store.NewCases(rdb, outbox.DefaultShards, nil)
	require.NoError(tb, err)
	return cases
}
