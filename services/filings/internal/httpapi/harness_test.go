package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
	"github.com/pcourt/pcourt/services/filings/internal/httpapi"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// stack is the filings service over real Redis and real HTTP.
type stack struct {
	url          string
	routes       gin.RoutesInfo // what Register served, for the matrix
	rdb          redis.UniversalClient
	drafts       *store.Drafts
	credentials  *auth.Store
	orchestrator string
	orchID       string // the orchestrator credential's public id
	// Other callers, all platform orchestrators: partnerB and partnerC are
	// other partners of the orchestrator's tenant (B is given the respondent
	// in the cross-partner drafts, C never takes part); otherTenant is a
	// tenant of its own; live is the orchestrator's partner in the live
	// environment.
	partnerB, partnerBID string
	partnerC             string
	otherTenant          string
	live                 string
	skew                 atomic.Int64 // added to the service's clock, to pass deadlines

	ledger     *localfacilitator.Ledger
	payer      *ecdsa.PrivateKey
	loseSettle atomic.Bool // the facilitator proxy drops /settle answers after settling
	reconciler *filing.FeeReconciler
	payments   *journal.Journal    // the settlement journal fees are paid through
	facClient  *facilitator.Client // the facilitator as services reach it
}

// partnerB is the second partner of the test tenant ("partner-test" is the first).
const partnerB = "partner-b"

const (
	feePayTo = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
	// publicBase is the configured public origin of the API.
	publicBase = "https://api.pcourt.test"
)

func newStack(t testing.TB) *stack {
	t.Helper()
	return newStackOn(t, redistest.NewClient(t))
}

// newStackOn is newStack over a Redis of the test's choosing.
func newStackOn(t testing.TB, rdb redis.UniversalClient) *stack {
	t.Helper()
	return newDurableStackOn(t, rdb, nil)
}

// newDurableStackOn is newStackOn whose opening step waits for durable's
// confirmation, as production runs it.
func newDurableStackOn(t testing.TB, rdb redis.UniversalClient, durable *redisclient.Durable) *stack {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	creds := auth.DefaultStoreConfig()
	// Tests and benchmarks send hundreds of requests with one credential;
	// the pacing itself is tested in libs/auth.
	creds.PerCredential = ratelimit.Off
	s := &stack{rdb: rdb, credentials: auth.NewStore(rdb, creds)}
	var orch auth.Credential
	s.orchestrator, orch = authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator)
	s.orchID = orch.PublicID
	var b auth.Credential
	s.partnerB, b = authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithPartner(partnerB))
	s.partnerBID = b.PublicID
	s.partnerC, _ = authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithPartner("partner-c"))
	s.otherTenant, _ = authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithTenant("tenant-other"))
	s.live, _ = authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithEnvironment(auth.Live))
	version, hash, _ := api.Rules()

	// The local facilitator over real HTTP, behind a proxy that can lose a
	// settle answer after the facilitator settled.
	s.ledger = localfacilitator.NewLedger(rdb)
	fac := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: logger})
	facServer, err := localfacilitator.NewServer(localfacilitator.DefaultConfig(), s.ledger, logger)
	require.NoError(t, err)
	facServer.Register(fac.Router())
	facSrv := httptest.NewServer(fac.Router())
	t.Cleanup(facSrv.Close)
	target, _ := url.Parse(facSrv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path == "/settle" && s.loseSettle.Load() {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	facProxy := httptest.NewServer(proxy)
	t.Cleanup(facProxy.Close)
	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: facProxy.URL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	s.payer, err = crypto.GenerateKey()
	require.NoError(t, err)
	usdc, _ := x402.USDC("eip155:84532")
	require.NoError(t, s.ledger.Fund(context.Background(), "eip155:84532", usdc.Address.Hex(), crypto.PubkeyToAddress(s.payer.PublicKey).Hex(), 1000_000_000))
	s.facClient = client
	s.payments, err = journal.New(journal.Config{Owner: filing.FeeOwner, Lease: 30 * time.Second}, rdb, client, logger)
	require.NoError(t, err)
	base, err := x402.ParsePublicBase(publicBase)
	require.NoError(t, err)
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "filings", Logger: logger, Mapper: httpapi.Problem})
	idempotent, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:filings"), logger)
	require.NoError(t, err)
	drafts, err := store.NewDrafts(rdb, outbox.DefaultShards, durable)
	require.NoError(t, err)
	s.drafts = drafts
	filings := filing.New(filing.Deps{
		Drafts: drafts, Credentials: s.credentials, Payments: s.payments, Logger: logger,
		Fees: filing.FeeConfig{PayTo: feePayTo, MaxTimeoutSeconds: 300, Networks: map[string][]string{
			x402.EnvironmentSandbox: {"eip155:84532"}, x402.EnvironmentLive: {"eip155:8453"},
		}},
		Now: func() time.Time { return time.Now().Add(time.Duration(s.skew.Load())) },
	})
	deps := httpapi.Deps{
		Credentials: s.credentials,
		Filings:     filings,
		Journal:     idempotent,
		Rules:       draft.Rules{Version: version, Hash: hash},
		PublicBase:  base,
		Logger:      logger,
	}
	httpapi.Register(srv.Router(), deps)
	s.routes = srv.Router().Routes()
	s.reconciler = filing.NewFeeReconciler(filings)
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

type reply struct {
	status int
	header http.Header
	body   []byte
	code   string
}

// do sends a request and validates the exchange against the OpenAPI document.
func (s *stack) do(t testing.TB, method, path, token, key string, body any, headers ...string) reply {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
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
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	requireHeaderFits(t, resp)
	rep := reply{status: resp.StatusCode, header: resp.Header, body: raw}
	if resp.StatusCode >= 400 {
		var p struct{ Code string }
		require.NoError(t, json.Unmarshal(raw, &p))
		rep.code = p.Code
	}
	return rep
}

// requireHeaderFits fails the test when resp's header block (status line,
// fields and the empty line, as on HTTP/1.1) reaches 4 KiB: nginx's default
// proxy_buffer_size, also ingress-nginx's, answers 502 "upstream sent too
// big header" beyond it. Every exchange of the harness checks it, the fee's
// x402 challenge included.
func requireHeaderFits(t testing.TB, resp *http.Response) {
	t.Helper()
	dump, err := httputil.DumpResponse(resp, false)
	require.NoError(t, err)
	require.Less(t, len(dump), 4096, "%d answered a header block of %d bytes (PAYMENT-REQUIRED %d)",
		resp.StatusCode, len(dump), len(resp.Header.Get(x402.HeaderPaymentRequired)))
}

var keyCounter = func() *atomic.Int64 {
	var c atomic.Int64
	c.Store(time.Now().UnixNano())
	return &c
}()

// newKey is a fresh Idempotency-Key. The concurrent benchmarks call it from
// many goroutines at once: two equal keys would be a replay, refused as
// idempotency_key_reused.
func newKey() string {
	return fmt.Sprintf("test-key-%d", keyCounter.Add(1))
}

// twoParty is a claimant organization acting through the partner and a
// respondent agent with its immutable agent id; both must confirm.
func twoParty() map[string]any {
	return map[string]any{
		"externalCaseId":     "partner-case-42",
		"caseMode":           "proceeding",
		"intakeMode":         "bilateral_api",
		"confirmationPolicy": map[string]any{"mode": "all_participants"},
		"procedure":          map[string]any{"profile": "standard"},
		"participants": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
			{"participantId": "p-respondent", "side": "respondent", "principalId": "agent-bob", "principalKind": "ai_agent", "agentId": "agent-bob-7", "authorizationMode": "agent_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 125000, "remedy": "money_obligation", "summary": "Goods paid for, never delivered."},
	}
}

// draftData is the part of a draft resource the tests read.
type draftData struct {
	DraftID        string `json:"draftId"`
	ReservedCaseID string `json:"reservedCaseId"`
	Status         string `json:"status"`
	DraftDigest    string `json:"draftDigest"`
	Confirmations  []struct {
		ParticipantID         string `json:"participantId"`
		Required              bool   `json:"required"`
		Status                string `json:"status"`
		ConfirmationStatement string `json:"confirmationStatement"`
	} `json:"confirmations"`
}

func (s *stack) prepare(t testing.TB, body map[string]any) draftData {
	t.Helper()
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), body)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var env struct{ Data draftData }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	return env.Data
}

func (s *stack) read(t testing.TB, path string) (draftData, []byte) {
	t.Helper()
	rep := s.do(t, http.MethodGet, path, s.orchestrator, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	var env struct{ Data draftData }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	return env.Data, rep.body
}

// confirmation is the body that confirms participant p of d, exactly as served.
func confirmation(d draftData, participantID, actorID, principalID string) map[string]any {
	statement := ""
	for _, c := range d.Confirmations {
		if c.ParticipantID == participantID {
			statement = c.ConfirmationStatement
		}
	}
	return map[string]any{
		"participantId": participantID, "draftDigest": d.DraftDigest, "confirmationStatement": statement,
		"actorId": actorID, "principalId": principalID, "confirmationMethod": "protocol_act",
		"confirmationReference": "ref-" + participantID,
	}
}

// readData returns the data member of a draft read, for comparing states.
func (s *stack) readData(t testing.TB, path string) string {
	t.Helper()
	_, raw := s.read(t, path)
	var env struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(raw, &env))
	return string(env.Data)
}

// crossPartner is a bilateral draft whose respondent acts through partnerB:
// the orchestrator's partner acts for the claimant only, partnerB for the
// respondent only. Both confirm with their partner credential.
func crossPartner() map[string]any {
	body := twoParty()
	body["participants"] = []map[string]any{
		{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "partnerId": partnerB, "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "partner_credential"},
	}
	return body
}

// bookkeeping says which keys a refusal may write: the idempotency journal
// (a refusal is journaled as the answer to its key). Everything else
// (drafts, fees, payments, memberships, capabilities) must stay as it was.
func bookkeeping(key string) bool { return strings.Contains(key, ":idem:") }

// unchanged runs act and requires it to leave the Redis state as it was.
func (s *stack) unchanged(t testing.TB, act func()) {
	t.Helper()
	redistest.Unchanged(t, s.rdb, bookkeeping, act)
}
