package auth_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
)

func startSession(t *testing.T, store *auth.Store, edit func(*auth.AccountSessionRequest)) (string, auth.Credential) {
	t.Helper()
	req := auth.AccountSessionRequest{Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: "acct_person1",
		Method: auth.SignInPasskey, Lifetime: 8 * time.Hour}
	if edit != nil {
		edit(&req)
	}
	token, cred, err := store.StartAccountSession(context.Background(), req)
	require.NoError(t, err)
	return token, cred
}

// A session is the account itself, signed in: every account scope, no
// role, no partner, an audience no OAuth client can ask for; it ends at
// its expiry or its sign-out, on every replica within the cache's life.
func TestAnAccountSessionIsTheAccountSignedIn(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, cred := startSession(t, store, nil)
	require.Regexp(t, `^pc_ses_sbx_[A-Za-z0-9_-]{43}$`, token)
	require.Regexp(t, `^ses_[a-z2-7]{16}$`, cred.PublicID)
	require.True(t, cred.Session())
	require.True(t, cred.ForAccount())
	require.Empty(t, cred.Role)
	require.Empty(t, cred.PartnerID)
	require.Equal(t, auth.Scopes, cred.Scopes, "the account acting itself, not a grant of some of its powers")
	require.Equal(t, auth.SignInPasskey, cred.Label)

	got, live, err := store.AccountSession(ctx, token)
	require.NoError(t, err)
	require.True(t, live)
	require.Equal(t, cred, got)
	ttl, err := rdb.PTTL(ctx, "pc:auth:cred:"+cred.PublicID).Result()
	require.NoError(t, err)
	require.InDelta(t, (8 * time.Hour).Seconds(), ttl.Seconds(), 5, "the record expires with the session")

	other := auth.NewStore(rdb, auth.DefaultStoreConfig())
	_, live, err = other.AccountSession(ctx, token)
	require.NoError(t, err)
	require.True(t, live, "another replica reads the same session")

	require.NoError(t, store.EndAccountSession(ctx, token))
	_, live, err = store.AccountSession(ctx, token)
	require.NoError(t, err)
	require.False(t, live, "signed out here at once")
	_, live, err = auth.NewStore(rdb, auth.DefaultStoreConfig()).AccountSession(ctx, token)
	require.NoError(t, err)
	require.False(t, live, "and everywhere once the cache has let it go")
	require.NoError(t, store.EndAccountSession(ctx, token), "signing out twice is not an error")
}

// A member acting for an organisation has a session of the
// organisation's account that names the member as its actor: every
// service sees the organisation, and the record keeps who acted.
func TestASessionActingForAnOrganisationNamesItsActor(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	token, cred := startSession(t, store, func(r *auth.AccountSessionRequest) { r.AccountID, r.ActorID = "acct_org1", "acct_person1" })
	require.Equal(t, "acct_org1", cred.AccountID)
	require.Equal(t, "acct_person1", cred.ActorID)
	got, live, err := store.AccountSession(context.Background(), token)
	require.NoError(t, err)
	require.True(t, live)
	require.Equal(t, cred, got)
}

// A session is not a token, nor a token a session.
func TestASessionAndATokenAreNeverTakenForEachOther(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	ctx := context.Background()
	tokenSecret, _ := accountToken(t, store, nil)
	_, live, err := store.AccountSession(ctx, tokenSecret)
	require.NoError(t, err)
	require.False(t, live, "an account token is no session")
	partner, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	_, live, err = store.AccountSession(ctx, partner)
	require.NoError(t, err)
	require.False(t, live, "a partner credential is no session")
	require.NoError(t, store.EndAccountSession(ctx, tokenSecret))
	_, err = store.Authenticate(ctx, tokenSecret)
	require.NoError(t, err, "ending a 'session' that is a token leaves the token alone")
}

func TestAnAccountSessionRequestIsValidated(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	for name, edit := range map[string]func(*auth.AccountSessionRequest){
		"no tenant":           func(r *auth.AccountSessionRequest) { r.Tenant = "" },
		"unknown environment": func(r *auth.AccountSessionRequest) { r.Environment = "prod" },
		"malformed account":   func(r *auth.AccountSessionRequest) { r.AccountID = "acct one" },
		"unknown method":      func(r *auth.AccountSessionRequest) { r.Method = "password" },
		"no lifetime":         func(r *auth.AccountSessionRequest) { r.Lifetime = 0 },
		"over a day":          func(r *auth.AccountSessionRequest) { r.Lifetime = 25 * time.Hour },
		"a malformed actor":   func(r *auth.AccountSessionRequest) { r.ActorID = "acct two" },
		"itself as its actor": func(r *auth.AccountSessionRequest) { r.ActorID = r.AccountID },
	} {
		t.Run(name, func(t *testing.T) {
			req := auth.AccountSessionRequest{Tenant: "t", Environment: auth.Sandbox, AccountID: "acct_1", Method: auth.SignInCode, Lifetime: time.Hour}
			edit(&req)
			_, _, err := store.StartAccountSession(context.Background(), req)
			require.Error(t, err)
		})
	}
}

// The website routes take a session from its cookie where they say so:
// reads from anywhere the browser sends it (SameSite=Strict already keeps
// it off other sites' requests), mutations only from the site itself,
// every answer private; a session's secret is never a bearer, and a
// bearer's never a session.
func TestARouteTakesAccountSessionsFromTheirCookieOnlyWhereItSaysSo(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	session, _ := startSession(t, store, nil)
	ended, _ := startSession(t, store, nil)
	require.NoError(t, store.EndAccountSession(context.Background(), ended))
	token, _ := accountToken(t, store, nil)
	partner, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)

	const site = "https://pcourt.example"
	sameOrigin := func(r *http.Request) bool { return r.Header.Get("Origin") == site }
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	who := func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		c.String(http.StatusOK, cred.AccountID+cred.PartnerID)
	}
	withSessions := auth.Middleware(store, auth.AcceptAccountTokens(apiAudience), auth.AcceptAccountSessions(sameOrigin))
	s.Router().GET("/website", withSessions, who)
	s.Router().POST("/website", withSessions, auth.RequireScope(auth.ScopeExecutionsReport), who)
	s.Router().GET("/api", auth.Middleware(store, auth.AcceptAccountTokens(apiAudience)), who)
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	for _, tc := range []struct {
		name, method, path string
		cookies            []string
		bearer, origin     string
		status             int
		code, who          string
		private            bool
	}{
		{"a session reads", "GET", "/website", []string{session}, "", "", 200, "", "acct_person1", true},
		{"a session acts from the site, with every scope", "POST", "/website", []string{session}, "", site, 200, "", "acct_person1", true},
		{"a session's act from another site", "POST", "/website", []string{session}, "", "https://evil.example", 403, "cross_origin", "", true},
		{"a session's act with no origin", "POST", "/website", []string{session}, "", "", 403, "cross_origin", "", true},
		{"an ended session", "GET", "/website", []string{ended}, "", "", 401, "invalid_credential", "", true},
		{"a token in the session's cookie", "GET", "/website", []string{token}, "", "", 401, "invalid_credential", "", true},
		{"two session cookies", "GET", "/website", []string{session, ended}, "", "", 401, "unauthenticated", "", false},
		{"a session's secret as a bearer", "GET", "/website", nil, session, "", 401, "invalid_credential", "", false},
		{"a bearer wins over the cookie", "GET", "/website", []string{session}, partner, "", 200, "", "partner-test", false},
		{"a session where the route takes none", "GET", "/api", []string{session}, "", "", 401, "unauthenticated", "", false},
		{"a session's secret as a bearer where the route takes none", "GET", "/api", nil, session, "", 401, "invalid_credential", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
			for _, v := range tc.cookies {
				req.AddCookie(&http.Cookie{Name: auth.SessionCookieName, Value: v})
			}
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode, string(body))
			if tc.code != "" {
				require.Contains(t, string(body), `"code":"`+tc.code+`"`)
			} else {
				require.Equal(t, tc.who, string(body))
			}
			if tc.private {
				// A refusal is a problem, which no cache keeps anyway.
				require.Contains(t, resp.Header.Get("Cache-Control"), "no-store")
				if resp.StatusCode == http.StatusOK {
					require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))
				}
				require.Equal(t, "Cookie", resp.Header.Get("Vary"))
			}
		})
	}
}
