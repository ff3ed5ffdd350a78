package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type caseListData struct {
	Cases []struct {
		CaseID    string   `json:"caseId"`
		Status    string   `json:"status"`
		OpenedAt  string   `json:"openedAt"`
		YourSides []string `json:"yourSides"`
	} `json:"cases"`
	NextCursor *string `json:"nextCursor"`
}

// listAll follows the list's pages from the first with the query and
// returns the case ids in order, and how many pages it took.
func (s *stack) listAll(t *testing.T, token string, query url.Values) ([]string, int) {
	t.Helper()
	var ids []string
	pages := 0
	for {
		rep := s.do(t, http.MethodGet, "/api/disputes?"+query.Encode(), token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.Equal(t, "private, no-store", rep.header.Get("Cache-Control"))
		page := data[caseListData](t, rep)
		pages++
		for _, c := range page.Cases {
			ids = append(ids, c.CaseID)
		}
		if page.NextCursor == nil {
			return ids, pages
		}
		query.Set("cursor", *page.NextCursor)
	}
}

// GET /api/disputes lists the caller's cases newest first, in pages that
// a cursor follows; each side's partner sees the cases it acts in, and no
// other partner, tenant or environment sees any.
func TestTheCaseListPagesThroughTheCallersCases(t *testing.T) {
	s := newStack(t)
	base := time.Now().Add(-10 * time.Hour).Truncate(time.Millisecond)
	var newestFirst []string
	for i := range 5 {
		o := s.openAt(t, base.Add(time.Duration(i)*time.Hour))
		newestFirst = append([]string{o.id}, newestFirst...)
	}

	ids, pages := s.listAll(t, s.claimant, url.Values{"limit": {"2"}})
	require.Equal(t, newestFirst, ids)
	require.Equal(t, 3, pages, "2 + 2 + 1")
	ids, _ = s.listAll(t, s.respondent, url.Values{})
	require.Equal(t, newestFirst, ids, "the respondent's partner acts for a participant of each")

	first := data[caseListData](t, s.do(t, http.MethodGet, "/api/disputes?limit=1", s.claimant, "", nil))
	require.Equal(t, []string{"claimant"}, first.Cases[0].YourSides)
	require.Equal(t, "awaiting_respondent", first.Cases[0].Status)
	require.Equal(t, base.Add(4*time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"), first.Cases[0].OpenedAt)

	for name, token := range map[string]string{"another partner": s.stranger, "another tenant": s.otherTenant, "the live environment": s.live} {
		ids, _ := s.listAll(t, token, url.Values{})
		require.Empty(t, ids, name)
	}
}

// The filters: a status, and a window of opening instants (from
// inclusive, to exclusive), which a cursor keeps.
func TestTheCaseListFilters(t *testing.T) {
	s := newStack(t)
	base := time.Now().Add(-10 * time.Hour).Truncate(time.Millisecond)
	var opened []string
	for i := range 4 {
		opened = append(opened, s.openAt(t, base.Add(time.Duration(i)*time.Hour)).id)
	}
	// The claimant withdraws the second case before the respondent joins.
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/cases/"+opened[1]+"/termination-requests", s.claimant, newKey(), nil).status)

	ids, _ := s.listAll(t, s.claimant, url.Values{"status": {"terminated"}})
	require.Equal(t, []string{opened[1]}, ids)
	ids, pages := s.listAll(t, s.claimant, url.Values{"status": {"awaiting_respondent"}, "limit": {"1"}})
	require.Equal(t, []string{opened[3], opened[2], opened[0]}, ids)
	require.GreaterOrEqual(t, pages, 3)

	at := func(i int) string { return base.Add(time.Duration(i) * time.Hour).UTC().Format(time.RFC3339Nano) }
	ids, _ = s.listAll(t, s.claimant, url.Values{"openedAfter": {at(1)}, "openedBefore": {at(3)}})
	require.Equal(t, []string{opened[2], opened[1]}, ids, "from the second case's instant, up to the fourth's")
	ids, _ = s.listAll(t, s.claimant, url.Values{"openedAfter": {at(1)}, "limit": {"1"}})
	require.Equal(t, []string{opened[3], opened[2], opened[1]}, ids)
	ids, _ = s.listAll(t, s.claimant, url.Values{"openedBefore": {at(1)}})
	require.Equal(t, []string{opened[0]}, ids)
}

// Every query the list cannot read is refused with invalid_query in the
// website envelope, and changes nothing.
func TestTheCaseListRefusesWhatItCannotRead(t *testing.T) {
	s := newStack(t)
	s.open(t)
	for name, query := range map[string]string{
		"a limit of 0":           "limit=0",
		"a limit over 100":       "limit=101",
		"a limit in words":       "limit=ten",
		"an unknown status":      "status=pending",
		"a date without a zone":  "openedAfter=2026-11-27T10:00:00",
		"a date only":            "openedBefore=2026-11-27",
		"an empty window":        "openedAfter=2026-11-27T10:00:00Z&openedBefore=2026-11-27T10:00:00Z",
		"a cursor not ours":      "cursor=bm90LWEtY3Vyc29y",
		"a cursor not in base64": "cursor=%25%25%25",
	} {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodGet, "/api/disputes?"+query, s.claimant, "", nil)
			require.Equal(t, http.StatusBadRequest, rep.status, name)
			require.True(t, strings.HasPrefix(string(rep.body), `{"ok":false,"error":{"code":"invalid_query"`), "%s: %s", name, rep.body)
		})
	}
	rep := s.do(t, http.MethodGet, "/api/disputes", "", "", nil)
	require.Equal(t, http.StatusUnauthorized, rep.status)
}

// A store written before the index existed gets its cases listed after
// IndexExisting, once: the marker makes a second start read nothing.
func TestCasesStoredBeforeTheIndexAreIndexedOnce(t *testing.T) {
	s := newStack(t)
	a, b := s.open(t), s.open(t)
	ctx := context.Background()
	for _, key := range s.rdb.Keys(ctx, "pc:cases:*:case-index").Val() {
		require.NoError(t, s.rdb.Del(ctx, key).Err())
	}
	ids, _ := s.listAll(t, s.claimant, url.Values{})
	require.Empty(t, ids, "the index is gone")

	require.NoError(t, s.cases.IndexExisting(ctx))
	ids, _ = s.listAll(t, s.claimant, url.Values{})
	require.ElementsMatch(t, []string{a.id, b.id}, ids)
	require.NotEmpty(t, s.rdb.Keys(ctx, "pc:cases:*:case-index-built-2").Val())

	for _, key := range s.rdb.Keys(ctx, "pc:cases:*:case-index").Val() {
		require.NoError(t, s.rdb.Del(ctx, key).Err())
	}
	require.NoError(t, s.cases.IndexExisting(ctx))
	ids, _ = s.listAll(t, s.claimant, url.Values{})
	require.Empty(t, ids, "done once: the markers stop a second pass")
}
