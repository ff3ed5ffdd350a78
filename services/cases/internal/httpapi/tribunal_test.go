package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
)

// quickProceeding opens a proceeding for USD 420.00 with one evidence
// round of one filing per side and no rebuttal.
func quickProceeding(payload map[string]any) {
	payload["procedure"] = map[string]any{
		"profile": "standard", "answerRequired": true, "evidenceRounds": 1,
		"rebuttalRounds": 0, "filingsPerSidePerStage": 1, "recordConfirmationRequired": true,
	}
	payload["caseMode"] = "proceeding"
	payload["claim"] = map[string]any{"amountMinor": 42000, "currency": "USD", "remedy": "money_obligation", "summary": "A paid API subscription was never provisioned."}
}

// recordClosed walks a quick proceeding to its confirmed record and lets
// the scheduler assign its tribunal from the pool.
func (s *stack) recordClosed(t *testing.T) opened {
	t.Helper()
	c := s.open(t, quickProceeding)
	base := "/api/cases/" + c.id
	steps := []struct {
		method, path, token string
		body                any
	}{
		{http.MethodPost, "/api/partner-cases/" + c.id + "/respondent", s.respondent, nil},
		{http.MethodPost, base + "/answer", s.respondent, map[string]any{"text": "Denied: the API was provisioned on day one."}},
		{http.MethodPost, base + "/submissions", s.claimant, map[string]any{"text": "Invoice 77 and twelve support tickets saying the key never worked."}},
		{http.MethodPost, base + "/submissions", s.respondent, map[string]any{"text": "Provisioning log: key issued 2026-10-01."}},
		{http.MethodPost, base + "/record-summary/confirmations", s.claimant, nil},
		{http.MethodPost, base + "/record-summary/confirmations", s.respondent, nil},
	}
	for _, st := range steps {
		rep := s.do(t, st.method, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s %s: %s", st.method, st.path, rep.body)
	}
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	return c
}

type decisionData struct {
	Decision   string `json:"decision"`
	Stage      string `json:"stage"`
	WaitingFor string `json:"waitingFor"`
	AwardHash  string `json:"awardHash"`
	Tribunal   *struct {
		Adjudicator struct {
			MemberID            string `json:"memberId"`
			ConfigurationDigest string `json:"configurationDigest"`
		} `json:"adjudicator"`
		Reviewer struct {
			MemberID string `json:"memberId"`
		} `json:"reviewer"`
	} `json:"tribunal"`
	Run *struct {
		RunID       string `json:"runId"`
		InputDigest string `json:"inputDigest"`
	} `json:"run"`
}

type reviewPackageData struct {
	Record struct {
		Digest string `json:"digest"`
		Items  []struct {
			ItemID string `json:"itemId"`
			Side   string `json:"side"`
			Digest string `json:"digest"`
			Text   string `json:"text"`
		} `json:"items"`
	} `json:"record"`
	Run struct {
		RunID  string `json:"runId"`
		Status string `json:"status"`
	} `json:"run"`
}

// The decision end to end on the routes: the record closes, the pool
// assigns an adjudicator and a reviewer, the adjudicator reads the record
// and files a proposal citing it, the reviewer agrees and attests, both
// sides see the dispositive part, and the reviewer's sign-off issues an
// award whose artifacts anyone can verify from the JWK set alone.
func TestFromTheConfirmedRecordToAVerifiableAward(t *testing.T) {
	s := newStack(t)
	c := s.recordClosed(t)
	w := "/api/disputes/" + c.id + "/"

	rep := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	st := data[decisionData](t, rep)
	require.Equal(t, "adjudication", st.Stage)
	require.Equal(t, "adjudicator_proposal", st.WaitingFor)
	require.Equal(t, s.adjudicatorID, st.Tribunal.Adjudicator.MemberID, "both sides see who decides, and its pinned configuration")
	digest, err := s.adjudicatorConfig.Digest()
	require.NoError(t, err)
	require.Equal(t, digest, st.Tribunal.Adjudicator.ConfigurationDigest)

	// The tribunal's routes are the tribunal's.
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"signoff", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "not_tribunal_member", rep.code, "a party's credential on a tribunal route")
		rep = s.do(t, http.MethodPost, w+"signoff", s.adjudicator, newKey(), nil)
		require.Equal(t, http.StatusForbidden, rep.status)
		require.Equal(t, "wrong_tribunal_role", rep.code, "the AI decides nothing alone")
		rep = s.do(t, http.MethodPost, w+"signoff", s.reviewer, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "no_proposal", rep.code, "a sign-off without a proposal")
		rep = s.do(t, http.MethodGet, w+"review-package", s.reviewer2, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status, "a member of the pool not assigned to the case sees nothing")
		rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.claimant, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status)
		require.Equal(t, "award_not_issued", rep.code)
	})

	rep = s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	pkg := data[reviewPackageData](t, rep)
	require.Len(t, pkg.Record.Items, 3, "the answer and one submission per side")
	require.Equal(t, "answer", pkg.Record.Items[0].ItemID)
	require.Equal(t, award.Hash([]byte(pkg.Record.Items[1].Text)), pkg.Record.Items[1].Digest)
	claimantItem := pkg.Record.Items[1]

	proposal := map[string]any{
		"outcome":   "claim_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 42000, "currency": "USD", "dueBy": time.Now().UTC().Add(14 * 24 * time.Hour).Format("2006-01-02T15:04:05.000Z")}},
		"reasons":   "The claimant's tickets show the key never worked; the log shows issuance, not use.",
		"citations": []map[string]any{{"itemId": claimantItem.ItemID, "digest": claimantItem.Digest, "pinpoint": "tickets 1-12"}},
	}
	s.unchanged(t, func() {
		bad := map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": map[string]any{
			"outcome": "claim_upheld", "remedies": []any{}, "reasons": "r",
			"citations": []map[string]any{{"itemId": "sub-forged", "digest": claimantItem.Digest}},
		}}
		rep := s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator, newKey(), bad)
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "citation_outside_record", rep.code)
	})
	rep = s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator, newKey(), map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))

	for _, step := range []struct {
		path, token string
		body        any
	}{
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{"the due date is a Sunday"}}},
		{"signoff", s.reviewer, nil},
	} {
		rep := s.do(t, http.MethodPost, w+step.path, step.token, newKey(), step.body)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", step.path, rep.body)
	}

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"signoff", s.reviewer, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "award_already_issued", rep.code, "a second sign-off")
		rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.otherTenant, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status, "another tenant")
	})

	st = data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.respondent, "", nil))
	require.Equal(t, "awarded", st.Decision)
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	view := data[struct {
		AwardHash string `json:"awardHash"`
		Outcome   string `json:"outcome"`
		Tribunal  struct {
			Reviewer struct{ MemberID string } `json:"reviewer"`
		} `json:"tribunal"`
	}](t, rep)
	require.Equal(t, st.AwardHash, view.AwardHash)
	require.Equal(t, "claim_upheld", view.Outcome)
	require.Equal(t, s.reviewerID, view.Tribunal.Reviewer.MemberID)

	raw := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json", s.claimant)
	require.Equal(t, view.AwardHash, award.Hash(raw), "awardHash is the SHA-256 of the json artifact")
	attestation := s.raw(t, "/api/v2/cases/"+c.id+"/award/artifacts/json/attestation", s.respondent)
	keys := s.raw(t, "/api/awards/keys", "")
	verified, err := award.Verify(raw, string(attestation), keys)
	require.NoError(t, err)
	require.Equal(t, view.AwardHash, verified.AwardHash)
	require.True(t, strings.HasPrefix(string(s.raw(t, "/api/cases/"+c.id+"/award/artifacts/pdf", s.claimant)), "%PDF-"))
	require.Contains(t, string(s.raw(t, "/api/cases/"+c.id+"/award/artifacts/html", s.claimant)), view.AwardHash)
	require.Equal(t, raw, s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json", s.respondent), "byte-identical on every read")

	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/decision", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Contains(t, s.docketTypes(t, c.id), "award_issued")
}

// raw GETs an artifact's exact bytes.
func (s *stack) raw(t *testing.T, path, token string) []byte {
	t.Helper()
	req := s.request(t, http.MethodGet, path, token, "", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, b)
	return b
}

// evaluationCase makes the quick case an evaluation whose review policy
// asks both sides to accept.
func evaluationCase(payload map[string]any) {
	quickProceeding(payload)
	payload["caseMode"] = "evaluation"
	payload["evaluation"] = map[string]any{
		"schemaVersion": "narrow-evaluation-v2", "externalEvaluationId": "eval-1", "evaluationDigest": strings.Repeat("e", 64),
		"question": "Was the API key provisioned before the invoice was due?", "criteria": []string{"provisioning logs", "support tickets"},
		"allowedOutcomes": []string{"provisioned", "not_provisioned"}, "evidencePolicy": "party_submissions", "reviewPolicy": "always",
	}
}

// An evaluation answers its pinned question with one of its allowed
// outcomes; once both sides accept the reviewer's signed evaluation it is
// issued as the award.
func TestAnAcceptedEvaluationIsIssuedAsTheAward(t *testing.T) {
	s := newStack(t)
	c := s.open(t, evaluationCase)
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "awaiting_record", st.Stage, "an evaluation's tribunal is assigned at opening")

	base := "/api/cases/" + c.id
	for _, step := range []struct{ path, token, text string }{
		{"/api/partner-cases/" + c.id + "/respondent", s.respondent, ""},
		{base + "/answer", s.respondent, "It was provisioned."},
		{base + "/submissions", s.claimant, "Tickets 1-12: the key never worked."},
		{base + "/submissions", s.respondent, "Log: key issued."},
		{base + "/record-summary/confirmations", s.claimant, ""},
		{base + "/record-summary/confirmations", s.respondent, ""},
	} {
		var body any
		if step.text != "" {
			body = map[string]any{"text": step.text}
		}
		rep := s.do(t, http.MethodPost, step.path, step.token, newKey(), body)
		require.Less(t, rep.status, 300, "%s: %s", step.path, rep.body)
	}
	_, err = s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)

	w := "/api/disputes/" + c.id + "/"
	pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil))
	require.Equal(t, "open", pkg.Run.Status, "the run opens when the record closes")
	item := pkg.Record.Items[1]
	file := func(outcome string) reply {
		return s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator, newKey(), map[string]any{
			"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest,
			"proposal": map[string]any{"outcome": outcome, "remedies": []any{}, "reasons": "The tickets outweigh the log.",
				"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest}}},
		})
	}
	s.unchanged(t, func() {
		rep := file("claim_upheld")
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "outcome_not_allowed", rep.code, "an outcome outside allowedOutcomes")
	})
	require.Equal(t, http.StatusCreated, file("not_provisioned").status)
	for _, step := range []struct {
		path, token string
		body        any
	}{
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{}}},
		{"signoff", s.reviewer, nil},
	} {
		rep := s.do(t, http.MethodPost, w+step.path, step.token, newKey(), step.body)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", step.path, rep.body)
	}
	ev := data[struct {
		Status  string `json:"status"`
		Outcome string `json:"outcome"`
	}](t, s.do(t, http.MethodGet, base+"/evaluation", s.claimant, "", nil))
	require.Equal(t, "issued", ev.Status)
	require.Equal(t, "not_provisioned", ev.Outcome)

	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, base+"/evaluation/accept", s.claimant, newKey(), nil).status)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evaluation/accept", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "already_answered", rep.code)
	})
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evaluation/accept", s.respondent, newKey(), nil).status)
	rep := s.do(t, http.MethodGet, base+"/award", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "evaluation", data[struct {
		CaseMode string `json:"caseMode"`
	}](t, rep).CaseMode)
}

// A side challenges the pinned configuration with grounds; the reviewer
// upholds it, which puts another adjudicator of the pool in place and
// restarts the run. Each step is on the docket.
func TestAnUpheldConfigurationChallengeRestartsTheRunWithAnotherAdjudicator(t *testing.T) {
	s := newStack(t)
	c := s.recordClosed(t)
	challenges := "/api/cases/" + c.id + "/ai-configuration-challenges"

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, challenges, s.adjudicator, newKey(), map[string]any{"grounds": "I object to myself"})
		require.Equal(t, http.StatusForbidden, rep.status, "the tribunal is never a party")
	})
	rep := s.do(t, http.MethodPost, challenges, s.respondent, newKey(), map[string]any{"grounds": "A rubric that counts filings ignores what they say."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	list := data[struct {
		Challenges []struct {
			ChallengeID string `json:"challengeId"`
			Status      string `json:"status"`
		} `json:"challenges"`
	}](t, s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/ai-configuration-challenges", s.claimant, "", nil))
	require.Len(t, list.Challenges, 1)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPatch, challenges, s.respondent, newKey(), map[string]any{"challengeId": list.Challenges[0].ChallengeID, "decision": "upheld", "reasons": "mine"})
		require.Equal(t, http.StatusForbidden, rep.status, "a side does not resolve its own challenge")
	})
	rep = s.do(t, http.MethodPatch, challenges, s.reviewer, newKey(), map[string]any{"challengeId": list.Challenges[0].ChallengeID, "decision": "upheld", "reasons": "Fair: the record is textual."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	st := data[decisionData](t, rep)
	require.Equal(t, s.adjudicator2ID, st.Tribunal.Adjudicator.MemberID)
	require.Equal(t, "run-2", st.Run.RunID)

	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/review-package", s.adjudicator, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, "the replaced adjudicator sees the case no more")
	types := s.docketTypes(t, c.id)
	require.Equal(t, []string{"ai_configuration_challenged", "ai_configuration_challenge_resolved", "tribunal_assigned", "adjudication_requested"}, types[len(types)-4:])
}
