package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

type submissionsData struct {
	Submissions []struct {
		SubmissionID string `json:"submissionId"`
		Side         string `json:"side"`
		Stage        string `json:"stage"`
		Round        int    `json:"round"`
		Amendments   int    `json:"amendments"`
		Text         string `json:"text"`
	} `json:"submissions"`
}

// The early procedure end to end on the case routes: the respondent joins
// and answers, each side files its submissions round after round (a round
// closes early once both filed their limit), a submission is amended while
// its round is open, and both sides confirm the record, which closes it.
func TestTheRecordIsFiledAndConfirmed(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	base := "/api/cases/" + c.id

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/submissions", s.claimant, newKey(), map[string]any{"text": "too early"})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "stage_closed", rep.code, "no round is open while the respondent is awaited")
	})
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, base+"/answer", s.respondent, newKey(), map[string]any{"text": "Denied."}).status)

	var firstClaimantSubmission string
	families := []string{base, "/api/v2/cases/" + c.id, "/api/disputes/" + c.id}
	for round, status := range []string{"evidence", "evidence", "rebuttal"} {
		for i, who := range []string{s.claimant, s.respondent, s.claimant, s.respondent} {
			path := families[(round+i)%3] + "/submissions"
			rep := s.do(t, http.MethodPost, path, who, newKey(), map[string]any{"text": fmt.Sprintf("%s %d, filing %d", status, round+1, i+1)})
			require.Equal(t, http.StatusCreated, rep.status, "%s: %s", path, rep.body)
			got := data[actData](t, rep)
			require.NotEmpty(t, got.SubmissionID)
			if firstClaimantSubmission == "" {
				firstClaimantSubmission = got.SubmissionID
				// Amended while its round is open.
				rep = s.do(t, http.MethodPatch, base+"/submissions/"+got.SubmissionID, s.claimant, newKey(), map[string]any{"text": "evidence 1, filing 1, corrected"})
				require.Equal(t, http.StatusOK, rep.status, string(rep.body))
				// The other side has no such submission.
				s.unchanged(t, func() {
					rep := s.do(t, http.MethodPatch, base+"/submissions/"+got.SubmissionID, s.respondent, newKey(), map[string]any{"text": "mine now"})
					require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
					require.Equal(t, "submission_not_found", rep.code)
				})
			}
		}
	}
	rep := s.do(t, http.MethodGet, base, s.claimant, "", nil)
	require.Equal(t, "awaiting_record_confirmation", data[caseData](t, rep).Status)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPatch, base+"/submissions/"+firstClaimantSubmission, s.claimant, newKey(), map[string]any{"text": "too late"})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "stage_closed", rep.code, "its round closed")
	})

	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/submissions", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	subs := data[submissionsData](t, rep).Submissions
	require.Len(t, subs, 12)
	require.Equal(t, "evidence 1, filing 1, corrected", subs[0].Text)
	require.Equal(t, 1, subs[0].Amendments)
	require.Equal(t, "rebuttal", subs[11].Stage)

	rep = s.do(t, http.MethodGet, base+"/record-summary", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	summary := data[struct {
		Answer      *struct{ ID string }
		Submissions []struct{ ID string }
		DeadlineAt  string
	}](t, rep)
	require.NotNil(t, summary.Answer)
	require.Len(t, summary.Submissions, 12)
	require.NotEmpty(t, summary.DeadlineAt)

	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/record-confirmations", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/record-summary/confirmations", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "record_already_confirmed", rep.code)
	})
	rep = s.do(t, http.MethodPost, base+"/record-summary/confirmations", s.respondent, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "record_confirmed", data[actData](t, rep).Case.Status)

	types := s.docketTypes(t, c.id)
	require.Equal(t, []string{"record_confirmation_given", "record_confirmed", "evidence_export_ready", "evidence_export_ready"}, types[len(types)-4:])
	require.Contains(t, types, "record_confirmation_requested")
	require.Contains(t, types, "submission_amended")
}

// The claimant withdraws at once while no respondent has joined; once a
// respondent has, the other side confirms the request, and only it.
func TestTermination(t *testing.T) {
	s := newStack(t)

	alone := s.open(t)
	rep := s.do(t, http.MethodPost, "/api/cases/"+alone.id+"/termination-requests", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "terminated", data[actData](t, rep).Case.Status, "a withdrawal before any respondent joined")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+alone.id+"/invitations", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "case_closed", rep.code)
	})

	c := s.open(t)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/termination-requests", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	req := data[actData](t, rep)
	require.NotEmpty(t, req.TerminationID)
	require.Equal(t, "awaiting_answer", req.Case.Status, "the case goes on until the other side confirms")
	require.Equal(t, "termination_requested", req.Events[0].Type)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", s.respondent, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "termination_pending", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests/"+req.TerminationID+"/confirmations", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusForbidden, rep.status)
		require.Equal(t, "wrong_side", rep.code, "the side that asked does not confirm")
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests/term_other/confirmations", s.respondent, newKey(), nil)
		require.Equal(t, http.StatusNotFound, rep.status)
		require.Equal(t, "termination_request_not_found", rep.code)
	})
	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/termination-requests/"+req.TerminationID+"/confirmations", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "terminated", data[actData](t, rep).Case.Status)
}

// An Idempotency-Key names one request on one case: reused on another
// case it is refused, and that case is untouched.
func TestAKeyBelongsToOneCase(t *testing.T) {
	s := newStack(t)
	a, b := s.open(t), s.open(t)
	key := newKey()
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/cases/"+a.id+"/invitations", s.claimant, key, nil).status)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+b.id+"/invitations", s.claimant, key, nil)
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "idempotency_key_reused", rep.code)
	})
}
