package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
)

// settlementData is the part of a settlement binding the tests read.
type settlementData struct {
	CaseID     string `json:"caseId"`
	CaseStatus string `json:"caseStatus"`
	Stage      string `json:"stage"`
	Proposals  []struct {
		ProposalID  string      `json:"proposalId"`
		Side        string      `json:"side"`
		Terms       award.Terms `json:"terms"`
		TermsDigest string      `json:"termsDigest"`
		Status      string      `json:"status"`
		AcceptedBy  string      `json:"acceptedBy"`
	} `json:"proposals"`
	AgreedAt   string `json:"agreedAt"`
	RecordedAt string `json:"recordedAt"`
	AwardHash  string `json:"awardHash"`
	ProposalID string `json:"proposalId"`
	Events     []struct {
		Type string `json:"type"`
	} `json:"events"`
}

func (d settlementData) eventTypes() []string {
	var out []string
	for _, e := range d.Events {
		out = append(out, e.Type)
	}
	return out
}

// settlementTerms are what the respondent offers on the quick proceeding
// (a claim of USD 420.00): 250.00 back, and the claimant returns the keys.
func settlementTerms() award.Terms {
	return award.Terms{
		Remedies: []award.Remedy{
			{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 25000, Currency: "USD", DueBy: dueIn(14 * 24 * time.Hour)},
			{Kind: award.RemedyPerformance, Obligor: "claimant", Description: "Return the two unused API keys.", DueBy: dueIn(14 * 24 * time.Hour)},
		},
		Text: "The respondent refunds 250.00 USD and the claimant returns the unused keys.\n\nEach side bears its own costs.",
	}
}

func proposeBody(terms award.Terms) map[string]any {
	return map[string]any{"action": "propose", "terms": terms}
}

func termsDigest(t testing.TB, terms award.Terms) string {
	t.Helper()
	d, err := terms.Digest()
	require.NoError(t, err)
	return d
}

// settle sends a settlement act and requires status.
func (s *stack) settle(t testing.TB, path, token string, body any, status int) settlementData {
	t.Helper()
	rep := s.do(t, http.MethodPost, path, token, newKey(), body)
	require.Equal(t, status, rep.status, string(rep.body))
	return data[settlementData](t, rep)
}

// The story on the routes: the tribunal is at work when the
// respondent proposes terms; the claimant accepts exactly them by their
// digest; the case is settled and the run ends; the reviewer records the
// agreement, and the consent award is an award like any other: its
// artifacts, its attestation verifying with the award keys, final, and
// executed by the side each remedy orders.
func TestBothSidesSettleAndTheReviewerRecordsAConsentAward(t *testing.T) {
	s := newStack(t)
	c := s.recordClosed(t)
	path := "/api/cases/" + c.id + "/settlement-binding"

	v := data[settlementData](t, s.do(t, http.MethodGet, path, s.claimant, "", nil))
	require.Equal(t, "none", v.Stage)
	require.Empty(t, v.Proposals)

	terms := settlementTerms()
	digest := termsDigest(t, terms)
	proposed := s.settle(t, path, s.respondent, proposeBody(terms), http.StatusCreated)
	require.Equal(t, "stl_1", proposed.ProposalID)
	require.Equal(t, "proposed", proposed.Stage)
	require.Equal(t, []string{"settlement_proposed"}, proposed.eventTypes())
	require.Equal(t, digest, proposed.Proposals[0].TermsDigest, "the terms are named by the SHA-256 of their RFC 8785 bytes")
	require.Equal(t, "pending", proposed.Proposals[0].Status)

	s.unchanged(t, func() {
		for _, tc := range []struct {
			name   string
			token  string
			body   any
			status int
			code   string
		}{
			{"another partner", s.stranger, map[string]any{"action": "accept", "termsDigest": digest}, http.StatusNotFound, "case_not_found_or_opening"},
			{"another tenant", s.otherTenant, map[string]any{"action": "accept", "termsDigest": digest}, http.StatusNotFound, "case_not_found_or_opening"},
			{"a reviewer not on the case", s.reviewer2, map[string]any{"action": "record", "termsDigest": digest}, http.StatusNotFound, "case_not_found_or_opening"},
			{"the proposer accepting its own terms", s.respondent, map[string]any{"action": "accept", "termsDigest": digest}, http.StatusConflict, "own_settlement_proposal"},
			{"accepting other terms", s.claimant, map[string]any{"action": "accept", "termsDigest": strings.Repeat("ab", 32)}, http.StatusConflict, "settlement_terms_mismatch"},
			{"withdrawing the other side's terms", s.claimant, map[string]any{"action": "withdraw"}, http.StatusForbidden, "not_settlement_proposer"},
			{"the reviewer recording before the agreement", s.reviewer, map[string]any{"action": "record", "termsDigest": digest}, http.StatusConflict, "settlement_not_agreed"},
			{"a side recording", s.claimant, map[string]any{"action": "record", "termsDigest": digest}, http.StatusForbidden, "not_tribunal_member"},
			{"the reviewer taking a side's act", s.reviewer, map[string]any{"action": "accept", "termsDigest": digest}, http.StatusForbidden, "forbidden"},
			{"an unknown action", s.claimant, map[string]any{"action": "reject"}, http.StatusBadRequest, "invalid_settlement_act"},
			{"terms with an acceptance", s.claimant, map[string]any{"action": "accept", "termsDigest": digest, "terms": terms}, http.StatusBadRequest, "invalid_settlement_act"},
			{"a digest that is no digest", s.claimant, map[string]any{"action": "accept", "termsDigest": "ABC"}, http.StatusBadRequest, "invalid_settlement_act"},
			{"an unknown member", s.claimant, map[string]any{"action": "withdraw", "reason": "changed my mind"}, http.StatusBadRequest, "unknown_field"},
		} {
			rep := s.do(t, http.MethodPost, path, tc.token, newKey(), tc.body)
			require.Equal(t, tc.status, rep.status, "%s: %s", tc.name, rep.body)
			require.Equal(t, tc.code, rep.code, tc.name)
		}
		tooMuch := settlementTerms()
		tooMuch.Remedies[0].AmountMinor = 42001
		rep := s.do(t, http.MethodPost, path, s.claimant, newKey(), proposeBody(tooMuch))
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "remedy_exceeds_claim", rep.code, "terms within the claim, as an award's")
		rep = s.do(t, http.MethodPost, path, s.claimant, "", map[string]any{"action": "withdraw"})
		require.Equal(t, http.StatusBadRequest, rep.status)
		require.Equal(t, "idempotency_key_missing", rep.code)
	})

	// The terms are the sides' until they agree them.
	require.Empty(t, data[settlementData](t, s.do(t, http.MethodGet, path, s.reviewer, "", nil)).Proposals)

	key := newKey()
	agreed := s.do(t, http.MethodPost, path, s.claimant, key, map[string]any{"action": "accept", "termsDigest": digest})
	require.Equal(t, http.StatusOK, agreed.status, string(agreed.body))
	v = data[settlementData](t, agreed)
	require.Equal(t, "agreed", v.Stage)
	require.Equal(t, "settled", v.CaseStatus)
	require.Equal(t, []string{"settlement_agreed", "settlement_agreed"}, v.eventTypes(), "to both sides, and to the tribunal")
	require.Equal(t, "accepted", v.Proposals[0].Status)
	require.Equal(t, "p-claimant", v.Proposals[0].AcceptedBy)
	again := s.do(t, http.MethodPost, path, s.claimant, key, map[string]any{"action": "accept", "termsDigest": digest})
	require.Equal(t, http.StatusOK, again.status)
	require.Equal(t, v, data[settlementData](t, again), "a retry answers the first answer")
	require.Len(t, data[settlementData](t, s.do(t, http.MethodGet, path, s.reviewer, "", nil)).Proposals, 1, "the tribunal sees the agreed terms")

	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.respondent, "", nil))
	require.Equal(t, "settlement", st.Stage)
	require.Equal(t, "consent_award", st.WaitingFor)
	runs := data[struct {
		Runs []struct {
			Status string `json:"status"`
		} `json:"runs"`
	}](t, s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/runs", s.claimant, "", nil))
	require.Equal(t, "ended", runs.Runs[0].Status, "the run in progress ended")

	s.unchanged(t, func() {
		pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/review-package", s.adjudicator, "", nil))
		rep := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/synthesize-opinion", s.adjudicator, newKey(), map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest,
			"proposal": map[string]any{"outcome": "claim_upheld", "remedies": []any{}, "reasons": "r", "citations": []map[string]any{{"itemId": pkg.Record.Items[0].ItemID, "digest": pkg.Record.Items[0].Digest}}}})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "decision_stage_closed", rep.code, "nobody decides a settled case")
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), proposeBody(terms))
		require.Equal(t, "settlement_agreed", rep.code, "the agreement binds")
		rep = s.do(t, http.MethodPost, path, s.adjudicator, newKey(), map[string]any{"action": "record", "termsDigest": digest})
		require.Equal(t, http.StatusForbidden, rep.status)
		require.Equal(t, "wrong_tribunal_role", rep.code, "the AI records nothing")
		rep = s.do(t, http.MethodPost, path, s.reviewer, newKey(), map[string]any{"action": "record", "termsDigest": strings.Repeat("0", 64)})
		require.Equal(t, "settlement_terms_mismatch", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "stage_closed", rep.code, "a settled case is not terminated")
	})

	recorded := s.settle(t, path, s.reviewer, map[string]any{"action": "record", "termsDigest": digest}, http.StatusCreated)
	require.Equal(t, "recorded", recorded.Stage)
	require.Equal(t, []string{"award_issued", "award_final"}, recorded.eventTypes(), "each side is ordered something: one award_issued to both")
	hash := recorded.AwardHash
	require.NotEmpty(t, hash)

	a := data[struct {
		Outcome    string            `json:"outcome"`
		AwardHash  string            `json:"awardHash"`
		Final      bool              `json:"final"`
		Settlement *award.Settlement `json:"settlement"`
		Remedies   []award.Remedy    `json:"remedies"`
		Tribunal   map[string]any    `json:"tribunal"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.claimant, "", nil))
	require.Equal(t, award.OutcomeSettledByConsent, a.Outcome)
	require.Equal(t, hash, a.AwardHash)
	require.True(t, a.Final, "a consent award is final on its issue")
	require.Equal(t, digest, a.Settlement.TermsDigest)
	require.Equal(t, terms.Text, a.Settlement.Text)
	require.Equal(t, []string{"proposed", "accepted"}, []string{a.Settlement.Consents[0].Act, a.Settlement.Consents[1].Act})
	require.Equal(t, terms.Remedies, a.Remedies)
	require.NotContains(t, a.Tribunal, "adjudicator", "nobody decided it")
	require.Equal(t, s.reviewerID, a.Tribunal["reviewer"].(map[string]any)["memberId"])

	js := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json", s.respondent)
	require.Equal(t, hash, award.Hash(js))
	attestation := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json/attestation", s.respondent)
	verified, err := award.Verify(js, string(attestation), s.raw(t, "/api/awards/keys", ""))
	require.NoError(t, err, "signed like any award")
	require.True(t, verified.Award.Consent())
	recomputed, err := award.Terms{Remedies: verified.Award.Remedies, Text: verified.Award.Settlement.Text}.Digest()
	require.NoError(t, err)
	require.Equal(t, digest, recomputed, "anyone recomputes the terms' digest from the award")
	require.Contains(t, string(s.raw(t, "/api/cases/"+c.id+"/award/artifacts/html", s.claimant)), "Settled by consent")
	require.True(t, strings.HasPrefix(string(s.raw(t, "/api/cases/"+c.id+"/award/artifacts/pdf", s.claimant)), "%PDF-"))

	st = data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "awarded", st.Decision)
	require.Equal(t, hash, st.AwardHash)
	require.Equal(t, "settled", data[caseData](t, s.do(t, http.MethodGet, "/api/cases/"+c.id, s.claimant, "", nil)).Status)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.reviewer, newKey(), map[string]any{"action": "record", "termsDigest": digest})
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "award_already_issued", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/post-award-requests", s.claimant, newKey(), map[string]any{"kind": "interpretation", "text": "What is due?"})
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "award_final", rep.code, "nothing waits after a consent award")
	})

	// Each side carries out what it agreed to do, and reports it.
	base := "/api/cases/" + c.id + "/executions"
	respondentReporter := s.grantReport(t, c, respondentPartner, auth.Respondent)
	claimantReporter := s.grantReport(t, c, claimantPartner, auth.Claimant)
	rep := s.do(t, http.MethodPost, base, respondentReporter, newKey(),
		map[string]any{"mode": "party_reported", "action": "report", "awardHash": hash, "remedyIndex": 0, "reference": "wire 2026-12-01/0007"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "completed", data[executionData](t, rep).Status)
	rep = s.do(t, http.MethodPost, base, claimantReporter, newKey(),
		map[string]any{"mode": "party_reported", "action": "report", "awardHash": hash, "remedyIndex": 1, "reference": "keys revoked"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))

	docket := s.docketTypes(t, c.id)
	for _, typ := range []string{"settlement_proposed", "settlement_agreed", "award_issued", "award_final", "execution_completed"} {
		require.Contains(t, docket, typ)
	}
}

// A settlement before the record closes: the case has no tribunal, so the
// next deadline scan assigns it a reviewer alone, who records it. The
// partner route and the website control answer in their envelopes and
// share one journal.
func TestASettlementBeforeTheRecordClosesIsRecordedByAReviewerTheScanAssigns(t *testing.T) {
	s := newStack(t)
	c := s.open(t, quickProceeding)
	rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	v2 := "/api/v2/cases/" + c.id + "/settlement-binding"
	website := "/api/disputes/" + c.id + "/settle"

	terms := award.Terms{Text: "The claimant withdraws its claim; each side bears its own costs."}
	digest := termsDigest(t, terms)
	proposed := s.settle(t, v2, s.claimant, proposeBody(terms), http.StatusCreated)
	require.Equal(t, digest, proposed.Proposals[0].TermsDigest)
	require.Equal(t, []award.Remedy{}, proposed.Proposals[0].Terms.Remedies, "terms of text alone")

	key := newKey()
	accepted := s.do(t, http.MethodPost, website, s.respondent, key, map[string]any{"action": "accept", "termsDigest": digest})
	require.Equal(t, http.StatusOK, accepted.status, string(accepted.body))
	require.True(t, strings.HasPrefix(string(accepted.body), `{"ok":true,"data":{`), string(accepted.body))
	require.Equal(t, "settled", data[settlementData](t, accepted).CaseStatus)
	replay := s.do(t, http.MethodPost, v2, s.respondent, key, map[string]any{"action": "accept", "termsDigest": digest})
	require.Equal(t, http.StatusOK, replay.status, "one journal across the routes: %s", replay.body)
	require.True(t, strings.HasPrefix(string(replay.body), `{"data":{`), "in the partner route's form")

	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "unassigned", st.Stage)
	require.Equal(t, "tribunal_assignment", st.WaitingFor)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, website, s.reviewer, newKey(), map[string]any{"action": "record", "termsDigest": digest})
		require.Equal(t, http.StatusNotFound, rep.status, "not assigned yet: %s", rep.body)
		require.True(t, strings.HasPrefix(string(rep.body), `{"ok":false,"error":{"code":"case_not_found_or_opening"`), string(rep.body))
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", s.respondent, newKey(), map[string]any{"text": "Too late."})
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "stage_closed", rep.code, "the procedure stopped")
	})

	_, err := s.scheduler.RunOnce(t.Context())
	require.NoError(t, err)
	st = data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "settlement", st.Stage)
	require.Equal(t, "consent_award", st.WaitingFor)
	require.Equal(t, s.reviewerID, st.Tribunal.Reviewer.MemberID, "a reviewer from the pool")
	require.Empty(t, st.Tribunal.Adjudicator.MemberID, "and no adjudicator: nobody decides a settlement")
	require.Contains(t, s.docketTypes(t, c.id), "tribunal_assigned")

	recorded := s.do(t, http.MethodPost, website, s.reviewer, newKey(), map[string]any{"action": "record", "termsDigest": digest})
	require.Equal(t, http.StatusCreated, recorded.status, string(recorded.body))
	require.True(t, strings.HasPrefix(string(recorded.body), `{"ok":true,"data":{`), string(recorded.body))
	v := data[settlementData](t, recorded)
	require.Equal(t, "recorded", v.Stage)
	require.Equal(t, []string{"award_issued", "award_final"}, v.eventTypes(), "the award orders nothing: award_issued once, to both sides")
	js := s.raw(t, "/api/v2/cases/"+c.id+"/award/artifacts/json", s.claimant)
	require.Equal(t, v.AwardHash, award.Hash(js))
	doc, err := award.Parse(js)
	require.NoError(t, err)
	require.Empty(t, doc.Remedies)
	require.Equal(t, terms.Text, doc.Settlement.Text)
	got := data[settlementData](t, s.do(t, http.MethodGet, v2, s.respondent, "", nil))
	require.Equal(t, v.AwardHash, got.AwardHash)
	require.NotEmpty(t, got.RecordedAt)
}

// Proposals replace and withdraw; every act the case cannot take is
// refused with its code and changes nothing, on every route.
func TestSettlementActsTheCaseCannotTakeAreRefused(t *testing.T) {
	s := newStack(t)

	// The other side has not joined: a settlement binds both.
	alone := s.open(t, quickProceeding)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+alone.id+"/settlement-binding", s.claimant, newKey(), proposeBody(settlementTerms()))
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "settlement_sides_not_joined", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+alone.id+"/settlement-binding", s.respondent, newKey(), proposeBody(settlementTerms()))
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "not_a_participant", rep.code, "a side that has not joined acts for nothing")
	})

	c := s.open(t, quickProceeding)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
	path := "/api/cases/" + c.id + "/settlement-binding"
	first := s.settle(t, path, s.claimant, proposeBody(settlementTerms()), http.StatusCreated)
	counter := settlementTerms()
	counter.Remedies[0].AmountMinor = 20000
	second := s.settle(t, path, s.respondent, proposeBody(counter), http.StatusCreated)
	require.Equal(t, "stl_2", second.ProposalID)
	require.Equal(t, "replaced", second.Proposals[0].Status, "a new proposal replaces the pending one")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.respondent, newKey(), map[string]any{"action": "accept", "termsDigest": first.Proposals[0].TermsDigest})
		require.Equal(t, "own_settlement_proposal", rep.code)
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), map[string]any{"action": "accept", "termsDigest": first.Proposals[0].TermsDigest})
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "settlement_terms_mismatch", rep.code, "the replaced terms are no longer on offer")
		control := settlementTerms()
		control.Text = "pay\u0007now"
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), proposeBody(control))
		require.Equal(t, http.StatusBadRequest, rep.status)
		require.Equal(t, "invalid_settlement_act", rep.code)
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), map[string]any{"action": "propose"})
		require.Equal(t, "invalid_settlement_act", rep.code, "a proposal without terms")
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), []byte(`{"action":"withdraw"}{}`))
		require.Equal(t, http.StatusBadRequest, rep.status, "trailing data")
		rep = s.do(t, http.MethodPost, path, s.claimant, newKey(), []byte(`action=withdraw`))
		require.Equal(t, http.StatusBadRequest, rep.status, "a body that is no JSON")
	})
	key := newKey()
	withdrawn := s.do(t, http.MethodPost, path, s.respondent, key, map[string]any{"action": "withdraw"})
	require.Equal(t, http.StatusOK, withdrawn.status, string(withdrawn.body))
	require.Equal(t, "none", data[settlementData](t, withdrawn).Stage)
	require.Equal(t, []string{"settlement_withdrawn"}, data[settlementData](t, withdrawn).eventTypes())
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.respondent, key, map[string]any{"action": "propose", "terms": counter})
		require.Equal(t, http.StatusUnprocessableEntity, rep.status)
		require.Equal(t, "idempotency_key_reused", rep.code, "a key names one act")
		rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/settle", s.respondent, newKey(), map[string]any{"action": "withdraw"})
		require.Equal(t, http.StatusConflict, rep.status)
		require.True(t, strings.HasPrefix(string(rep.body), `{"ok":false,"error":{"code":"no_settlement_proposal"`), string(rep.body))
	})

	// A terminated case settles nothing.
	ended := s.open(t, quickProceeding)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+ended.id+"/respondent", s.respondent, newKey(), nil).status)
	req := s.do(t, http.MethodPost, "/api/cases/"+ended.id+"/termination-requests", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, req.status, string(req.body))
	confirm := s.do(t, http.MethodPost, "/api/cases/"+ended.id+"/termination-requests/"+data[actData](t, req).TerminationID+"/confirmations", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, confirm.status, string(confirm.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+ended.id+"/settlement-binding", s.claimant, newKey(), proposeBody(settlementTerms()))
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "case_closed", rep.code)
	})

	// After a decided award, a settlement is its execution's business.
	awarded, _ := s.awarded(t)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/v2/cases/"+awarded.id+"/settlement-binding", s.respondent, newKey(), proposeBody(settlementTerms()))
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "award_already_issued", rep.code)
	})
}
