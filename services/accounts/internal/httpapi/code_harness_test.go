package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// codeStack is the accounts service with people's pages and the
// authorization code grant, against a real redis-server, on 127.0.0.1
// addressed as localhost (the passkeys' relying party), its clock moved
// by the tests.
type codeStack struct {
	*peopleStack
	creds *auth.Store
}

// callback is the redirect URI the tests' applications register: http
// on a loopback address (RFC 8252). Nothing listens there: the browsers
// of the tests read the Location they are sent to.
const callback = "http://127.0.0.1:9/callback"

func newCodeStack(t testing.TB, registration bool) *codeStack {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ps := &peopleStack{url: "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), rdb: redistest.NewClient(t), clock: &clock{}}
	ps.store = store.New(ps.rdb)
	s := &codeStack{peopleStack: ps, creds: auth.NewStore(ps.rdb, auth.DefaultStoreConfig())}
	ps.credentials = s.creds
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	site, err := webpage.NewSite(ps.url, false)
	require.NoError(t, err)
	ps.origin = site.Origin

	ppl, err := people.New(people.Config{Tenant: "tenant-people", Environment: "sandbox", Origin: site.Origin, RPName: "pcourt test",
		SessionTTL: 8 * time.Hour, CodeURL: ps.url + "/account/signin", AccountURL: ps.url + "/account/"}, ps.store, s.creds, nil, logger, ps.clock.now)
	require.NoError(t, err)
	journal, err := idempotency.NewJournal(ps.rdb, idempotency.DefaultConfig("pc:acct"), logger)
	require.NoError(t, err)
	codeGrant := grants.New(ps.store, s.creds, logger, ps.clock.now)
	server := oauth.New(oauth.Config{Issuer: audience, APIAudience: audience, Registration: registration},
		agents.New(ps.store, s.creds, logger, nil), logger).WithCodeGrant(codeGrant)

	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "accounts", Logger: logger, Mapper: httpapi.Problem})
	httpapi.Register(srv.Router(), httpapi.Deps{Credentials: s.creds, Agents: agents.New(ps.store, s.creds, logger, nil), OAuth: server,
		Journal: journal, RegistrationLimiter: ratelimit.New(ps.rdb, "pc:acct:register")})
	httpapi.RegisterPeople(srv.Router(), httpapi.PeopleDeps{People: ppl, Site: site, Logger: logger, OAuth: server, Grants: codeGrant})
	ts := httptest.NewUnstartedServer(srv.Router())
	_ = ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return s
}

// register posts client metadata to /oauth/register, validated against
// the OpenAPI document, and answers the status and the JSON.
func (s *codeStack) register(t testing.TB, metadata map[string]any) (int, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(metadata)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.url+oauth.RegistrationPath, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, body := apitest.Do(t, http.DefaultClient, req)
	var out map[string]any
	require.NoError(t, json.Unmarshal(body, &out), string(body))
	return resp.StatusCode, out
}

// publicApp registers a public client (PKCE alone) and returns its
// x/oauth2 configuration.
func (s *codeStack) publicApp(t testing.TB, scopes ...string) *oauth2.Config {
	t.Helper()
	status, c := s.register(t, map[string]any{"client_name": "Case Helper", "redirect_uris": []string{callback}, "token_endpoint_auth_method": "none"})
	require.Equal(t, http.StatusCreated, status, c)
	require.NotContains(t, c, "client_secret", "a public client gets no secret")
	return &oauth2.Config{ClientID: c["client_id"].(string), RedirectURL: callback, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: s.url + oauth.AuthorizationPath, TokenURL: s.url + oauth.TokenPath, AuthStyle: oauth2.AuthStyleInParams}}
}

// person is a signed-in browser of a new individual account.
func (s *codeStack) person(t testing.TB, name string) (*browser, string) {
	t.Helper()
	b := s.browser(t)
	id := b.signUp(t, newKey(t, s.peopleStack), name, strings.ToLower(name)+"@example.test")
	return b, id
}

// authorize sends the browser to the authorization URL and on to the
// consent page, and answers the consent page.
func (b *browser) authorize(t testing.TB, authURL string) page {
	t.Helper()
	u, err := url.Parse(authURL)
	require.NoError(t, err)
	sent := b.get(t, u.RequestURI())
	require.Equal(t, http.StatusSeeOther, sent.status, sent.body)
	require.True(t, strings.HasPrefix(sent.location, "/account/consent?request=oaz_"), sent.location)
	return b.get(t, sent.location)
}

// decide posts the consent page's decision and answers where the browser
// is sent.
func (b *browser) decide(t testing.TB, consent page, decision string) *url.URL {
	t.Helper()
	done := b.form(t, "/account/consent", url.Values{"csrf": {consent.csrf(t)}, "request": {requestOf(t, consent)}, "decision": {decision}})
	require.Equal(t, http.StatusSeeOther, done.status, done.body)
	u, err := url.Parse(done.location)
	require.NoError(t, err)
	return u
}

func requestOf(t testing.TB, consent page) string {
	t.Helper()
	i := strings.Index(consent.body, `name="request" value="`)
	require.GreaterOrEqual(t, i, 0, consent.body)
	rest := consent.body[i+len(`name="request" value="`):]
	return rest[:strings.Index(rest, `"`)]
}

// approvedCode walks a person's approval and returns the code.
func approvedCode(t testing.TB, b *browser, cfg *oauth2.Config, verifier string, opts ...oauth2.AuthCodeOption) string {
	t.Helper()
	back := b.decide(t, b.authorize(t, cfg.AuthCodeURL("state-1", append(opts, oauth2.S256ChallengeOption(verifier))...)), "approve")
	require.Equal(t, "state-1", back.Query().Get("state"))
	code := back.Query().Get("code")
	require.True(t, strings.HasPrefix(code, "pc_oac_"), back.String())
	return code
}

// live reports whether a token authenticates, read afresh (no replica's
// cache): a new credential store on the same Redis.
func (s *codeStack) live(t testing.TB, token string) bool {
	t.Helper()
	_, err := auth.NewStore(s.rdb, auth.DefaultStoreConfig()).Authenticate(context.Background(), token)
	if err != nil {
		require.ErrorIs(t, err, auth.ErrInvalidCredential)
		return false
	}
	return true
}
