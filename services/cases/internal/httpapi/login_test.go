package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

type loginData struct {
	RespondentLogin *struct {
		RespondentLoginPath string `json:"respondentLoginPath"`
		CapabilityDelivery  string `json:"capabilityDelivery"`
	} `json:"respondentLogin"`
	Events []struct {
		Type string `json:"type"`
	} `json:"events"`
}

// loginToken is the token of a respondentLoginPath (/respond/<id>#login=<token>).
func loginToken(t *testing.T, id, path string) string {
	t.Helper()
	prefix := "/respond/" + id + "#login="
	require.True(t, strings.HasPrefix(path, prefix), path)
	return strings.TrimPrefix(path, prefix)
}

func TestTheClaimantsPartnerReissuesTheHostedRespondentsSignInLink(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	c := s.open(t, hostedRespondent)
	oldLogin := "login-" + c.inviteToken
	path := "/api/cases/" + c.id + "/respondent-login"

	// The respondent signed in with the link filings showed once.
	oldSession := auth.NewToken("pc_rs_")
	require.NoError(t, s.cases.SpendLogin(ctx, c.id, auth.HashToken(oldLogin), auth.HashToken(oldSession), "csrf", time.Now(), time.Hour))

	key := newKey()
	rep := s.do(t, http.MethodPost, path, s.claimant, key, nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	got := data[loginData](t, rep)
	require.NotNil(t, got.RespondentLogin)
	require.Equal(t, "show_once_not_replayed", got.RespondentLogin.CapabilityDelivery)
	newLogin := loginToken(t, c.id, got.RespondentLogin.RespondentLoginPath)
	require.Len(t, got.Events, 1)
	require.Equal(t, "respondent_link_reissued", got.Events[0].Type)
	require.Contains(t, s.docketTypes(t, c.id), "respondent_link_reissued")

	// A replay answers the same act without the link.
	replay := s.do(t, http.MethodPost, path, s.claimant, key, nil)
	require.Equal(t, http.StatusCreated, replay.status, string(replay.body))
	require.Empty(t, data[loginData](t, replay).RespondentLogin.RespondentLoginPath, "the link is shown once")
	require.NotContains(t, string(replay.body), newLogin)

	// The open session is untouched: nothing ends it silently.
	_, ok, err := s.cases.RespondSession(ctx, c.id, auth.HashToken(oldSession))
	require.NoError(t, err)
	require.True(t, ok, "the session opened with the old link stays valid")

	// The old link is dead (it is no longer the case's), the new one signs in once.
	require.ErrorIs(t, s.cases.SpendLogin(ctx, c.id, auth.HashToken(oldLogin), auth.HashToken(auth.NewToken("pc_rs_")), "csrf", time.Now(), time.Hour), store.ErrLoginStale)
	spent, err := s.cases.LoginSpent(ctx, c.id, auth.HashToken(newLogin))
	require.NoError(t, err)
	require.False(t, spent, "the new link is unspent at once")
	require.NoError(t, s.cases.SpendLogin(ctx, c.id, auth.HashToken(newLogin), auth.HashToken(auth.NewToken("pc_rs_")), "csrf", time.Now(), time.Hour))
	require.ErrorIs(t, s.cases.SpendLogin(ctx, c.id, auth.HashToken(newLogin), auth.HashToken(auth.NewToken("pc_rs_")), "csrf", time.Now(), time.Hour), store.ErrLoginSpent)

	// Two more fit the hour; the fourth is refused and changes nothing.
	for range 2 {
		rep := s.do(t, http.MethodPost, path, s.claimant, newKey(), nil)
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	}
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.claimant, newKey(), nil)
		require.Equal(t, http.StatusTooManyRequests, rep.status, string(rep.body))
		require.Equal(t, "login_reissue_limited", rep.code)
	})
}

func TestReissuingTheSignInLinkIsRefused(t *testing.T) {
	s := newStack(t)
	hosted := s.open(t, hostedRespondent)
	partnered := s.open(t) // its respondent acts through partner-r
	path := func(id string) string { return "/api/cases/" + id + "/respondent-login" }

	t.Run("for another partner, as if the case did not exist", func(t *testing.T) {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path(hosted.id), s.stranger, newKey(), nil)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		})
	})
	t.Run("for the respondent's side", func(t *testing.T) {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path(partnered.id), s.respondent, newKey(), nil)
			require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		})
	})
	t.Run("for a respondent its partner acts for", func(t *testing.T) {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path(partnered.id), s.claimant, newKey(), nil)
			require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
			require.Equal(t, "respondent_not_hosted", rep.code)
		})
	})
	t.Run("without an Idempotency-Key", func(t *testing.T) {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path(hosted.id), s.claimant, "", nil)
			require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		})
	})
	t.Run("after the case ended", func(t *testing.T) {
		// The claimant withdraws before any respondent joined.
		rep := s.do(t, http.MethodPost, "/api/cases/"+hosted.id+"/termination-requests", s.claimant, newKey(), map[string]any{})
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
		var env struct {
			Data struct {
				Case caseData `json:"case"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rep.body, &env))
		require.Equal(t, "terminated", env.Data.Case.Status)
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, path(hosted.id), s.claimant, newKey(), nil)
			require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
			require.Equal(t, "case_closed", rep.code)
		})
	})
}

// A link spent before reissues existed carries the earlier, per-case
// marker: it stays spent, and a reissue moves the mark to that link's own
// marker, so the new link signs in once and the old one never again.
func TestALinkSpentBeforeReissuesExistedStaysSpent(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	c := s.open(t, hostedRespondent)
	oldHash := auth.HashToken("login-" + c.inviteToken)
	caseKeys, err := s.rdb.Keys(ctx, "pc:cases:*:case:"+c.id).Result()
	require.NoError(t, err)
	require.Len(t, caseKeys, 1)
	legacy := caseKeys[0] + ":login-spent"
	require.NoError(t, s.rdb.Set(ctx, legacy, time.Now().UnixMilli(), 0).Err())

	spent, err := s.cases.LoginSpent(ctx, c.id, oldHash)
	require.NoError(t, err)
	require.True(t, spent)
	require.ErrorIs(t, s.cases.SpendLogin(ctx, c.id, oldHash, auth.HashToken(auth.NewToken("pc_rs_")), "csrf", time.Now(), time.Hour), store.ErrLoginSpent)

	rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/respondent-login", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	newHash := auth.HashToken(loginToken(t, c.id, data[loginData](t, rep).RespondentLogin.RespondentLoginPath))
	require.Zero(t, s.rdb.Exists(ctx, legacy).Val(), "the per-case marker is gone")
	require.EqualValues(t, 1, s.rdb.Exists(ctx, caseKeys[0]+":login-spent:"+oldHash).Val(), "its mark moved to the old link's own marker")
	spent, err = s.cases.LoginSpent(ctx, c.id, newHash)
	require.NoError(t, err)
	require.False(t, spent)
	require.NoError(t, s.cases.SpendLogin(ctx, c.id, newHash, auth.HashToken(auth.NewToken("pc_rs_")), "csrf", time.Now(), time.Hour))
}
