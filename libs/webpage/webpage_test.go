package webpage_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/webpage"
)

// The tests drive a small page assembled from the package the way the
// respondent page and the console assemble theirs: a link store keeping
// hashes only, a preview, an exchange that spends the link and opens a
// session in one step, a guarded form post and a sign-out. Each attack of
// the hosted-page security review is one row.

const maxBody = 1 << 10

type record struct {
	spent bool
}

type sessionRecord struct {
	csrf string
}

// memStore is the service's store step, in memory: spend and create the
// session under one lock, as the services' Lua scripts do in Redis.
type memStore struct {
	mu       sync.Mutex
	links    map[string]*record       // by token hash
	sessions map[string]sessionRecord // by cookie hash
	acts     int
}

func (m *memStore) spend(tokenHash, cookieHash, csrf string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.links[tokenHash]
	switch {
	case !ok:
		return errLinkInvalid
	case l.spent:
		return errLinkUsed
	}
	l.spent = true
	m.sessions[cookieHash] = sessionRecord{csrf: csrf}
	return nil
}

var (
	errLinkInvalid = errors.New("link invalid")
	errLinkUsed    = errors.New("link used")
)

type testPage struct {
	site   webpage.Site
	cookie webpage.SessionCookie
	store  *memStore
}

func newPage(t testing.TB) (*testPage, *httptest.Server, string) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	site, err := webpage.NewSite("https://pcourt.example/base/", true)
	require.NoError(t, err)
	p := &testPage{site: site, cookie: site.Cookie("pc_test_session", "/pages"),
		store: &memStore{links: map[string]*record{}, sessions: map[string]sessionRecord{}}}
	token := auth.NewToken("pctl_")
	p.store.links[auth.HashToken(token)] = &record{}

	r := gin.New()
	g := r.Group("/pages", webpage.Headers, webpage.LimitBody(maxBody, func(c *gin.Context) { p.refuse(c, http.StatusRequestEntityTooLarge, "too_large") }))
	g.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "signin") })
	g.POST("/session/preview", p.preview)
	g.POST("/session", p.exchange)
	g.POST("/act", p.guarded(func(c *gin.Context, _ string) {
		p.store.mu.Lock()
		p.store.acts++
		p.store.mu.Unlock()
		c.Redirect(http.StatusSeeOther, p.site.Prefix+"/pages/")
	}))
	g.POST("/signout", p.guarded(func(c *gin.Context, cookieHash string) {
		p.store.mu.Lock()
		delete(p.store.sessions, cookieHash)
		p.store.mu.Unlock()
		p.cookie.Clear(c.Writer)
		c.String(http.StatusOK, "signed_out")
	}))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return p, srv, token
}

func (p *testPage) refuse(c *gin.Context, status int, code string) {
	c.String(status, code)
	c.Abort()
}

func (p *testPage) refusePost(c *gin.Context, err error) {
	switch {
	case errors.Is(err, webpage.ErrCrossOrigin):
		p.refuse(c, http.StatusForbidden, "cross_origin")
	case errors.Is(err, webpage.ErrFormTooLarge):
		p.refuse(c, http.StatusRequestEntityTooLarge, "too_large")
	case errors.Is(err, webpage.ErrCSRFMismatch):
		p.refuse(c, http.StatusForbidden, "csrf_mismatch")
	default:
		p.refuse(c, http.StatusBadRequest, "bad_form")
	}
}

func (p *testPage) checkLink(c *gin.Context) bool {
	token := c.Request.PostForm.Get("link")
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	for hash, l := range p.store.links {
		if webpage.MatchToken(token, hash) {
			if l.spent {
				p.refuse(c, http.StatusGone, "link_used")
				return false
			}
			return true
		}
	}
	p.refuse(c, http.StatusForbidden, "link_invalid")
	return false
}

func (p *testPage) preview(c *gin.Context) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refusePost(c, err)
		return
	}
	if p.checkLink(c) {
		c.String(http.StatusOK, "confirm")
	}
}

func (p *testPage) exchange(c *gin.Context) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refusePost(c, err)
		return
	}
	if !webpage.Confirmed(c.Request) {
		p.refuse(c, http.StatusBadRequest, "link_unconfirmed")
		return
	}
	cookie, csrf := auth.NewToken("pcts_"), auth.NewToken("")
	err := p.store.spend(auth.HashToken(c.Request.PostForm.Get("link")), auth.HashToken(cookie), csrf)
	switch {
	case errors.Is(err, errLinkUsed):
		p.refuse(c, http.StatusGone, "link_used")
	case err != nil:
		p.refuse(c, http.StatusForbidden, "link_invalid")
	default:
		p.cookie.Set(c.Writer, cookie, time.Hour)
		c.Header("X-Test-CSRF", csrf) // the test's stand-in for the page that shows the form
		c.Redirect(http.StatusSeeOther, p.site.Prefix+"/pages/")
	}
}

func (p *testPage) guarded(h func(*gin.Context, string)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := p.site.CheckPost(c.Request); err != nil {
			p.refusePost(c, err)
			return
		}
		value, ok := p.cookie.Value(c.Request)
		p.store.mu.Lock()
		s, found := p.store.sessions[auth.HashToken(value)]
		p.store.mu.Unlock()
		if !ok || !found {
			p.refuse(c, http.StatusUnauthorized, "no_session")
			return
		}
		if err := webpage.CheckCSRF(c.Request, s.csrf); err != nil {
			p.refusePost(c, err)
			return
		}
		h(c, auth.HashToken(value))
	}
}

type reply struct {
	status int
	body   string
	header http.Header
}

func post(t testing.TB, srv *httptest.Server, path string, form url.Values, cookie string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "X-Chunked" {
			req.ContentLength = -1 // sent chunked: the body's size is not announced
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "pc_test_session", Value: cookie})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	return reply{status: resp.StatusCode, body: readAll(t, resp), header: resp.Header}
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

var sameOrigin = []string{"Origin", "https://pcourt.example"}

func signIn(t testing.TB, srv *httptest.Server, token string) (cookie, csrf string) {
	t.Helper()
	r := post(t, srv, "/pages/session", url.Values{"link": {token}, webpage.ConfirmField: {webpage.ConfirmValue}}, "", sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == "pc_test_session" {
			cookie = ck.Value
		}
	}
	require.NotEmpty(t, cookie)
	return cookie, r.header.Get("X-Test-CSRF")
}

// Every response carries the policy headers, refusals included, and the
// policy allows no inline script, no framing and no foreign origin.
func TestEveryResponseCarriesThePolicyHeaders(t *testing.T) {
	_, srv, _ := newPage(t)
	for _, r := range []reply{
		post(t, srv, "/pages/session/preview", url.Values{"link": {"x"}}, "", sameOrigin...),
		post(t, srv, "/pages/session/preview", url.Values{"link": {"x"}}, ""),
	} {
		require.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
		require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
		require.Equal(t, "private, no-store", r.header.Get("Cache-Control"))
		require.Equal(t, webpage.ContentSecurityPolicy, r.header.Get("Content-Security-Policy"))
	}
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		require.Contains(t, webpage.ContentSecurityPolicy, directive)
	}
	require.NotContains(t, webpage.ContentSecurityPolicy, "unsafe")
}

// The preview spends nothing: previewed any number of times, the link
// still signs in once, and then neither the preview nor the exchange
// accepts it again.
func TestALinkSignsInOnceAndItsPreviewSpendsNothing(t *testing.T) {
	_, srv, token := newPage(t)
	for range 3 {
		r := post(t, srv, "/pages/session/preview", url.Values{"link": {token}}, "", sameOrigin...)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Equal(t, "confirm", r.body)
	}
	signIn(t, srv, token)
	for _, path := range []string{"/pages/session/preview", "/pages/session"} {
		r := post(t, srv, path, url.Values{"link": {token}, webpage.ConfirmField: {webpage.ConfirmValue}}, "", sameOrigin...)
		require.Equal(t, http.StatusGone, r.status, path)
		require.Equal(t, "link_used", r.body, path)
	}
}

// The session cookie is HttpOnly, SameSite=Strict, Secure over https,
// scoped to the pages' path under the base URL's, and lives as long as
// the session.
func TestTheSessionCookieIsScopedAndUnreadableToScripts(t *testing.T) {
	_, srv, token := newPage(t)
	r := post(t, srv, "/pages/session", url.Values{"link": {token}, webpage.ConfirmField: {webpage.ConfirmValue}}, "", sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	cookies := (&http.Response{Header: r.header}).Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	require.Equal(t, "pc_test_session", ck.Name)
	require.Equal(t, "/base/pages", ck.Path)
	require.True(t, ck.HttpOnly)
	require.True(t, ck.Secure)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, 3600, ck.MaxAge)
	require.Equal(t, "/base/pages/", r.header.Get("Location"))
}

// Each attack is refused with its status and changes nothing: no link is
// spent, no act is done.
func TestAttacksOnTheFormsAreRefused(t *testing.T) {
	p, srv, token := newPage(t)
	otherToken := auth.NewToken("pctl_")
	p.store.links[auth.HashToken(otherToken)] = &record{}
	cookie, csrf := signIn(t, srv, token)
	confirm := url.Values{"link": {otherToken}, webpage.ConfirmField: {webpage.ConfirmValue}}

	tests := []struct {
		name    string
		path    string
		form    url.Values
		cookie  string
		headers []string
		status  int
		code    string
	}{
		{"an exchange posted by another site", "/pages/session", confirm, "", []string{"Origin", "https://evil.example"}, http.StatusForbidden, "cross_origin"},
		{"an exchange from another scheme of the same host", "/pages/session", confirm, "", []string{"Origin", "http://pcourt.example"}, http.StatusForbidden, "cross_origin"},
		{"an exchange with Origin null and a cross-site fetch", "/pages/session", confirm, "", []string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross_origin"},
		{"an exchange saying nothing of where it came from", "/pages/session", confirm, "", nil, http.StatusForbidden, "cross_origin"},
		{"an exchange the person did not confirm (the page's own module on load)", "/pages/session", url.Values{"link": {otherToken}}, "", sameOrigin, http.StatusBadRequest, "link_unconfirmed"},
		{"a forged link", "/pages/session", url.Values{"link": {"pctl_forged"}, webpage.ConfirmField: {webpage.ConfirmValue}}, "", sameOrigin, http.StatusForbidden, "link_invalid"},
		{"an oversized exchange", "/pages/session", url.Values{"link": {strings.Repeat("a", maxBody)}}, "", sameOrigin, http.StatusRequestEntityTooLarge, "too_large"},
		{"an act posted by another site", "/pages/act", url.Values{"csrf": {csrf}}, cookie, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "cross_origin"},
		{"an act without a session", "/pages/act", url.Values{"csrf": {csrf}}, "", sameOrigin, http.StatusUnauthorized, "no_session"},
		{"an act with an unknown session", "/pages/act", url.Values{"csrf": {csrf}}, auth.NewToken("pcts_"), sameOrigin, http.StatusUnauthorized, "no_session"},
		{"an act with an overlong cookie", "/pages/act", url.Values{"csrf": {csrf}}, strings.Repeat("c", webpage.MaxCookieValue+1), sameOrigin, http.StatusUnauthorized, "no_session"},
		{"an act without a CSRF token", "/pages/act", url.Values{}, cookie, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"an act with an empty CSRF token", "/pages/act", url.Values{"csrf": {""}}, cookie, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"an act with a wrong CSRF token", "/pages/act", url.Values{"csrf": {csrf + "x"}}, cookie, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"an act whose body outgrows the limit unannounced", "/pages/act", url.Values{"csrf": {csrf}, "text": {strings.Repeat("é", maxBody)}}, cookie, append([]string{"X-Chunked", "1"}, sameOrigin...), http.StatusRequestEntityTooLarge, "too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, srv, tc.path, tc.form, tc.cookie, tc.headers...)
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, tc.code, r.body)
			require.Equal(t, 0, p.store.acts, "a refused post acted")
			require.False(t, p.store.links[auth.HashToken(otherToken)].spent, "a refused exchange spent the link")
		})
	}

	// The same session acts when the post is its own.
	r := post(t, srv, "/pages/act", url.Values{"csrf": {csrf}}, cookie, "Origin", "null", "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, 1, p.store.acts)
}

// Sign-out ends the session in the store and clears the cookie: the old
// cookie value, replayed, is no session any more.
func TestSignOutEndsTheSession(t *testing.T) {
	p, srv, token := newPage(t)
	cookie, csrf := signIn(t, srv, token)

	r := post(t, srv, "/pages/signout", url.Values{"csrf": {csrf}}, cookie, sameOrigin...)
	require.Equal(t, http.StatusOK, r.status, r.body)
	cleared := (&http.Response{Header: r.header}).Cookies()
	require.Len(t, cleared, 1)
	require.Equal(t, "", cleared[0].Value)
	require.Equal(t, -1, cleared[0].MaxAge)
	require.Equal(t, "/base/pages", cleared[0].Path)
	require.True(t, cleared[0].HttpOnly)

	r = post(t, srv, "/pages/act", url.Values{"csrf": {csrf}}, cookie, sameOrigin...)
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Equal(t, 0, p.store.acts)
}

func TestNewSite(t *testing.T) {
	tests := []struct {
		name   string
		base   string
		secure bool
		want   webpage.Site
		ok     bool
	}{
		{"https with a path", "https://PCourt.example:443/base/", true, webpage.Site{Origin: "https://pcourt.example", Prefix: "/base", SecureCookie: true}, true},
		{"development over http", "http://127.0.0.1:8080", false, webpage.Site{Origin: "http://127.0.0.1:8080"}, true},
		{"Secure over http on loopback", "http://localhost:8080", true, webpage.Site{Origin: "http://localhost:8080", SecureCookie: true}, true},
		{"https without a Secure cookie", "https://pcourt.example", false, webpage.Site{}, false},
		{"Secure over plain http off loopback", "http://pcourt.example", true, webpage.Site{}, false},
		{"empty", "", false, webpage.Site{}, false},
		{"relative", "/respond", false, webpage.Site{}, false},
		{"a query", "https://pcourt.example/?a=b", true, webpage.Site{}, false},
		{"a bare question mark", "https://pcourt.example/?", true, webpage.Site{}, false},
		{"a fragment", "https://pcourt.example/#x", true, webpage.Site{}, false},
		{"user information", "https://u:p@pcourt.example", true, webpage.Site{}, false},
		{"another scheme", "ftp://pcourt.example", false, webpage.Site{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := webpage.NewSite(tc.base, tc.secure)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestEqualAndMatchToken(t *testing.T) {
	token := auth.NewToken("pctl_")
	require.True(t, webpage.MatchToken(token, auth.HashToken(token)))
	require.False(t, webpage.MatchToken(token, token), "a token is compared by its hash, never as stored")
	require.False(t, webpage.MatchToken("", auth.HashToken("")), "an empty token matches nothing")
	require.False(t, webpage.MatchToken(token+"x", auth.HashToken(token)))
	require.False(t, webpage.Equal("", ""))
	require.True(t, webpage.Equal("a", "a"))
	require.False(t, webpage.Equal("a", "ab"))
}
