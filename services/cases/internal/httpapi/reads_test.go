package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
)

// A case opened through filings is readable on all three route families
// by the partners acting for its participants, privately and never cached.
func TestAnOpenedCaseIsReadableOnEveryRouteFamily(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	for _, path := range []string{"/api/cases/" + c.id, "/api/v2/cases/" + c.id, "/api/disputes/" + c.id} {
		for _, token := range []string{s.claimant, s.respondent} {
			rep := s.do(t, http.MethodGet, path, token, "", nil)
			require.Equal(t, http.StatusOK, rep.status, "%s: %s", path, rep.body)
			require.Equal(t, "private, no-store", rep.header.Get("Cache-Control"), path)
			got := data[caseData](t, rep)
			require.Equal(t, c.id, got.CaseID)
			require.Equal(t, "awaiting_respondent", got.Status)
			require.Equal(t, int64(1), got.LastSequence, "the opened event")
			require.Len(t, got.Participants, 2)
		}
	}
	rep := s.do(t, http.MethodGet, "/api/disputes/"+c.id, s.claimant, "", nil)
	require.True(t, strings.HasPrefix(string(rep.body), `{"ok":true,"data":{`), "the website alias keeps its envelope: %s", rep.body)
	require.NotContains(t, string(rep.body), auth.HashToken(c.inviteToken), "capability hashes never leave the service")

	for _, path := range []string{"/api/cases/" + c.id + "/participants", "/api/v2/cases/" + c.id + "/participants"} {
		rep := s.do(t, http.MethodGet, path, s.respondent, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.Equal(t, "private, no-store", rep.header.Get("Cache-Control"))
		got := data[caseData](t, rep)
		require.Len(t, got.Participants, 2)
		require.Equal(t, "claimant", got.Participants[0].Side)
		require.True(t, got.Participants[0].Joined)
		require.False(t, got.Participants[1].Joined, "the respondent has not joined")
	}

	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/rules", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Contains(t, string(rep.body), `"respondentJoinSeconds":1209600`, "14 days, pinned at opening")
}

// Every route of a case answers a credential that may not see it exactly
// as it answers for a case that does not exist: 404, a code that says the
// case may still be opening, Retry-After. Nothing tells another partner,
// another tenant or the other environment that the case exists.
func TestACaseIsInvisibleOutsideItsPartnersTenantAndEnvironment(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	paths := []string{
		"/api/cases/%s", "/api/v2/cases/%s", "/api/disputes/%s",
		"/api/cases/%s/participants", "/api/v2/cases/%s/participants",
		"/api/cases/%s/events", "/api/v2/cases/%s/docket", "/api/disputes/%s/docket", "/api/disputes/%s/rules",
	}
	callers := map[string]string{
		"another partner of the tenant": s.stranger, "another tenant": s.otherTenant, "the live environment": s.live,
		"a claimant agent without membership or capability": s.claimantAgent,
		"a respondent agent without the invitation":         s.respondentAgent,
	}
	for _, p := range paths {
		for who, token := range callers {
			hidden := s.do(t, http.MethodGet, strings.ReplaceAll(p, "%s", c.id), token, "", nil, "X-Request-Id", "req-same")
			missing := s.do(t, http.MethodGet, strings.ReplaceAll(p, "%s", "cs_never_opened"), token, "", nil, "X-Request-Id", "req-same")
			for _, rep := range []reply{hidden, missing} {
				require.Equal(t, http.StatusNotFound, rep.status, "%s, %s: %s", p, who, rep.body)
				require.Equal(t, "case_not_found_or_opening", rep.code, "%s, %s", p, who)
				require.Equal(t, "1", rep.header.Get("Retry-After"))
			}
			require.Equal(t, strings.ReplaceAll(string(hidden.body), c.id, "X"), strings.ReplaceAll(string(missing.body), "cs_never_opened", "X"),
				"%s, %s: a hidden case and a missing one answer alike", p, who)
		}
	}
	// The respondent agent sees the case once it presents the invitation.
	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id, s.respondentAgent, "", nil, auth.CapabilityHeader, c.inviteToken)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	// No credential at all is 401, not 404.
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, "", "", nil)
	require.Equal(t, http.StatusUnauthorized, rep.status)
}

// The docket pages through the case's events by sequence, with a cursor.
func TestTheDocketPagesBySequence(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	for range 3 { // each invitation records respondent_invited
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, newKey(), map[string]any{})
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	}
	var seen []int64
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		path := "/api/v2/cases/" + c.id + "/docket?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		rep := s.do(t, http.MethodGet, path, s.respondent, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		page := data[docketData](t, rep)
		require.Equal(t, int64(4), page.LastSequence)
		for _, e := range page.Events {
			seen = append(seen, e.Sequence)
			require.Equal(t, "case-event:"+c.id+":"+strconv.FormatInt(e.Sequence, 10), e.EventID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	require.Equal(t, []int64{1, 2, 3, 4}, seen, "every event once, in order, without gaps")
	require.Equal(t, []string{"opened", "respondent_invited", "respondent_invited", "respondent_invited"}, s.docketTypes(t, c.id))

	for _, q := range []string{"cursor=-1", "cursor=abc", "limit=0", "limit=201", "limit=x"} {
		rep := s.do(t, http.MethodGet, "/api/cases/"+c.id+"/events?"+q, s.claimant, "", nil)
		require.Equal(t, http.StatusBadRequest, rep.status, q)
		require.Equal(t, "invalid_query", rep.code, q)
	}
	rep := s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/docket?cursor=4", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	require.JSONEq(t, `{"ok":true,"data":{"caseId":"`+c.id+`","events":[],"nextCursor":null,"lastSequence":4}}`, string(rep.body))
}

// The current rules are public and name the version and hash every new
// case is pinned to.
func TestTheCurrentRulesArePublic(t *testing.T) {
	s := newStack(t)
	version, hash, text := api.Rules()
	for _, path := range []string{"/api/rules/current", "/api/v2/rules/current"} {
		rep := s.do(t, http.MethodGet, path, "", "", nil)
		require.Equal(t, http.StatusOK, rep.status)
		got := data[struct{ Version, Hash, Text string }](t, rep)
		require.Equal(t, version, got.Version)
		require.Equal(t, hash, got.Hash)
		require.Equal(t, string(text), got.Text)
	}
}
