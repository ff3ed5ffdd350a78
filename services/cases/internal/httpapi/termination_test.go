package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The website termination control requests by {action: request} and
// confirms by {action: confirm, requestId}, as the canonical routes do,
// in the website envelope and its own journal.
func TestTheWebsiteTerminationControlRequestsAndConfirms(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	path := "/api/disputes/" + c.id + "/termination"

	key := newKey()
	requested := s.do(t, http.MethodPost, path, s.respondent, key, map[string]any{"action": "request"})
	require.Equal(t, http.StatusCreated, requested.status, string(requested.body))
	require.True(t, strings.HasPrefix(string(requested.body), `{"ok":true,"data":{`), string(requested.body))
	termination := data[actData](t, requested).TerminationID
	require.NotEmpty(t, termination)
	again := s.do(t, http.MethodPost, path, s.respondent, key, map[string]any{"action": "request"})
	require.Equal(t, string(requested.body), string(again.body), "a retry answers the first answer")
	reused := s.do(t, http.MethodPost, path, s.respondent, key, map[string]any{"action": "confirm", "requestId": termination})
	require.Equal(t, http.StatusUnprocessableEntity, reused.status, "another action under the same key: %s", reused.body)

	confirmed := s.do(t, http.MethodPost, path, s.claimant, newKey(), map[string]any{"action": "confirm", "requestId": termination})
	require.Equal(t, http.StatusOK, confirmed.status, string(confirmed.body))
	require.Equal(t, "terminated", data[actData](t, confirmed).Case.Status)
	docket := s.docketTypes(t, c.id)
	require.Equal(t, "terminated", docket[len(docket)-1])
}

// Every body the control cannot act on, and every caller without
// authority, is refused and changes nothing.
func TestTheWebsiteTerminationControlRefuses(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	path := "/api/disputes/" + c.id + "/termination"
	requested := s.do(t, http.MethodPost, path, s.respondent, newKey(), map[string]any{"action": "request"})
	require.Equal(t, http.StatusCreated, requested.status, string(requested.body))
	termination := data[actData](t, requested).TerminationID

	for _, tc := range []struct {
		name   string
		token  string
		body   map[string]any
		status int
		code   string
	}{
		{"no action", s.claimant, map[string]any{}, http.StatusBadRequest, "invalid_act"},
		{"an unknown action", s.claimant, map[string]any{"action": "withdraw"}, http.StatusBadRequest, "invalid_act"},
		{"a confirmation naming no request", s.claimant, map[string]any{"action": "confirm"}, http.StatusBadRequest, "invalid_act"},
		{"a request naming one", s.claimant, map[string]any{"action": "request", "requestId": termination}, http.StatusBadRequest, "invalid_act"},
		{"an unknown field", s.claimant, map[string]any{"action": "request", "reason": "tired"}, http.StatusBadRequest, "unknown_field"},
		{"a second request while one is pending", s.claimant, map[string]any{"action": "request"}, http.StatusConflict, "termination_pending"},
		{"a request that does not exist", s.claimant, map[string]any{"action": "confirm", "requestId": "term_nope"}, http.StatusNotFound, "termination_request_not_found"},
		{"another partner", s.stranger, map[string]any{"action": "confirm", "requestId": termination}, http.StatusNotFound, "case_not_found_or_opening"},
		{"another tenant", s.otherTenant, map[string]any{"action": "confirm", "requestId": termination}, http.StatusNotFound, "case_not_found_or_opening"},
	} {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path, tc.token, newKey(), tc.body)
			require.Equal(t, tc.status, rep.status, "%s: %s", tc.name, rep.body)
			require.True(t, strings.HasPrefix(string(rep.body), `{"ok":false,"error":{"code":"`+tc.code+`"`), "%s: %s", tc.name, rep.body)
		})
	}
}
