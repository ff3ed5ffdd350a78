package respond_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reissueLogin asks for a new sign-in link as the claimant's partner does,
// and returns its token.
func (s *stack) reissueLogin(t *testing.T, o opened) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/api/cases/"+o.id+"/respondent-login", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.claimant)
	req.Header.Set("Idempotency-Key", "reissue-"+time.Now().Format("150405.000000000"))
	r := s.send(t, req)
	require.Equal(t, http.StatusCreated, r.status, r.body)
	var env struct {
		Data struct {
			RespondentLogin struct {
				RespondentLoginPath string `json:"respondentLoginPath"`
			} `json:"respondentLogin"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &env))
	path := env.Data.RespondentLogin.RespondentLoginPath
	prefix := "/respond/" + o.id + "#login="
	require.True(t, strings.HasPrefix(path, prefix), path)
	return strings.TrimPrefix(path, prefix)
}

func TestAReissuedLinkSignsInOnceAndEndsNoSession(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	before := s.signIn(t, o)

	fresh := o
	fresh.login = s.reissueLogin(t, o)
	require.Contains(t, s.docket(t, o.id), "respondent_link_reissued")

	// The session opened with the first link still shows the case.
	r := s.get(t, "/respond/"+o.id, before)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "Sign out", "the browser is still signed in")

	// The first link is no longer the case's, on the preview and the exchange.
	r = s.post(t, "/respond/"+o.id+"/session/preview", "", confirmed(o.login), sameOrigin...)
	require.Equal(t, http.StatusForbidden, r.status, r.body)
	require.Equal(t, "login_invalid", r.refusal)
	r = s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), sameOrigin...)
	require.Equal(t, "login_invalid", r.refusal)

	// The new one is unspent at once, and works once.
	r = s.post(t, "/respond/"+o.id+"/session/preview", "", confirmed(fresh.login), sameOrigin...)
	require.Equal(t, http.StatusOK, r.status, r.body)
	after := s.signIn(t, fresh)
	require.NotEqual(t, before, after)
	r = s.post(t, "/respond/"+o.id+"/session", "", confirmed(fresh.login), sameOrigin...)
	require.Equal(t, http.StatusGone, r.status, r.body)
	require.Equal(t, "login_used", r.refusal)

	// Both sessions are open: nothing ended one silently.
	for _, session := range []string{before, after} {
		require.Contains(t, s.get(t, "/respond/"+o.id, session).body, "Sign out")
	}
}
