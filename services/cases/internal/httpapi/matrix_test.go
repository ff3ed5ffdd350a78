package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command of an opened case meets the same refusals, in the same
// way, on a case in its evidence round: another partner of the tenant,
// another tenant and the other environment do not see the case; no
// credential, no key, a short key, a malformed body and an unknown field
// are refused before anything is decided; a key reused with another body
// is 422. None of them changes the case, its docket or its documents.
func TestEveryCommandRefusesWithoutChangingAnything(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", s.respondent, newKey(), map[string]any{"text": "Denied."}).status)
	filed := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/submissions", s.claimant, newKey(), map[string]any{"text": "Invoice 17."})
	require.Equal(t, http.StatusCreated, filed.status, string(filed.body))
	submission := data[actData](t, filed).SubmissionID
	requested := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, requested.status, string(requested.body))
	termination := data[actData](t, requested).TerminationID

	commands := []struct {
		name, method, path string
		body               map[string]any
	}{
		{"message", http.MethodPost, "/api/cases/" + c.id + "/messages", map[string]any{"text": "hello"}},
		{"mark messages read", http.MethodPatch, "/api/v2/cases/" + c.id + "/messages", map[string]any{"readThrough": "msg_x"}},
		{"submission", http.MethodPost, "/api/v2/cases/" + c.id + "/submissions", map[string]any{"text": "Exhibit B."}},
		{"amendment", http.MethodPatch, "/api/cases/" + c.id + "/submissions/" + submission, map[string]any{"text": "Invoice 17, corrected."}},
		{"record confirmation", http.MethodPost, "/api/v2/cases/" + c.id + "/record-confirmations", map[string]any{}},
		{"termination request", http.MethodPost, "/api/cases/" + c.id + "/termination-requests", map[string]any{}},
		{"termination confirmation", http.MethodPost, "/api/v2/cases/" + c.id + "/termination-requests/" + termination + "/confirmations", map[string]any{}},
		{"invitation", http.MethodPost, "/api/disputes/" + c.id + "/invite", map[string]any{}},
		{"answer", http.MethodPost, "/api/v2/cases/" + c.id + "/answer", map[string]any{"text": "Denied again."}},
	}
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			refusals := []struct {
				name   string
				token  string
				key    string
				body   any
				status int
				code   string
			}{
				{"another partner of the tenant", s.stranger, newKey(), cmd.body, http.StatusNotFound, "case_not_found_or_opening"},
				{"another tenant", s.otherTenant, newKey(), cmd.body, http.StatusNotFound, "case_not_found_or_opening"},
				{"the other environment", s.live, newKey(), cmd.body, http.StatusNotFound, "case_not_found_or_opening"},
				{"an agent with no authority", s.claimantAgent, newKey(), cmd.body, http.StatusNotFound, "case_not_found_or_opening"},
				{"no credential", "", newKey(), cmd.body, http.StatusUnauthorized, "unauthenticated"},
				{"no Idempotency-Key", s.claimant, "", cmd.body, http.StatusBadRequest, "idempotency_key_missing"},
				{"a short Idempotency-Key", s.claimant, "short", cmd.body, http.StatusBadRequest, "idempotency_key_invalid"},
				{"a body that is not JSON", s.claimant, newKey(), []byte(`{"text":`), http.StatusBadRequest, "malformed_json"},
				{"an unknown field", s.claimant, newKey(), withField(cmd.body, "side", "respondent"), http.StatusBadRequest, "unknown_field"},
			}
			for _, r := range refusals {
				s.unchanged(t, func() {
					rep := s.do(t, cmd.method, cmd.path, r.token, r.key, r.body)
					require.Equal(t, r.status, rep.status, "%s: %s", r.name, rep.body)
					require.Equal(t, r.code, rep.code, r.name)
				})
			}
		})
	}

	// A key reused with another body is refused, and the first answer
	// stands.
	key := newKey()
	first := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.claimant, key, map[string]any{"text": "first"})
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	for _, cmd := range commands {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.claimant, key, withField(cmd.body, "participantId", "p-claimant"))
			require.Equal(t, http.StatusUnprocessableEntity, rep.status, "%s: %s", cmd.name, rep.body)
			require.Equal(t, "idempotency_key_reused", rep.code)
		})
	}
}

// withField returns a copy of body with one more member.
func withField(body map[string]any, name string, value any) map[string]any {
	out := map[string]any{name: value}
	for k, v := range body {
		out[k] = v
	}
	return out
}
