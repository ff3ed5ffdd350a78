package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
)

// dueIn is a remedy due date d from now, as a proposal writes it.
func dueIn(d time.Duration) string { return time.Now().UTC().Add(d).Format("2006-01-02T15:04:05.000Z") }

type runsData struct {
	Runs []struct {
		RunID    string         `json:"runId"`
		Status   string         `json:"status"`
		Proposal map[string]any `json:"proposal"`
	} `json:"runs"`
}

// The rest of the tribunal's work, each route as a member or a side uses
// it: a side challenges the pinned configuration and the reviewer upholds
// it (another adjudicator, a new run), the reviewer recuses, the
// adjudicator asks for a human and the reviewer resumes, the reviewer asks
// for a fresh run, objects, revises with a file and overrides, rules on
// procedure, and signs; the artifacts answer 304 to their ETag.
func TestTheTribunalsActsOnEveryRoute(t *testing.T) {
	s := newStack(t)
	c := s.recordClosed(t)
	w := "/api/disputes/" + c.id + "/"
	cases := "/api/cases/" + c.id + "/"

	rep := s.do(t, http.MethodPost, cases+"ai-configuration-challenges", s.respondent, newKey(), map[string]any{"grounds": "The rubric ignores the provisioning log."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"ai-configuration-challenges", s.respondent, newKey(), map[string]any{"grounds": "Again."})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "challenge_pending", rep.code)
		rep = s.do(t, http.MethodPatch, w+"ai-configuration-challenges", s.reviewer, newKey(), map[string]any{"challengeId": "challenge-9", "decision": "upheld", "reasons": "r"})
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "challenge_not_found", rep.code)
		rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/evaluation", s.claimant, "", nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "not_an_evaluation", rep.code)
		rep = s.do(t, http.MethodGet, w+"pre-award-review", s.claimant, "", nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "decision_stage_closed", rep.code)
	})
	challenges := data[struct {
		Challenges []struct {
			ChallengeID, Status string
		} `json:"challenges"`
	}](t, s.do(t, http.MethodGet, w+"ai-configuration-challenges", s.claimant, "", nil))
	require.Equal(t, "pending", challenges.Challenges[0].Status)
	rep = s.do(t, http.MethodPatch, cases+"ai-configuration-challenges", s.reviewer, newKey(),
		map[string]any{"challengeId": challenges.Challenges[0].ChallengeID, "decision": "upheld", "reasons": "The log is the respondent's whole case."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	st := data[decisionData](t, rep)
	require.Equal(t, s.adjudicator2ID, st.Tribunal.Adjudicator.MemberID, "the pool's other adjudicator takes over")
	require.Equal(t, "run-2", st.Run.RunID)
	rep = s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, "a replaced member sees the case no more")

	rep = s.do(t, http.MethodPost, w+"recusal", s.reviewer, newKey(), map[string]any{"reason": "I advised the claimant last year."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, s.reviewer2ID, data[decisionData](t, rep).Tribunal.Reviewer.MemberID)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"recusal", s.adjudicator2, newKey(), map[string]any{"reason": "conflict"})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "no_replacement_available", rep.code, "the pool has no third adjudicator")
	})

	rep = s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator2, newKey(), map[string]any{"runId": "run-2", "humanAttention": map[string]any{"reason": "The log is an image."}})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "reviewer_resume", data[decisionData](t, rep).WaitingFor)
	rep = s.do(t, http.MethodPost, w+"human-attention/resume", s.reviewer2, newKey(), map[string]any{"instructions": "Read the log as the respondent transcribed it."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, w+"adjudicate", s.reviewer2, newKey(), nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "run-4", data[decisionData](t, rep).Run.RunID)

	pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator2, "", nil))
	item := pkg.Record.Items[1]
	proposal := map[string]any{
		"outcome":   "claim_partially_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 21000, "currency": "USD", "dueBy": dueIn(14 * 24 * time.Hour)}},
		"reasons":   "Half the term went unprovisioned.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest}},
	}
	file := func() {
		t.Helper()
		rep := s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator2, newKey(), map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal})
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	}
	file()
	runs := data[runsData](t, s.do(t, http.MethodGet, w+"runs", s.reviewer2, "", nil))
	require.Len(t, runs.Runs, 4)
	require.NotNil(t, runs.Runs[3].Proposal, "the tribunal sees the proposal")
	runs = data[runsData](t, s.do(t, http.MethodGet, w+"runs", s.claimant, "", nil))
	require.Nil(t, runs.Runs[3].Proposal, "the sides see the runs by their digests")

	rep = s.do(t, http.MethodPost, w+"reviewer-objection", s.reviewer2, newKey(), map[string]any{"instructions": "Cite the tickets, not the invoice."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	pkg = data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator2, "", nil))
	require.Equal(t, "run-5", pkg.Run.RunID)
	file()

	req := s.request(t, http.MethodPost, w+"reviewer-opinion/file", s.reviewer2, newKey(), []byte("# Reasons\n\nHalf the term went unprovisioned."))
	req.Header.Set("Content-Type", "text/markdown; charset=utf-8")
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	rep = s.reply(t, resp, raw)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	over := map[string]any{
		"outcome":   "claim_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 42000, "currency": "USD", "dueBy": dueIn(14 * 24 * time.Hour)}},
		"reasons":   "No part of the term was provisioned.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest, "pinpoint": "ticket 1"}},
	}
	s.unchanged(t, func() {
		more := map[string]any{"outcome": "claim_upheld", "reasons": "r", "citations": over["citations"],
			"remedies": []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 42001, "currency": "USD", "dueBy": dueIn(time.Hour)}}}
		rep := s.do(t, http.MethodPost, w+"override", s.reviewer2, newKey(), more)
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "remedy_exceeds_claim", rep.code)
	})
	rep = s.do(t, http.MethodPost, w+"override", s.reviewer2, newKey(), over)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, w+"procedural-rulings", s.reviewer2, newKey(), map[string]any{"text": "The record is closed; no new filings."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	rulings := data[struct {
		Rulings []struct{ RulingID string } `json:"rulings"`
	}](t, s.do(t, http.MethodGet, w+"procedural-rulings", s.respondent, "", nil))
	require.Len(t, rulings.Rulings, 1)

	for _, step := range []struct {
		path, token string
		body        any
	}{
		{"reviewer-attestation", s.reviewer2, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer2, map[string]any{}},
	} {
		rep := s.do(t, http.MethodPost, w+step.path, step.token, newKey(), step.body)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", step.path, rep.body)
	}
	review := data[struct {
		Outcome string `json:"outcome"`
	}](t, s.do(t, http.MethodGet, w+"pre-award-review", s.claimant, "", nil))
	require.Equal(t, "claim_upheld", review.Outcome, "the sides see the overridden outcome")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"signoff", s.reviewer2, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "pre_award_review_required", rep.code, "the window is open and nobody answered")
	})
	for _, token := range []string{s.claimant, s.respondent} {
		rep := s.do(t, http.MethodPost, w+"pre-award-review", token, newKey(), map[string]any{"clericalErrors": []string{}})
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	}
	rep = s.do(t, http.MethodPost, w+"signoff", s.reviewer2, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/award/artifacts/json", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	etag := rep.header.Get("ETag")
	require.Regexp(t, `^"sha256-[0-9a-f]{64}"$`, etag)
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/award/artifacts/json", s.claimant, "", nil, "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, rep.status)
	rep = s.do(t, http.MethodGet, cases+"award/artifacts/json/attestation", s.reviewer2, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "application/jose", rep.header.Get("Content-Type"))
	rep = s.do(t, http.MethodGet, cases+"award/artifacts/docx", s.claimant, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status)
	require.Equal(t, "not_found", rep.code)
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/award", s.reviewer2, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	for kind, mediaType := range map[string]string{"html": "text/html; charset=utf-8", "pdf": "application/pdf"} {
		rep = s.do(t, http.MethodGet, cases+"award/artifacts/"+kind, s.respondent, "", nil)
		require.Equal(t, http.StatusOK, rep.status, kind)
		require.Equal(t, mediaType, rep.header.Get("Content-Type"))
	}
	rep = s.do(t, http.MethodGet, "/api/awards/keys", "", "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "public, max-age=300", rep.header.Get("Cache-Control"), "the award keys are public")
}

// An evaluation is assigned at its opening, waits for its record, and,
// under review policy always, is issued for both sides to accept before
// it is the award.
func TestAnEvaluationIsTheAwardOnceBothSidesAccept(t *testing.T) {
	s := newStack(t)
	c := s.open(t, func(payload map[string]any) {
		quickProceeding(payload)
		payload["caseMode"] = "evaluation"
		payload["evaluation"] = map[string]any{
			"schemaVersion": "narrow-evaluation-v2", "externalEvaluationId": "eval-1", "evaluationDigest": strings.Repeat("3", 64),
			"question": "Was the API key provisioned?", "criteria": []string{"the provisioning log", "the tickets"},
			"allowedOutcomes": []string{"provisioned", "not_provisioned"}, "evidencePolicy": "record_only", "reviewPolicy": "always",
		}
	})
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "awaiting_record", st.Stage, "an evaluation's tribunal is assigned at its opening")
	require.Equal(t, "record_closing", st.WaitingFor)
	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id+"/evaluation", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "pending", data[struct{ Status string }](t, rep).Status)

	base := "/api/cases/" + c.id
	for _, st := range []struct {
		method, path, token string
		body                any
	}{
		{http.MethodPost, "/api/partner-cases/" + c.id + "/respondent", s.respondent, nil},
		{http.MethodPost, base + "/answer", s.respondent, map[string]any{"text": "The key was issued on day one."}},
		{http.MethodPost, base + "/submissions", s.claimant, map[string]any{"text": "Twelve tickets: the key never worked."}},
		{http.MethodPost, base + "/submissions", s.respondent, map[string]any{"text": "Provisioning log."}},
		{http.MethodPost, base + "/record-summary/confirmations", s.claimant, nil},
		{http.MethodPost, base + "/record-summary/confirmations", s.respondent, nil},
	} {
		rep := s.do(t, st.method, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s %s: %s", st.method, st.path, rep.body)
	}
	_, err = s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)

	w := "/api/disputes/" + c.id + "/"
	pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil))
	require.Equal(t, "open", pkg.Run.Status)
	item := pkg.Record.Items[1]
	for _, step := range []struct {
		path, token string
		body        any
		status      int
	}{
		{"synthesize-opinion", s.adjudicator, map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": map[string]any{
			"outcome": "not_provisioned", "remedies": []any{}, "reasons": "The tickets outweigh the log.",
			"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest}},
		}}, http.StatusCreated},
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "revise", "reasons": "The log shows issuance, the tickets show no use."}, http.StatusOK},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}, http.StatusOK},
		{"pre-award-review", s.reviewer, nil, http.StatusOK},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}, http.StatusOK},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{}}, http.StatusOK},
		{"signoff", s.reviewer, nil, http.StatusOK},
	} {
		rep := s.do(t, http.MethodPost, w+step.path, step.token, newKey(), step.body)
		require.Equal(t, step.status, rep.status, "%s: %s", step.path, rep.body)
	}
	st = data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "evaluation_issued", st.Decision)
	require.Equal(t, "evaluation_acceptance", st.WaitingFor)

	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evaluation/accept", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/evaluation/accept", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "already_answered", rep.code)
	})
	rep = s.do(t, http.MethodPost, base+"/evaluation/accept", s.respondent, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "awarded", data[decisionData](t, rep).Decision)
	ev := data[struct {
		Status    string `json:"status"`
		Outcome   string `json:"outcome"`
		AwardHash string `json:"awardHash"`
	}](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/evaluation", s.claimant, "", nil))
	require.Equal(t, "accepted", ev.Status)
	require.Equal(t, "not_provisioned", ev.Outcome)
	award := data[struct {
		CaseMode  string `json:"caseMode"`
		AwardHash string `json:"awardHash"`
	}](t, s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/decision", s.respondent, "", nil))
	require.Equal(t, "evaluation", award.CaseMode)
	require.Equal(t, ev.AwardHash, award.AwardHash)
}
