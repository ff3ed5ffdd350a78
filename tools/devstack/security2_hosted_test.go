package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
)

// TestHostedSignInNeedsTheConfirmationThroughTheEdge shows item 8 of
// security round 2 against the running stack, through the edge: opening a
// respondent login link or a console link signs nothing in. The page's
// own post on load goes to the preview, which answers what the link is for
// and spends nothing; an exchange without the confirmation the "Sign in as
// …" button adds is refused and spends nothing; only the confirmed
// exchange signs in. Posts carry what Chromium sends for the page's own
// forms under Referrer-Policy no-referrer (Origin: null, Sec-Fetch-Site:
// same-origin).
func TestHostedSignInNeedsTheConfirmationThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	st := startStack(t)
	p := newProbe(t, st)
	orch := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	page := &pageClient{t: t, edge: p.edge}

	t.Run("the respondent page", func(t *testing.T) {
		id, loginPath := p.openHosted(t, orch)
		_, login, ok := strings.Cut(loginPath, "#login=")
		require.True(t, ok, loginPath)

		// The page the link loads posts the fragment to the preview, never
		// to the exchange.
		status, body, _ := page.get("/respond/" + id)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<form id="preview" method="post" action="/respond/`+id+`/session/preview"`)
		require.NotContains(t, body, `action="/respond/`+id+`/session"`)

		// The case opens in cases once its case-opened fact is applied; until
		// then the token is as unknown as a wrong one.
		var preview string
		require.Eventually(t, func() bool {
			status, preview, _ = page.post("/respond/"+id+"/session/preview", url.Values{"login": {login}})
			return status == http.StatusOK
		}, 30*time.Second, 200*time.Millisecond)
		require.Contains(t, preview, `data-page="confirm"`)
		require.Contains(t, preview, `<dd id="confirm-case">`+id+`</dd>`)
		require.Contains(t, preview, `<dd id="confirm-external">partner-case-42</dd>`)
		require.Contains(t, preview, `name="confirm" value="signin"`)

		caseKeys := "pc:cases:*case:" + id + "*"
		redistest.Unchanged(t, p.rdb, bookkeeping, func() {
			status, body, cookies := page.post("/respond/"+id+"/session/preview", url.Values{"login": {login}})
			require.Equal(t, http.StatusOK, status, body)
			require.Empty(t, cookies)
			status, body, cookies = page.post("/respond/"+id+"/session", url.Values{"login": {login}})
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Equal(t, "login_unconfirmed", refusalCode(body))
			require.Empty(t, cookies)
		}, caseKeys)

		status, body, cookies := page.post("/respond/"+id+"/session", url.Values{"login": {login}, "confirm": {"signin"}})
		require.Equal(t, http.StatusSeeOther, status, body)
		require.Len(t, cookies, 1, "the confirmed exchange signs in")
		status, body, _ = page.post("/respond/"+id+"/session/preview", url.Values{"login": {login}})
		require.Equal(t, http.StatusGone, status, "and the link is spent")
		require.Equal(t, "login_used", refusalCode(body))
	})

	t.Run("the partner console", func(t *testing.T) {
		link := p.do(t, "POST", "/api/console/links", orch, "", map[string]any{
			"capabilities": []string{"view"}, "ttlSeconds": 600, "returnUrl": "https://partner-a.example/settings"})
		require.Equal(t, http.StatusCreated, link.status, string(link.body))
		var l struct {
			Data struct {
				URL string `json:"url"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(link.body, &l))
		_, token, ok := strings.Cut(l.Data.URL, "#link=")
		require.True(t, ok, l.Data.URL)

		status, body, _ := page.get("/console/")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<form id="preview" method="post" action="/console/session/preview"`)

		consoleKeys := []string{"pc:console:*", "pc:auth:cred:*", "pc:auth:token:*"}
		var preview string
		redistest.Unchanged(t, p.rdb, bookkeeping, func() {
			var cookies []*http.Cookie
			status, preview, cookies = page.post("/console/session/preview", url.Values{"link": {token}})
			require.Equal(t, http.StatusOK, status, preview)
			require.Empty(t, cookies)
			status, body, cookies = page.post("/console/session", url.Values{"link": {token}})
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Equal(t, "link_unconfirmed", refusalCode(body))
			require.Empty(t, cookies)
		}, consoleKeys...)
		require.Contains(t, preview, `<dd id="confirm-partner">partner-a</dd>`)
		require.Contains(t, preview, `<dd id="confirm-tenant">tenant-dev</dd>`)
		require.Contains(t, preview, `<dd id="confirm-environment">sandbox</dd>`)

		status, body, cookies := page.post("/console/session", url.Values{"link": {token}, "confirm": {"signin"}})
		require.Equal(t, http.StatusSeeOther, status, body)
		require.Len(t, cookies, 1, "the confirmed exchange signs in")
		status, body, _ = page.post("/console/session/preview", url.Values{"link": {token}})
		require.Equal(t, http.StatusGone, status, "and the link is spent")
		require.Equal(t, "link_used", refusalCode(body))
	})
}

// openHosted opens a case, filed by who's partner, against a respondent
// no partner acts for (a hosted respondent), and returns its id and the
// respondent's one-time link, shown once: /respond/<id>#login=<token>.
func (p *probe) openHosted(t *testing.T, who minted) (string, string) {
	t.Helper()
	d := p.prepare(t, who, claimantInitiated())
	opened := p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", who, p.key(), d.confirmation("p-claimant", who.cred.PublicID, "org-acme"))
	require.Equal(t, http.StatusCreated, opened.status, string(opened.body))
	var o struct {
		Data struct {
			CaseID   string `json:"caseId"`
			ShowOnce struct {
				RespondentLoginPath string `json:"respondentLoginPath"`
			} `json:"showOnce"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(opened.body, &o))
	return o.Data.CaseID, o.Data.ShowOnce.RespondentLoginPath
}

// pageClient is a browser's view of the hosted pages through the edge:
// no cookie jar, no redirects followed, and the headers Chromium sends
// with a page's own form post.
type pageClient struct {
	t    *testing.T
	edge string
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (c *pageClient) get(path string) (int, string, []*http.Cookie) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.edge+path, nil)
	require.NoError(c.t, err)
	return c.send(req)
}

func (c *pageClient) post(path string, form url.Values) (int, string, []*http.Cookie) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.edge+path, strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return c.send(req)
}

func (c *pageClient) send(req *http.Request) (int, string, []*http.Cookie) {
	c.t.Helper()
	resp, err := noRedirect.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(b), resp.Cookies()
}

var refusalAttr = regexp.MustCompile(`data-refusal="([a-z_]+)"`)

// refusalCode is the code a hosted page's refusal carries.
func refusalCode(body string) string {
	if m := refusalAttr.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}
