package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/award"
)

// Cases with account tokens (docs/accounts.md): a participant an
// autonomous-agent account takes part as is acted for by that account's
// own tokens alone, through the membership of its side that names the
// account (filings grants it on the draft and the opening carries it to
// the case), within the token's scopes and, for a token bound to a case,
// that case alone.

const agentAccount = "acct_RESPONDAGENT01"

// accountRespondent makes the respondent the agent's account, which
// confirmed the draft and so takes part from the opening.
func accountRespondent(payload map[string]any) {
	participants := payload["participants"].([]map[string]any)
	participants[1] = map[string]any{"participantId": "p-agent", "side": "respondent", "partnerId": "", "accountId": agentAccount,
		"principalId": "agent:respond", "principalKind": "autonomous_agent", "authorizationMode": "agent_credential", "initiator": false, "joined": true}
	confirmations := payload["confirmations"].([]map[string]any)
	confirmations[1] = map[string]any{"participantId": "p-agent", "side": "respondent", "required": true, "status": "confirmed", "confirmedAt": payload["openedAt"]}
	delete(payload["capabilityHashes"].(map[string]any), "respondent_invite")
	delete(payload["capabilityHashes"].(map[string]any), "respondent_login")
}

// openForAccount opens a case whose respondent is the agent's account and
// grants the account's membership as the opening carries it; edits apply
// to the payload first.
func (s *stack) openForAccount(t *testing.T, edits ...func(map[string]any)) opened {
	t.Helper()
	c := s.open(t, append(edits, accountRespondent)...)
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{
		Resource: "case:" + c.id, Side: auth.Respondent, Subject: auth.AccountSubject(agentAccount), ExpiresAt: time.Now().Add(time.Hour),
	}))
	return c
}

func (s *stack) accountToken(t *testing.T, scopes []auth.Scope, opts ...func(*auth.AccountTokenRequest)) string {
	t.Helper()
	token, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase(t).String(), scopes, opts...)
	return token
}

func TestAnAgentsAccountReadsAndActsOnItsCase(t *testing.T) {
	s := newStack(t)
	c := s.openForAccount(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})

	rep := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id, token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Contains(t, string(rep.body), `"accountId":"`+agentAccount+`"`)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/participants", token, "", nil).status)

	// A token bound to this case works on it.
	bound := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead}, func(r *auth.AccountTokenRequest) { r.CaseID = c.id })
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id, bound, "", nil).status)

	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/answer", token, newKey(), map[string]any{"text": "Denied: the service was rendered."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
}

// Every refusal is a problem and changes nothing.
func TestAccountTokensAreRefusedOnCasesTheyHaveNoAuthorityOver(t *testing.T) {
	s := newStack(t)
	c := s.openForAccount(t)
	other := s.openForAccount(t)
	readOnly := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead})
	actOnly := s.accountToken(t, []auth.Scope{auth.ScopeCasesAct})
	boundElsewhere := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct}, func(r *auth.AccountTokenRequest) { r.CaseID = other.id })
	otherAudience := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead}, func(r *auth.AccountTokenRequest) { r.Audience = "https://mcp.pcourt.test" })
	otherTenant := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead}, func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" })
	stranger, _ := authtest.MintAccountToken(t, s.credentials, "acct_STRANGER03", publicBase(t).String(), []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	answer := map[string]any{"text": "Denied."}
	casePath := "/api/v2/cases/" + c.id

	for _, tt := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"reading without cases:read", http.MethodGet, casePath, actOnly, nil, http.StatusForbidden, "forbidden"},
		{"answering without cases:act", http.MethodPost, casePath + "/answer", readOnly, answer, http.StatusForbidden, "forbidden"},
		{"another account", http.MethodGet, casePath, stranger, nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"another account answering", http.MethodPost, casePath + "/answer", stranger, answer, http.StatusNotFound, "case_not_found_or_opening"},
		{"a token bound to another case", http.MethodGet, casePath, boundElsewhere, nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"a token for another resource", http.MethodGet, casePath, otherAudience, nil, http.StatusUnauthorized, "invalid_credential"},
		{"the same account id in another tenant", http.MethodGet, casePath, otherTenant, nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"the claimant's partner answering for the account", http.MethodPost, casePath + "/answer", s.claimant, answer, http.StatusForbidden, "forbidden"},
		{"a route that takes no account tokens", http.MethodPost, "/api/cases/" + c.id + "/invitations", readOnly, nil, http.StatusForbidden, "forbidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, tt.method, tt.path, tt.token, newKey(), tt.body)
				require.Equal(t, tt.status, rep.status, string(rep.body))
				require.Equal(t, tt.code, rep.code, string(rep.body))
			})
		})
	}

	// Without its membership the account no longer sees the case.
	require.NoError(t, s.credentials.RevokeMembership(context.Background(), "case:"+c.id, auth.AccountSubject(agentAccount)))
	rep := s.do(t, http.MethodGet, casePath, readOnly, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
}

// Reporting an execution needs the executions:report scope, which no
// other scope implies: without it the route refuses the token before
// anything is read; with it the act reaches the after-award rules (this
// case has no award yet).
func TestReportingAnExecutionNeedsTheExecutionsReportScope(t *testing.T) {
	s := newStack(t)
	c := s.openForAccount(t)
	report := map[string]any{"mode": "party_reported", "action": "report", "awardHash": strings.Repeat("a", 64), "remedyIndex": 0, "reference": "wire 1"}
	path := "/api/cases/" + c.id + "/executions"

	without := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy})
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, without, newKey(), report)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, `Bearer realm="pcourt", error="insufficient_scope", scope="executions:report"`, rep.header.Get("WWW-Authenticate"))
	})

	with := s.accountToken(t, []auth.Scope{auth.ScopeExecutionsReport})
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, with, newKey(), report)
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "award_not_issued", rep.code)
	})
}

// A case an account filed for itself: no filing partner, the claimant the
// account's; the account reads it, the respondent's partner too, the
// partner that filed nothing does not.
func TestACaseAnAccountFiledIsItsAndTheRespondents(t *testing.T) {
	s := newStack(t)
	c := s.open(t, func(payload map[string]any) {
		payload["partnerId"] = ""
		participants := payload["participants"].([]map[string]any)
		participants[0] = map[string]any{"participantId": "p-agent", "side": "claimant", "partnerId": "", "accountId": agentAccount,
			"principalId": "agent:claims", "principalKind": "autonomous_agent", "authorizationMode": "agent_credential", "initiator": true, "joined": true}
		payload["confirmations"].([]map[string]any)[0]["participantId"] = "p-agent"
	})
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{
		Resource: "case:" + c.id, Side: auth.Claimant, Subject: auth.AccountSubject(agentAccount), ExpiresAt: time.Now().Add(time.Hour),
	}))
	rep := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id, s.accountToken(t, []auth.Scope{auth.ScopeCasesRead}), "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id, s.respondent, "", nil).status)
	require.Equal(t, http.StatusNotFound, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id, s.claimant, "", nil).status)
}

// refusedScope requires token, an account token of the case's account
// without scope, to be refused with RFC 6750's challenge naming it, and
// the refusal to change nothing.
func (s *stack) refusedScope(t *testing.T, method, path, token string, body any, scope auth.Scope) {
	t.Helper()
	s.unchanged(t, func() {
		rep := s.do(t, method, path, token, newKey(), body)
		require.Equal(t, http.StatusForbidden, rep.status, "%s %s: %s", method, path, rep.body)
		require.Equal(t, "forbidden", rep.code)
		require.Equal(t, `Bearer realm="pcourt", error="insufficient_scope", scope="`+string(scope)+`"`, rep.header.Get("WWW-Authenticate"))
	})
}

// invisible requires the case path names to be, to every account token
// that may not see it though it carries every scope, the 404 of a case
// that does not exist, and the answer to change nothing: another account,
// the agent's own token bound to another of its cases, the agent's
// account id in another tenant and in the live environment.
func (s *stack) invisible(t *testing.T, method, path string, body any) {
	t.Helper()
	all := []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport}
	other := s.openForAccount(t)
	stranger, _ := authtest.MintAccountToken(t, s.credentials, "acct_STRANGER03", publicBase(t).String(), all)
	for name, token := range map[string]string{
		"another account":          stranger,
		"a token bound to another": s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.CaseID = other.id }),
		"another tenant":           s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" }),
		"the live environment":     s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Environment = auth.Live }),
	} {
		s.unchanged(t, func() {
			rep := s.do(t, method, path, token, newKey(), body)
			require.Equal(t, http.StatusNotFound, rep.status, "%s, %s %s: %s", name, method, path, rep.body)
			require.Equal(t, "case_not_found_or_opening", rep.code, name)
		})
	}
}

// accountReviewing walks a quick case (quickProceeding, or
// evaluationCase) whose respondent is the agent's account to the
// reviewer's attested agreement with the adjudicator's proposal, the
// pre-award review not open yet: the account answers, files and confirms
// the record for its side with token, and the scheduler assigns the
// tribunal. The adjudicator partly upholds a proceeding's claim (300.00
// USD from the respondent) and finds an evaluation's key not provisioned.
func (s *stack) accountReviewing(t *testing.T, token string, kind func(map[string]any)) opened {
	t.Helper()
	c := s.openForAccount(t, kind)
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	base := "/api/cases/" + c.id
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{base + "/answer", token, map[string]any{"text": "Denied: the API was provisioned on day one."}},
		{base + "/submissions", s.claimant, map[string]any{"text": "Invoice 77 and twelve support tickets saying the key never worked."}},
		{base + "/submissions", token, map[string]any{"text": "Provisioning log: key issued 2026-10-01."}},
		{base + "/record-summary/confirmations", s.claimant, nil},
		{base + "/record-summary/confirmations", token, nil},
	} {
		rep := s.do(t, http.MethodPost, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	_, err = s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)

	w := "/api/disputes/" + c.id + "/"
	pkg := data[struct {
		reviewPackageData
		CaseMode string `json:"caseMode"`
	}](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil))
	item := pkg.Record.Items[1]
	proposal := map[string]any{
		"outcome":   "claim_partially_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 30000, "currency": "USD", "dueBy": dueIn(30 * 24 * time.Hour)}},
		"reasons":   "The key never worked for most of the term.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest, "pinpoint": "tickets"}},
	}
	if pkg.CaseMode == "evaluation" {
		proposal["outcome"], proposal["remedies"] = "not_provisioned", []any{}
	}
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{"synthesize-opinion", s.adjudicator, map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal}},
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
	} {
		rep := s.do(t, http.MethodPost, w+st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	return c
}

type preAwardData struct {
	DispositiveDigest string `json:"dispositiveDigest"`
	Outcome           string `json:"outcome"`
	Answers           []struct {
		Side           string   `json:"side"`
		ClericalErrors []string `json:"clericalErrors"`
	} `json:"answers"`
}

// The pre-award review is the reviewer's to open and the sides' to
// answer, on one route: an account token reads it with cases:read and
// answers for its own side with cases:act, and is never the reviewer.
// What opens the review when the reviewer sends it is, from the account,
// a side's answer, refused before the review is open; none of its
// refusals changes anything.
func TestAnAgentsAccountAnswersThePreAwardReviewAndOpensNothing(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	c := s.accountReviewing(t, token, quickProceeding)
	review := "/api/disputes/" + c.id + "/pre-award-review"
	none := map[string]any{"clericalErrors": []string{}}

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, review, token, newKey(), nil)
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_tribunal_act", rep.code, "the reviewer's opening request, from an account, is an answer without clericalErrors")
		rep = s.do(t, http.MethodPost, review, token, newKey(), none)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "decision_stage_closed", rep.code, "nothing to answer before the reviewer opens it")
		rep = s.do(t, http.MethodGet, review, token, "", nil)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "decision_stage_closed", rep.code, "still not open")
		rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/signoff", token, newKey(), nil)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code, "sign-off takes no account tokens")
	})

	// Even a token whose record named a tribunal role (no issuer writes
	// one) is its account's, not the tribunal's: its request is a side's
	// answer, not the reviewer's opening.
	forged, cred := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase(t).String(), []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	require.NoError(t, s.rdb.HSet(context.Background(), "pc:auth:cred:"+cred.PublicID, "role", string(auth.RoleReviewer)).Err())
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, review, forged, newKey(), nil)
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_tribunal_act", rep.code)
	})

	rep := s.do(t, http.MethodPost, review, s.reviewer, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	rep = s.do(t, http.MethodGet, review, token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	shown := data[preAwardData](t, rep)
	require.Equal(t, "claim_partially_upheld", shown.Outcome, "the account sees the dispositive part")
	require.NotEmpty(t, shown.DispositiveDigest)
	require.Empty(t, shown.Answers)

	readOnly := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead})
	actOnly := s.accountToken(t, []auth.Scope{auth.ScopeCasesAct})
	s.refusedScope(t, http.MethodGet, review, actOnly, nil, auth.ScopeCasesRead)
	s.refusedScope(t, http.MethodPost, review, readOnly, none, auth.ScopeCasesAct)
	s.invisible(t, http.MethodGet, review, nil)
	s.invisible(t, http.MethodPost, review, none)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, review, s.claimant, newKey(), map[string]any{"participantId": "p-agent", "clericalErrors": []string{}})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code, "the claimant's partner answers for no account")
	})

	rep = s.do(t, http.MethodPost, review, token, newKey(), map[string]any{"clericalErrors": []string{"the due date is a Sunday"}})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, review, token, newKey(), none)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "already_answered", rep.code, "its side answered")
	})
	shown = data[preAwardData](t, s.do(t, http.MethodGet, review, s.claimant, "", nil))
	require.Len(t, shown.Answers, 1)
	require.Equal(t, "respondent", shown.Answers[0].Side, "the account answered for the side its membership names")
	require.Equal(t, []string{"the due date is a Sunday"}, shown.Answers[0].ClericalErrors)
}

// accountSigned takes accountReviewing's case c to its sign-off: the
// reviewer opens the pre-award review, both sides answer it (the account
// with token), the reviewer signs. It returns the award's hash, "" for an
// evaluation, which the sign-off issues for the sides' acceptance.
func (s *stack) accountSigned(t *testing.T, c opened, token string) string {
	t.Helper()
	w := "/api/disputes/" + c.id + "/"
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", token, map[string]any{"clericalErrors": []string{}}},
		{"signoff", s.reviewer, nil},
	} {
		rep := s.do(t, http.MethodPost, w+st.path, st.token, newKey(), st.body)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", st.path, rep.body)
	}
	return data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)).AwardHash
}

// The account follows its decision with cases:read: where it stands, and
// once the reviewer signs, the award, each of its artifacts on both route
// families, byte for byte what the claimant's partner reads, and the
// attestation, which verifies against the award keys alone.
func TestAnAgentsAccountReadsItsDecisionAndItsAward(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	c := s.accountReviewing(t, token, quickProceeding)

	rep := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	st := data[decisionData](t, rep)
	require.Equal(t, "review", st.Stage)
	require.Equal(t, s.reviewerID, st.Tribunal.Reviewer.MemberID, "the account sees who decides")
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", token, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
	require.Equal(t, "award_not_issued", rep.code)
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/evaluation", token, "", nil)
	require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
	require.Equal(t, "not_an_evaluation", rep.code, "the account sees the case, which is a proceeding")

	hash := s.accountSigned(t, c, token)
	require.NotEmpty(t, hash)
	st = data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", token, "", nil))
	require.Equal(t, "awarded", st.Decision)
	require.Equal(t, hash, st.AwardHash)
	w := "/api/disputes/" + c.id + "/"
	type awardData struct {
		AwardHash string `json:"awardHash"`
		Outcome   string `json:"outcome"`
	}
	for _, path := range []string{"/api/cases/" + c.id + "/award", "/api/v2/cases/" + c.id + "/award", w + "decision"} {
		rep := s.do(t, http.MethodGet, path, token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", path, rep.body)
		a := data[awardData](t, rep)
		require.Equal(t, st.AwardHash, a.AwardHash, path)
		require.Equal(t, "claim_partially_upheld", a.Outcome, path)
	}
	keys := s.raw(t, "/api/awards/keys", "")
	for _, base := range []string{"/api/cases/" + c.id, "/api/v2/cases/" + c.id} {
		for _, kind := range []string{"json", "html", "pdf"} {
			path := base + "/award/artifacts/" + kind
			rep := s.do(t, http.MethodGet, path, token, "", nil)
			require.Equal(t, http.StatusOK, rep.status, "%s: %s", path, rep.body)
			require.Equal(t, s.raw(t, path, s.claimant), rep.body, "%s: the claimant's partner's bytes", path)
		}
		raw := s.do(t, http.MethodGet, base+"/award/artifacts/json", token, "", nil).body
		require.Equal(t, st.AwardHash, award.Hash(raw))
		rep := s.do(t, http.MethodGet, base+"/award/artifacts/json/attestation", token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		verified, err := award.Verify(raw, string(rep.body), keys)
		require.NoError(t, err)
		require.Equal(t, st.AwardHash, verified.AwardHash)
	}

	reads := []string{
		"/api/v2/cases/" + c.id + "/decision-status",
		"/api/cases/" + c.id + "/evaluation",
		"/api/v2/cases/" + c.id + "/evaluation",
		"/api/cases/" + c.id + "/award",
		"/api/v2/cases/" + c.id + "/award",
		"/api/cases/" + c.id + "/award/artifacts/json",
		"/api/v2/cases/" + c.id + "/award/artifacts/pdf",
		"/api/cases/" + c.id + "/award/artifacts/json/attestation",
		"/api/v2/cases/" + c.id + "/award/artifacts/json/attestation",
		w + "decision",
	}
	actOnly := s.accountToken(t, []auth.Scope{auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport})
	for _, path := range reads {
		s.refusedScope(t, http.MethodGet, path, actOnly, nil, auth.ScopeCasesRead)
		s.invisible(t, http.MethodGet, path, nil)
	}
}

// Past the award: the account waives its side's recourse with cases:act
// (the website's consent), the claimant's partner waives its own, and the
// award is final; the account then reports that its side paid, with
// executions:report. Nobody else consents for the account.
func TestAnAgentsAccountConsentsToItsAwardAndReportsItsPayment(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	c := s.accountReviewing(t, token, quickProceeding)
	hash := s.accountSigned(t, c, token)
	consent := "/api/disputes/" + c.id + "/consent"

	s.refusedScope(t, http.MethodPost, consent, s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeExecutionsReport}), nil, auth.ScopeCasesAct)
	s.invisible(t, http.MethodPost, consent, nil)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, consent, s.claimant, newKey(), map[string]any{"participantId": "p-agent"})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code, "the claimant's partner consents for no account")
	})

	rep := s.do(t, http.MethodPost, consent, token, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	v := data[struct {
		postAwardData
		Waivers []struct {
			Side string `json:"side"`
		} `json:"waivers"`
	}](t, rep)
	require.False(t, v.Final, "the claimant has not waived yet")
	require.Len(t, v.Waivers, 1)
	require.Equal(t, "respondent", v.Waivers[0].Side, "the account waived for the side its membership names")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, consent, token, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "recourse_waived", rep.code)
	})
	rep = s.do(t, http.MethodPost, consent, s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	st := data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", token, "", nil))
	require.True(t, st.Final, "both sides waived")
	require.Equal(t, hash, st.AwardHash)

	reporter := s.accountToken(t, []auth.Scope{auth.ScopeExecutionsReport})
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/executions", reporter, newKey(),
		map[string]any{"mode": "party_reported", "action": "report", "awardHash": hash, "remedyIndex": 0, "reference": "wire 2026-12-04/0007"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "completed", data[executionData](t, rep).Status)
}

// An evaluation the reviewer signed is the award once both sides accept
// it: the account reads it and accepts for its side with cases:act, on
// either family.
func TestAnAgentsAccountAcceptsItsEvaluation(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	c := s.accountReviewing(t, token, evaluationCase)
	require.Empty(t, s.accountSigned(t, c, token), "an evaluation is issued for acceptance, not awarded")

	type evaluationData struct {
		Status      string `json:"status"`
		Outcome     string `json:"outcome"`
		AwardHash   string `json:"awardHash"`
		Acceptances []struct {
			Side string `json:"side"`
		} `json:"acceptances"`
	}
	ev := data[evaluationData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/evaluation", token, "", nil))
	require.Equal(t, "issued", ev.Status)
	require.Equal(t, "not_provisioned", ev.Outcome)

	for _, accept := range []string{"/api/cases/" + c.id + "/evaluation/accept", "/api/v2/cases/" + c.id + "/evaluation/accept"} {
		s.refusedScope(t, http.MethodPost, accept, s.accountToken(t, []auth.Scope{auth.ScopeCasesRead}), nil, auth.ScopeCasesAct)
		s.invisible(t, http.MethodPost, accept, nil)
	}
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/evaluation/accept", s.claimant, newKey(), map[string]any{"participantId": "p-agent"})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code, "the claimant's partner accepts for no account")
	})

	rep := s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evaluation/accept", token, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	ev = data[evaluationData](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/evaluation", token, "", nil))
	require.Len(t, ev.Acceptances, 1)
	require.Equal(t, "respondent", ev.Acceptances[0].Side)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/evaluation/accept", token, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "already_answered", rep.code)
	})
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/cases/"+c.id+"/evaluation/accept", s.claimant, newKey(), nil).status)

	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/award", token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "evaluation", data[struct {
		CaseMode string `json:"caseMode"`
	}](t, rep).CaseMode)
}

// What an account token does not do: the tribunal's acts and views, and
// after the award anything but consenting and reporting its payment
// (post-award requests, appeals, settlements). A token carrying every
// scope, of the case's own account, is refused 403 before anything is
// read, and nothing changes.
func TestTheTribunalsRoutesAndTheOtherAfterAwardActsRefuseAccountTokens(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	c := s.accountReviewing(t, token, quickProceeding)
	require.NotEmpty(t, s.accountSigned(t, c, token))
	every := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport})
	base, w := "/api/cases/"+c.id, "/api/disputes/"+c.id+"/"
	request := map[string]any{"kind": "correction", "text": "The amount should read 250.00."}

	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, w + "review-package", nil},
		{http.MethodPost, w + "adjudicate", nil},
		{http.MethodPost, w + "reviewer-opinion", map[string]any{"opinion": "agree"}},
		{http.MethodPost, w + "override", nil},
		{http.MethodPost, w + "signoff", nil},
		{http.MethodPost, w + "recusal", map[string]any{"reason": "none"}},
		{http.MethodPost, w + "procedural-rulings", map[string]any{"text": "The account rules."}},
		{http.MethodPatch, base + "/ai-configuration-challenges", map[string]any{"challengeId": "ch-1", "decision": "upheld", "reasons": "r"}},
		{http.MethodPost, base + "/post-award-requests", request},
		{http.MethodPatch, base + "/post-award-requests", map[string]any{"requestId": "par-1", "decision": "grant", "reasons": "r"}},
		{http.MethodPost, w + "correct", map[string]any{"text": "x"}},
		{http.MethodPost, base + "/appeals", map[string]any{"grounds": "The tickets were misread."}},
		{http.MethodPost, w + "appeal", map[string]any{"grounds": "The tickets were misread."}},
		{http.MethodPost, base + "/settlement-binding", map[string]any{"action": "propose"}},
	} {
		t.Run(tt.method+" "+strings.TrimPrefix(tt.path, "/api/"), func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, tt.method, tt.path, every, newKey(), tt.body)
				require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
				require.Equal(t, "forbidden", rep.code, string(rep.body))
				require.Empty(t, rep.header.Get("WWW-Authenticate"), "no scope would help")
			})
		})
	}
}
