package usage_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
	"github.com/pcourt/pcourt/services/compat-edge/internal/usage"
)

type answer struct {
	Data struct {
		AnnouncementsEnabled bool `json:"announcementsEnabled"`
		Routes               []struct {
			Route           string     `json:"route"`
			Family          string     `json:"family"`
			Successor       string     `json:"successor"`
			Calls           int64      `json:"calls"`
			CallsLast24h    int64      `json:"callsLast24h"`
			SampleRequestID string     `json:"sampleRequestId"`
			Sunset          *time.Time `json:"sunset"`
			Extension       *time.Time `json:"extension"`
			Credentials     []struct {
				ID string `json:"id"`
			} `json:"credentials"`
		} `json:"routes"`
		Families []struct {
			Family string `json:"family"`
			Stage  string `json:"stage"`
		} `json:"families"`
	} `json:"data"`
}

type fixture struct {
	srv    *httptest.Server
	creds  *auth.Store
	ledger *store.Store
	pol    *policy.Policy
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	gin.SetMode(gin.TestMode)
	rdb := redistest.NewClient(t)
	acfg := auth.DefaultStoreConfig()
	acfg.PerCredential = ratelimit.Off
	f := &fixture{creds: auth.NewStore(rdb, acfg), ledger: store.New(rdb)}
	vars := map[string]string{policy.EnvCanonicalRoutes: "true", policy.EnvCompatibilityStart: "2026-03-01"}
	f.pol = policy.Resolve(policy.EnvFrom(func(name string) string { return vars[name] }), nil)
	rd := &usage.Reader{Credentials: f.creds, Uses: f.ledger.Uses, Policy: func() *policy.Policy { return f.pol }}
	r := gin.New()
	r.Use(rd.Serve)
	// The proxy's place: it answers whatever reaches it, as the edge's
	// proxy does, so a read that fell through would be seen.
	r.NoRoute(func(c *gin.Context) { c.String(http.StatusTeapot, "proxied") })
	f.srv = httptest.NewServer(r)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) use(t testing.TB, cred auth.Credential, route string, n int64, sample string) {
	t.Helper()
	now := time.Now().UTC()
	require.NoError(t, f.ledger.AddUses(context.Background(), []store.Use{{Subject: cred.PublicID, Route: route,
		First: now.Add(-time.Hour), Last: now, Count: n, Sample: sample, Hours: map[int64]int64{now.Unix() / 3600: n}}}))
}

func (f *fixture) get(t testing.TB, method, bearer string) (int, answer) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+usage.Path, nil)
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if method != http.MethodGet {
		// The document describes GET only; anything else is 405.
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, answer{}
	}
	// Every answer is checked against the OpenAPI document.
	resp, body := apitest.Do(t, http.DefaultClient, req)
	var a answer
	if resp.StatusCode == http.StatusOK {
		require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))
		require.NoError(t, json.Unmarshal(body, &a))
	}
	return resp.StatusCode, a
}

// A partner reads the use of its own credentials, all of them, and
// nothing of another partner's, even in the same tenant and environment;
// the same partner's credentials in the other environment are not its
// integration here either.
func TestAPartnerSeesOnlyItsOwnLegacyUse(t *testing.T) {
	f := newFixture(t)
	acmeBearer, acme := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("acme"))
	_, acme2 := authtest.Mint(t, f.creds, auth.RoleClaimantAgent, authtest.WithPartner("acme"))
	globexBearer, globex := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("globex"))
	_, acmeLive := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("acme"), authtest.WithEnvironment(auth.Live))
	unboundBearer, unbound := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator)

	f.use(t, acme, "/api/v2/cases/{caseId}", 3, "req_acme")
	f.use(t, acme2, "/api/v2/cases/{caseId}", 4, "req_acme2")
	f.use(t, globex, "/api/v2/cases/{caseId}/events", 5, "req_globex")
	f.use(t, acmeLive, "/api/v2/cases/{caseId}/events", 6, "req_acme_live")
	f.use(t, unbound, "/api/v2/cases/{caseId}/events", 8, "req_unbound")

	status, a := f.get(t, http.MethodGet, acmeBearer)
	require.Equal(t, http.StatusOK, status)
	require.True(t, a.Data.AnnouncementsEnabled)
	require.Len(t, a.Data.Routes, 1, "acme sees only the route its own sandbox credentials called")
	r := a.Data.Routes[0]
	require.Equal(t, "/api/v2/cases/{caseId}", r.Route)
	require.Equal(t, int64(7), r.Calls)
	require.Equal(t, int64(7), r.CallsLast24h)
	require.Equal(t, string(inventory.V2Cases), r.Family)
	require.NotEmpty(t, r.Successor)
	require.NotNil(t, r.Sunset)
	require.Nil(t, r.Extension)
	var ids []string
	for _, c := range r.Credentials {
		ids = append(ids, c.ID)
	}
	require.ElementsMatch(t, []string{acme.PublicID, acme2.PublicID}, ids)
	require.NotEmpty(t, a.Data.Families)

	status, a = f.get(t, http.MethodGet, globexBearer)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, a.Data.Routes, 1)
	require.Equal(t, "/api/v2/cases/{caseId}/events", a.Data.Routes[0].Route)
	require.Equal(t, int64(5), a.Data.Routes[0].Calls)
	require.Equal(t, globex.PublicID, a.Data.Routes[0].Credentials[0].ID)

	// A credential of no partner reads its own use alone.
	status, a = f.get(t, http.MethodGet, unboundBearer)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, a.Data.Routes, 1)
	require.Equal(t, int64(8), a.Data.Routes[0].Calls)
}

// An extension approved for one partner moves that partner's Sunset only.
func TestAnExtensionIsThePartnersOwn(t *testing.T) {
	f := newFixture(t)
	acmeBearer, acme := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("acme"))
	globexBearer, globex := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("globex"))
	f.use(t, acme, "/api/v2/cases/{caseId}", 1, "")
	f.use(t, globex, "/api/v2/cases/{caseId}", 1, "")
	ext, err := policy.ParseDate(time.Now().AddDate(2, 0, 0).Format(time.DateOnly))
	require.NoError(t, err)
	vars := map[string]string{policy.EnvCanonicalRoutes: "true", policy.EnvCompatibilityStart: "2026-03-01"}
	f.pol = policy.Resolve(policy.EnvFrom(func(name string) string { return vars[name] }),
		map[inventory.Family]policy.Settings{inventory.V2Cases: {Extensions: map[string]policy.Date{"acme": ext}}})

	_, a := f.get(t, http.MethodGet, acmeBearer)
	require.NotNil(t, a.Data.Routes[0].Extension)
	require.True(t, a.Data.Routes[0].Sunset.Equal(ext.Time()))
	_, g := f.get(t, http.MethodGet, globexBearer)
	require.Nil(t, g.Data.Routes[0].Extension)
	require.True(t, g.Data.Routes[0].Sunset.Before(ext.Time()))
}

func TestTheReadNeedsACredential(t *testing.T) {
	f := newFixture(t)
	status, _ := f.get(t, http.MethodGet, "")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = f.get(t, http.MethodGet, "pc_sbx_forged")
	require.Equal(t, http.StatusUnauthorized, status)
	bearer, _ := authtest.Mint(t, f.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("acme"))
	status, _ = f.get(t, http.MethodPost, bearer)
	require.Equal(t, http.StatusMethodNotAllowed, status)
}
