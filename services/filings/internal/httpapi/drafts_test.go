package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/filings/internal/events"
)

type opened struct {
	Data struct {
		SchemaVersion string `json:"schemaVersion"`
		CaseID        string `json:"caseId"`
		Status        string `json:"status"`
		Headless      struct {
			CapabilityDelivery string `json:"capabilityDelivery"`
		} `json:"headless"`
		ShowOnce *struct {
			ClaimantPartyToken    string `json:"claimantPartyToken"`
			RespondentInviteToken string `json:"respondentInviteToken"`
			RespondentLoginPath   string `json:"respondentLoginPath"`
		} `json:"showOnce"`
	} `json:"data"`
}

func outboxLength(t testing.TB, s *stack) int64 {
	var n int64
	for _, stream := range s.drafts.Sharding().Streams() {
		l, err := s.rdb.XLen(context.Background(), stream).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

func respondentAgent(t testing.TB, s *stack, draftID string) string {
	token, cred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithAgent("agent-bob-7"))
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{Resource: "draft:" + draftID, Side: auth.Respondent, Subject: auth.CredentialSubject(cred.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))
	return token
}

func TestTwoPartyDraftFromPreparationToOpenedCase(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := newStackOn(t, rdb)
		d := s.prepare(t, twoParty())
		require.Equal(t, "awaiting_confirmations", d.Status)
		require.Regexp(t, `^[0-9a-f]{64}$`, d.DraftDigest)

		v2, _ := s.read(t, "/api/v2/case-drafts/"+d.DraftID)
		canonical, raw := s.read(t, "/api/filings/"+d.DraftID)
		require.Equal(t, d.DraftDigest, v2.DraftDigest)
		require.Equal(t, v2.DraftDigest, canonical.DraftDigest, "both views carry the same digest")
		require.Contains(t, string(raw), `"principalKind":"autonomous_agent"`, "the canonical view adds public principal kinds")
		require.Contains(t, string(raw), `"schedule":{`, "and separates the schedule from the procedure")

		claimantKey := newKey()
		first := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, claimantKey,
			confirmation(d, "p-claimant", s.orchID, "org-acme"))
		require.Equal(t, http.StatusAccepted, first.status, string(first.body))
		require.Contains(t, string(first.body), `"status":"awaiting_confirmations"`)
		require.Zero(t, outboxLength(t, s))

		agent := respondentAgent(t, s, d.DraftID)
		respondentKey := newKey()
		last := s.do(t, http.MethodPost, "/api/filings/"+d.DraftID+"/confirmations", agent, respondentKey,
			confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"))
		require.Equal(t, http.StatusCreated, last.status, string(last.body))
		var o opened
		require.NoError(t, json.Unmarshal(last.body, &o))
		require.Equal(t, "confirmed-filing-v2", o.Data.SchemaVersion)
		require.Equal(t, d.ReservedCaseID, o.Data.CaseID)
		require.Equal(t, "show_once_not_replayed", o.Data.Headless.CapabilityDelivery)
		require.NotNil(t, o.Data.ShowOnce, "the first answer shows its secrets once")
		require.Equal(t, struct{ ClaimantPartyToken, RespondentInviteToken, RespondentLoginPath string }{}, struct{ ClaimantPartyToken, RespondentInviteToken, RespondentLoginPath string }(*o.Data.ShowOnce),
			"both sides confirmed and the respondent has an agent: no invitation, no hosted login, no claimant packet without an acceptance identity")
		require.Equal(t, int64(1), outboxLength(t, s), "one case-opened event")
		var fact events.CaseOpened
		require.NoError(t, json.Unmarshal(caseOpenedFacts(t, s)[d.ReservedCaseID], &fact))
		require.Empty(t, fact.CapabilityHashes)

		// Replays return the stored status; the 201 replay has no showOnce.
		replay := s.do(t, http.MethodPost, "/api/filings/"+d.DraftID+"/confirmations", agent, respondentKey,
			confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"))
		require.Equal(t, http.StatusCreated, replay.status)
		var r opened
		require.NoError(t, json.Unmarshal(replay.body, &r))
		require.Nil(t, r.Data.ShowOnce)
		require.Equal(t, d.ReservedCaseID, r.Data.CaseID)
		again := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, claimantKey,
			confirmation(d, "p-claimant", s.orchID, "org-acme"))
		require.Equal(t, http.StatusAccepted, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))

		after, _ := s.read(t, "/api/v2/case-drafts/"+d.DraftID)
		require.Equal(t, "opened", after.Status)
		require.Equal(t, int64(1), outboxLength(t, s))
	})
}

// N required participants confirmed by N concurrent clients: exactly one
// 201, N−1 202, one case and one event — fifty times over.
func TestConcurrentConfirmationsOpenTheCaseOnce(t *testing.T) {
	s := newStack(t)
	const n, rounds = 3, 50
	body := twoParty()
	body["participants"] = []map[string]any{
		{"participantId": "p-1", "side": "claimant", "principalId": "org-a", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-2", "side": "respondent", "principalId": "org-b", "principalKind": "organization", "authorizationMode": "partner_credential"},
		{"participantId": "p-3", "side": "respondent", "principalId": "org-c", "principalKind": "organization", "authorizationMode": "partner_credential"},
	}
	principals := map[string]string{"p-1": "org-a", "p-2": "org-b", "p-3": "org-c"}
	for round := range rounds {
		d := s.prepare(t, body)
		statuses := make([]int, n)
		keys := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			keys[i] = newKey()
			wg.Go(func() {
				p := "p-" + string(rune('1'+i))
				statuses[i] = s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, keys[i],
					confirmation(d, p, s.orchID, principals[p])).status
			})
		}
		wg.Wait()
		created, accepted := 0, 0
		for _, st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusAccepted:
				accepted++
			}
		}
		require.Equal(t, 1, created, "round %d: %v", round, statuses)
		require.Equal(t, n-1, accepted, "round %d: %v", round, statuses)
		require.Equal(t, int64(round+1), outboxLength(t, s), "one event per case")

		// Each request's replay returns its own stored status.
		for i := range n {
			p := "p-" + string(rune('1'+i))
			rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, keys[i],
				confirmation(d, p, s.orchID, principals[p]))
			require.Equal(t, statuses[i], rep.status)
			require.NotContains(t, string(rep.body), "showOnce")
		}
	}
}

func TestLegacyPairFinishesOnItsOwnRoutes(t *testing.T) {
	s := newStack(t)
	rep := s.do(t, http.MethodPost, "/api/v2/filings/prepare", s.orchestrator, newKey(), twoParty())
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var env struct{ Data draftData }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	d := env.Data

	wrong := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(),
		confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusConflict, wrong.status)
	require.Equal(t, "wrong_route_family", wrong.code)
	require.Contains(t, string(wrong.body), "/api/v2/filings/"+d.DraftID+"/confirm", "the problem names the right route")

	ok := s.do(t, http.MethodPost, "/api/v2/filings/"+d.DraftID+"/confirm", s.orchestrator, newKey(),
		confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusAccepted, ok.status, string(ok.body))
}

func TestCanonicalPreparationRequiresClaimantAcceptanceIdentity(t *testing.T) {
	s := newStack(t)
	body := twoParty()
	body["schedule"] = body["procedure"]
	delete(body, "procedure")
	for _, p := range body["participants"].([]map[string]any) {
		if p["principalKind"] == "ai_agent" {
			p["principalKind"] = "autonomous_agent"
		}
	}
	rep := s.do(t, http.MethodPost, "/api/filings", s.orchestrator, newKey(), body)
	require.Equal(t, http.StatusBadRequest, rep.status)
	require.Equal(t, "invalid_draft", rep.code)
	require.Contains(t, string(rep.body), "claimantAcceptanceIdentity")

	body["claimantAcceptanceIdentity"] = "claims@acme.example"
	rep = s.do(t, http.MethodPost, "/api/filings", s.orchestrator, newKey(), body)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
}

// Every refusal has its status and code and leaves the draft as it was.
func TestConfirmationRefusals(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	path := "/api/v2/case-drafts/" + d.DraftID + "/confirmations"
	good := confirmation(d, "p-claimant", s.orchID, "org-acme")
	with := func(field, value string) map[string]any {
		b := confirmation(d, "p-claimant", s.orchID, "org-acme")
		b[field] = value
		return b
	}
	stranger, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithAgent("agent-bob-7"))
	otherTenant, _ := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithTenant("tenant-other"))
	reusedKey := newKey()

	type refusal struct {
		name   string
		path   string
		token  string
		key    string
		body   any
		status int
		code   string
	}
	check := func(t *testing.T, tc refusal) {
		before := s.readData(t, "/api/v2/case-drafts/"+d.DraftID)
		rep := s.do(t, http.MethodPost, tc.path, tc.token, tc.key, tc.body)
		require.Equal(t, tc.status, rep.status, string(rep.body))
		require.Equal(t, tc.code, rep.code)
		require.JSONEq(t, before, s.readData(t, "/api/v2/case-drafts/"+d.DraftID), "draft unchanged")
	}
	for _, tc := range []refusal{
		{"unknown draft", "/api/v2/case-drafts/dr_nope/confirmations", s.orchestrator, newKey(), good, 404, "draft_not_found"},
		{"another tenant's draft", path, otherTenant, newKey(), good, 404, "draft_not_found"},
		{"digest mismatch", path, s.orchestrator, reusedKey, with("draftDigest", strings.Repeat("0", 64)), 409, "digest_mismatch"},
		{"key reused for another body", path, s.orchestrator, reusedKey, good, 422, "idempotency_key_reused"},
		{"statement reworded", path, s.orchestrator, newKey(), with("confirmationStatement", "I agree."), 422, "statement_mismatch"},
		{"actor mismatch", path, s.orchestrator, newKey(), with("actorId", "cred_someone_else"), 403, "actor_mismatch"},
		{"principal mismatch", path, s.orchestrator, newKey(), with("principalId", "org-evil"), 403, "principal_mismatch"},
		{"not a participant", path, s.orchestrator, newKey(), with("participantId", "p-nobody"), 422, "not_a_participant"},
		{"not protocol_act", path, s.orchestrator, newKey(), with("confirmationMethod", "email"), 400, "invalid_confirmation"},
		{"agent without membership", path, stranger, newKey(), confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"), 403, "forbidden"},
		{"no Idempotency-Key", path, s.orchestrator, "", good, 400, "idempotency_key_missing"},
		{"short Idempotency-Key", path, s.orchestrator, "short", good, 400, "idempotency_key_invalid"},
		{"unauthenticated", path, "", newKey(), good, 401, "unauthenticated"},
		{"unknown field", path, s.orchestrator, newKey(), []byte(`{"participantId":"p-claimant","extra":1}`), 400, "unknown_field"},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, tc) })
	}

	goodKey := newKey()
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, path, s.orchestrator, goodKey, good).status)
	t.Run("already confirmed", func(t *testing.T) {
		check(t, refusal{"already confirmed", path, s.orchestrator, newKey(), good, 409, "already_confirmed"})
	})

	// Past its expiry the draft refuses confirmations, and replays too.
	s.skew.Store(int64(73 * time.Hour))
	agent := respondentAgent(t, s, d.DraftID)
	rep := s.do(t, http.MethodPost, path, agent, newKey(), confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"))
	require.Equal(t, http.StatusGone, rep.status, string(rep.body))
	require.Equal(t, "draft_expired", rep.code)
	replay := s.do(t, http.MethodPost, path, s.orchestrator, goodKey, good)
	require.Equal(t, http.StatusGone, replay.status, "deadlines are rechecked on replay")
}

func TestRevokedCredentialCannotReplay(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	token, cred := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator)
	key := newKey()
	body := confirmation(d, "p-claimant", cred.PublicID, "org-acme")
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", token, key, body).status)
	require.NoError(t, s.credentials.Revoke(context.Background(), cred.PublicID))
	fresh := auth.NewStore(s.rdb, auth.DefaultStoreConfig())
	_, err := fresh.Authenticate(context.Background(), token)
	require.ErrorIs(t, err, auth.ErrInvalidCredential)
	require.Eventually(t, func() bool {
		return s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", token, key, body).status == http.StatusUnauthorized
	}, 5*time.Second, 50*time.Millisecond, "a revoked credential gets its problem, not the stored result")
}

// The v2 and canonical confirmation routes share one journal: a retry may
// cross from one to the other and gets the stored answer.
func TestRetryCrossesRouteFamilies(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	key := newKey()
	body := confirmation(d, "p-claimant", s.orchID, "org-acme")
	first := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, key, body)
	require.Equal(t, http.StatusAccepted, first.status)
	again := s.do(t, http.MethodPost, "/api/filings/"+d.DraftID+"/confirmations", s.orchestrator, key, body)
	require.Equal(t, http.StatusAccepted, again.status)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
}

// An agent with no membership of its side acts with the per-case capability.
func TestCapabilityHeaderStandsInForMembership(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	token, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithAgent("agent-bob-7"))
	capability, err := s.credentials.MintCapability(context.Background(), auth.Capability{
		Resource: "draft:" + d.DraftID, Side: auth.Respondent, Purpose: "respondent_invite", ExpiresAt: time.Now().Add(time.Hour),
	})
	require.NoError(t, err)
	body := confirmation(d, "p-respondent", "agent-bob-7", "agent-bob")
	path := "/api/v2/case-drafts/" + d.DraftID + "/confirmations"
	require.Equal(t, http.StatusForbidden, s.do(t, http.MethodPost, path, token, newKey(), body).status)
	rep := s.do(t, http.MethodPost, path, token, newKey(), body, "X-PC-Case-Capability", capability)
	require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
}

// Under initiator_only only the initiating claimant confirms, and that
// opens the case; anyone else's confirmation is not required.
func TestInitiatorOnlyPolicy(t *testing.T) {
	s := newStack(t)
	body := twoParty()
	body["intakeMode"] = "claimant_initiated"
	body["confirmationPolicy"] = map[string]any{"mode": "initiator_only"}
	d := s.prepare(t, body)
	path := "/api/v2/case-drafts/" + d.DraftID + "/confirmations"
	rep := s.do(t, http.MethodPost, path, respondentAgent(t, s, d.DraftID), newKey(), confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"))
	require.Equal(t, http.StatusConflict, rep.status)
	require.Equal(t, "not_required", rep.code)
	rep = s.do(t, http.MethodPost, path, s.orchestrator, newKey(), confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Contains(t, string(rep.body), `"hostedRespondentPath"`, "the respondent accepts on the hosted page")
}
