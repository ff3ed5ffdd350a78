package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/mail/mailtest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/organizations"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// peopleStack is the accounts service with people's pages, against a
// real redis-server and a real SMTP server in the process (libs/mail's
// mailtest), listening on 127.0.0.1 and addressed as localhost: the
// relying party's id must be a domain name, which localhost is to a
// browser and an IP address is not.
type peopleStack struct {
	url    string // http://localhost:<port>
	origin string
	rdb    redis.UniversalClient
	store  *store.Accounts
	// credentials holds the account sessions (libs/auth).
	credentials *auth.Store
	smtp        *mailtest.Server
	clock       *clock
}

// clock is the service's clock, moved by the tests.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

type stackOption func(*people.Config, *bool)

// withoutMail is a deployment with no SMTP server: no codes.
func withoutMail() stackOption { return func(_ *people.Config, mailOn *bool) { *mailOn = false } }

func newPeopleStack(t testing.TB, opts ...stackOption) *peopleStack {
	t.Helper()
	return newPeopleStackOn(t, redistest.NewClient(t), opts...)
}

// newPeopleStackOn is newPeopleStack on a given Redis: two deployments
// (another tenant, another environment) over one keyspace.
func newPeopleStackOn(t testing.TB, rdb redis.UniversalClient, opts ...stackOption) *peopleStack {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	s := &peopleStack{url: "http://localhost:" + strconv.Itoa(port), rdb: rdb, clock: &clock{}}
	s.store = store.New(s.rdb)
	s.credentials = auth.NewStore(s.rdb, auth.DefaultStoreConfig())
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	site, err := webpage.NewSite(s.url, false)
	require.NoError(t, err)
	s.origin = site.Origin

	cfg := people.Config{Tenant: "tenant-people", Environment: "sandbox", Origin: site.Origin, RPName: "pcourt test",
		SessionTTL: 8 * time.Hour, CodeURL: s.url + "/account/signin", AccountURL: s.url + "/account/"}
	mailOn := true
	for _, o := range opts {
		o(&cfg, &mailOn)
	}
	var mailer people.Mailer
	if mailOn {
		s.smtp = mailtest.Start(t)
		mc := mail.DefaultConfig()
		mc.Host, mc.Port, mc.TLS, mc.From, mc.HelloName = s.smtp.Host(), s.smtp.Port(), mail.TLSOff, "accounts@pcourt.test", "accounts"
		mailer = mail.New(mc, time.Now)
	}
	svc, err := people.New(cfg, s.store, s.credentials, mailer, logger, s.clock.now)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.RunMail(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "accounts", Logger: logger, Mapper: httpapi.Problem})
	orgs := organizations.New(organizations.Config{Tenant: cfg.Tenant, Environment: cfg.Environment, PagesURL: s.url}, s.store, s.credentials, mailer, logger, s.clock.now)
	httpapi.RegisterPeople(srv.Router(), httpapi.PeopleDeps{People: svc, Site: site, Logger: logger, Organizations: orgs})
	ts := httptest.NewUnstartedServer(srv.Router())
	_ = ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return s
}

// browser is one person's browser: a cookie jar and the site's origin in
// every post, as a browser's fetch and form posts send it.
type browser struct {
	s      *peopleStack
	client *http.Client
	origin string // "" sends none
}

func (s *peopleStack) browser(t testing.TB) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{s: s, origin: s.origin, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// answer is a decoded JSON answer: the data of a success, the problem
// otherwise.
type answer struct {
	status  int
	header  http.Header
	data    json.RawMessage
	problem struct {
		Code   string `json:"code"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
}

// call posts to a ceremony's endpoint (body nil: none) and validates the
// exchange against the OpenAPI document.
func (b *browser) call(t testing.TB, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(http.MethodPost, b.s.url+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	resp, raw := apitest.Do(t, b.client, req)
	a := answer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode < 300 {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(raw, &env), string(raw))
		a.data = env.Data
	} else {
		require.NoError(t, json.Unmarshal(raw, &a.problem), string(raw))
	}
	return a
}

func (a answer) options(t testing.TB) options {
	t.Helper()
	var o options
	require.NoError(t, json.Unmarshal(a.data, &o))
	require.NotEmpty(t, o.PublicKey.Challenge)
	return o
}

// page is an HTML answer.
type page struct {
	status   int
	header   http.Header
	body     string
	location string
}

func (b *browser) get(t testing.TB, path string) page {
	t.Helper()
	resp, err := b.client.Get(b.s.url + path)
	require.NoError(t, err)
	return readPage(t, resp)
}

func (b *browser) form(t testing.TB, path string, values url.Values) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.s.url+path, strings.NewReader(values.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	return readPage(t, resp)
}

func readPage(t testing.TB, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw), location: resp.Header.Get("Location")}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (p page) csrf(t testing.TB) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	require.NotNil(t, m, "the page has a CSRF field:\n%s", p.body)
	return m[1]
}

// cookie returns the browser's cookie of that name for the pages.
func (b *browser) cookie(t testing.TB, name string) string {
	t.Helper()
	u, _ := url.Parse(b.s.url + "/account/")
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// signUp walks a sign-up with the soft key and returns the account id.
func (b *browser) signUp(t testing.TB, key *softKey, name, email string) string {
	t.Helper()
	begun := b.call(t, "/account/signup/options", map[string]string{"displayName": name, "email": email})
	require.Equal(t, http.StatusOK, begun.status, begun.problem)
	done := b.call(t, "/account/signup", key.create(t, begun.options(t)))
	require.Equal(t, http.StatusCreated, done.status, done.problem)
	var in struct {
		AccountID string `json:"accountId"`
		Next      string `json:"next"`
	}
	require.NoError(t, json.Unmarshal(done.data, &in))
	require.Equal(t, "/account/", in.Next)
	return in.AccountID
}

// signIn walks a passkey sign-in with the key and returns the answer.
func (b *browser) signIn(t testing.TB, key *softKey) answer {
	t.Helper()
	begun := b.call(t, "/account/signin/options", nil)
	require.Equal(t, http.StatusOK, begun.status, begun.problem)
	return b.call(t, "/account/signin", key.get(t, begun.options(t)))
}

// codeFrom waits for the n-th e-mail the SMTP server received (polling
// with a deadline: the service sends from a worker) and returns its
// recipient and the six digits it carries.
func (s *peopleStack) codeFrom(t testing.TB, n int) (string, string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.smtp.Messages()) < n {
		require.True(t, time.Now().Before(deadline), "no e-mail %d within 10 s", n)
		time.Sleep(20 * time.Millisecond)
	}
	m := s.smtp.Messages()[n-1]
	body, err := io.ReadAll(m.Parse(t).Body)
	require.NoError(t, err)
	code := regexp.MustCompile(`\b[0-9]{6}\b`).FindString(string(body))
	require.NotEmpty(t, code, "the e-mail carries a code:\n%s", body)
	require.Len(t, m.To, 1)
	return m.To[0], code
}

// askConfirmation posts the account page's "send a confirmation code".
func (b *browser) askConfirmation(t testing.TB) page {
	t.Helper()
	return b.form(t, "/account/email/code", url.Values{"csrf": {b.get(t, "/account/").csrf(t)}})
}

// typeConfirmation posts the account page's "enter the code".
func (b *browser) typeConfirmation(t testing.TB, code string) page {
	t.Helper()
	return b.form(t, "/account/email/confirm", url.Values{"csrf": {b.get(t, "/account/").csrf(t)}, "code": {code}})
}

// confirm confirms the signed-in account's address: a code asked for on
// the account page, read from the n-th e-mail, typed back.
func (b *browser) confirm(t testing.TB, n int) {
	t.Helper()
	sent := b.askConfirmation(t)
	require.Equal(t, http.StatusOK, sent.status, sent.body)
	_, code := b.s.codeFrom(t, n)
	done := b.typeConfirmation(t, code)
	require.Equal(t, http.StatusSeeOther, done.status, done.body)
	require.Contains(t, b.get(t, "/account/").body, `id="email-confirmed"`)
}
