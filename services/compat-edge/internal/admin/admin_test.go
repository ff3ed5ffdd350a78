package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/admin"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

const adminToken = "adm_0123456789abcdef"

type adminFixture struct {
	srv     *httptest.Server
	st      *store.Store
	current *policy.Current
}

// newAdmin serves the admin API over a real Redis; v2-cases is announced
// from 2026-01-15 (window end 2026-07-14) by the environment.
func newAdmin(t *testing.T, token string) *adminFixture {
	t.Helper()
	st := store.New(redistest.NewClient(t))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := policy.Env{CanonicalRoutes: "true", FamilyGA: map[inventory.Family]string{inventory.V2Cases: "2026-01-15"}}
	current := policy.NewCurrent(env, st.LoadLayers, time.Hour, logger)
	require.NoError(t, current.Refresh(context.Background()))
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	a := &admin.API{Token: envconf.Secret(token), Store: st, Policy: current.Policy, Refresh: current.Refresh,
		Now: func() time.Time { return now }, Logger: logger}
	mux := http.NewServeMux()
	mux.Handle(admin.Prefix, a.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &adminFixture{srv: srv, st: st, current: current}
}

type adminResponse struct {
	status int
	header http.Header
	body   map[string]any
}

func (f *adminFixture) do(t *testing.T, method, path, token, actor string, body any) adminResponse {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if actor != "" {
		req.Header.Set(admin.ActorHeader, actor)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := adminResponse{status: resp.StatusCode, header: resp.Header}
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out.body), string(raw))
	}
	return out
}

func TestAdminAuthentication(t *testing.T) {
	on := newAdmin(t, adminToken)
	off := newAdmin(t, "")
	tests := []struct {
		name   string
		f      *adminFixture
		token  string
		status int
		code   string
	}{
		{"no token configured refuses everyone", off, adminToken, http.StatusForbidden, "forbidden"},
		{"no bearer", on, "", http.StatusUnauthorized, "unauthenticated"},
		{"a wrong token", on, "adm_0123456789abcdeX", http.StatusUnauthorized, "invalid_credential"},
		{"a prefix of the token", on, adminToken[:5], http.StatusUnauthorized, "invalid_credential"},
		{"the token", on, adminToken, http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.f.do(t, http.MethodGet, "/admin/compatibility/policy", tc.token, "", nil)
			require.Equal(t, tc.status, r.status)
			if tc.code != "" {
				require.Equal(t, tc.code, r.body["code"])
				require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
			}
			require.Equal(t, "no-store", r.header.Get("Cache-Control"))
		})
	}
	r := on.do(t, http.MethodPut, "/admin/compatibility/contacts/partner-a", "", "ops", map[string]string{"email": "a@b.example"})
	require.Equal(t, http.StatusUnauthorized, r.status)
	contacts, err := on.st.Contacts(context.Background())
	require.NoError(t, err)
	require.Empty(t, contacts, "an unauthenticated change changes nothing")
}

func TestAdminChangesAreAppliedAndAudited(t *testing.T) {
	ctx := context.Background()
	f := newAdmin(t, adminToken)
	put := func(path, actor string, body any) adminResponse {
		return f.do(t, http.MethodPut, path, adminToken, actor, body)
	}

	// Extensions: lengthened, never shortened.
	r := put("/admin/compatibility/families/v2-cases/extensions/cred_a", "ana@pcourt.dev", map[string]string{"sunset": "2026-09-30"})
	require.Equal(t, http.StatusOK, r.status, r.body)
	r = put("/admin/compatibility/families/v2-cases/extensions/cred_a", "ana@pcourt.dev", map[string]string{"sunset": "2026-10-31"})
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, "2026-10-31", f.current.Policy().Window(inventory.V2Cases).Extensions["cred_a"].String(), "this replica acts at once")

	refusals := []struct {
		name   string
		method string
		path   string
		actor  string
		body   any
		status int
		code   string
	}{
		{"shortening an extension", http.MethodPut, "/admin/compatibility/families/v2-cases/extensions/cred_a", "bob", map[string]string{"sunset": "2026-10-01"}, 409, "extension_shortened"},
		{"an extension inside the window", http.MethodPut, "/admin/compatibility/families/v2-cases/extensions/cred_b", "bob", map[string]string{"sunset": "2026-07-01"}, 422, "invalid_compat_change"},
		{"an impossible date", http.MethodPut, "/admin/compatibility/families/v2-cases/extensions/cred_b", "bob", map[string]string{"sunset": "2026-02-30"}, 422, "invalid_compat_change"},
		{"an unknown family", http.MethodPut, "/admin/compatibility/families/v3-cases/extensions/cred_b", "bob", map[string]string{"sunset": "2026-12-01"}, 422, "invalid_compat_change"},
		{"no actor", http.MethodPut, "/admin/compatibility/families/v2-cases/extensions/cred_b", "", map[string]string{"sunset": "2026-12-01"}, 400, "invalid_request"},
		{"an unknown field", http.MethodPut, "/admin/compatibility/families/v2-cases/extensions/cred_b", "bob", map[string]string{"until": "2026-12-01"}, 400, "unknown_field"},
		{"a brownout inside the window", http.MethodPost, "/admin/compatibility/families/v2-cases/brownouts", "bob",
			map[string]string{"start": "2026-07-13T10:00:00Z", "end": "2026-07-13T10:30:00Z"}, 422, "invalid_compat_change"},
		{"a brownout of two days", http.MethodPost, "/admin/compatibility/families/v2-cases/brownouts", "bob",
			map[string]string{"start": "2026-07-20T10:00:00Z", "end": "2026-07-22T10:30:00Z"}, 422, "invalid_compat_change"},
		{"a brownout of a family without a date", http.MethodPost, "/admin/compatibility/families/v2-filings/brownouts", "bob",
			map[string]string{"start": "2026-07-20T10:00:00Z", "end": "2026-07-20T10:30:00Z"}, 422, "invalid_compat_change"},
		{"a contact that is not an address", http.MethodPut, "/admin/compatibility/contacts/partner-a", "bob", map[string]string{"email": "a@b\r\nBcc: x@y"}, 422, "invalid_compat_change"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before, err := f.st.Audit(ctx, 1000)
			require.NoError(t, err)
			r := f.do(t, tc.method, tc.path, adminToken, tc.actor, tc.body)
			require.Equal(t, tc.status, r.status, r.body)
			require.Equal(t, tc.code, r.body["code"])
			after, err := f.st.Audit(ctx, 1000)
			require.NoError(t, err)
			require.Len(t, after, len(before), "a refused change is not audited, as nothing changed")
		})
	}
	st, err := f.st.Load(ctx, inventory.V2Cases)
	require.NoError(t, err)
	require.Equal(t, map[string]policy.Date{"cred_a": mustDate(t, "2026-10-31")}, st.Extensions)
	require.Empty(t, st.Brownouts)

	r = f.do(t, http.MethodPost, "/admin/compatibility/families/v2-cases/brownouts", adminToken, "carla",
		map[string]string{"start": "2026-07-20T14:00:00Z", "end": "2026-07-20T14:30:00Z"})
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Len(t, f.current.Policy().Window(inventory.V2Cases).Brownouts, 1)
	r = put("/admin/compatibility/contacts/partner-a", "carla", map[string]string{"email": "ops@a.example"})
	require.Equal(t, http.StatusOK, r.status, r.body)

	// The effective policy, for an integration.
	r = f.do(t, http.MethodGet, "/admin/compatibility/policy?family=v2-cases&integration=cred_a&integration=partner-a", adminToken, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	data := r.body["data"].(map[string]any)
	require.Equal(t, true, data["enabled"])
	fam := data["families"].([]any)[0].(map[string]any)
	require.Equal(t, "v2-cases", fam["family"])
	require.Equal(t, "2026-01-15", fam["generalAvailabilityDate"])
	require.Equal(t, "SERVICE_API_V2_CASES_GA", fam["source"])
	require.Equal(t, "2026-07-14", fam["windowEnd"])
	require.Equal(t, "2026-10-31", fam["integrationWindowEnd"])
	require.Equal(t, "90-days-left", fam["nextMilestone"].(map[string]any)["name"], "the integration's own countdown")
	require.Equal(t, []any{map[string]any{"integration": "cred_a", "sunset": "2026-10-31"}}, fam["extensions"])

	// The audit: every change, newest first, with who, when and what.
	r = f.do(t, http.MethodGet, "/admin/compatibility/audit", adminToken, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var got []string
	for _, e := range r.body["data"].([]any) {
		m := e.(map[string]any)
		require.Equal(t, "2026-06-01T12:00:00Z", m["at"])
		require.NotEmpty(t, m["change"])
		got = append(got, m["actor"].(string)+" "+m["action"].(string)+" "+m["target"].(string))
	}
	require.Equal(t, []string{
		"carla contact.set partner-a",
		"carla brownout.schedule v2-cases",
		"ana@pcourt.dev extension.approve v2-cases/cred_a",
		"ana@pcourt.dev extension.approve v2-cases/cred_a",
	}, got)
	first := r.body["data"].([]any)[3].(map[string]any)
	require.Equal(t, map[string]any{"sunset": "2026-09-30"}, first["change"])
}

func TestAdminListsNotices(t *testing.T) {
	ctx := context.Background()
	f := newAdmin(t, adminToken)
	at := time.Date(2026, 4, 16, 0, 0, 0, 0, time.UTC)
	for _, n := range []store.Notice{
		{Family: inventory.V2Cases, Credential: "cred_a", Milestone: "90-days-left", State: store.NoticeSent, To: "ops@a.example", At: at, Attempts: 1},
		{Family: inventory.V2Cases, Credential: "cred_c", Milestone: "90-days-left", State: store.NoticeUndeliverable, Partner: "partner-c", Detail: "no contact for partner partner-c", At: at, Attempts: 1},
	} {
		require.NoError(t, f.st.FinishNotice(ctx, n))
	}
	r := f.do(t, http.MethodGet, "/admin/compatibility/notices?state=undeliverable", adminToken, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	list := r.body["data"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, "cred_c", list[0].(map[string]any)["credential"])
	require.Equal(t, "partner-c", list[0].(map[string]any)["partner"])
	r = f.do(t, http.MethodGet, "/admin/compatibility/notices?family=v2-cases", adminToken, "", nil)
	require.Len(t, r.body["data"].([]any), 2)
	r = f.do(t, http.MethodGet, "/admin/compatibility/notices?family=nope", adminToken, "", nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
}

// The admin API is on the admin listener only; the public port does not
// know it.
func TestAdminAPIIsNotOnThePublicPort(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "compat-edge", Logger: logger})
	a := &admin.API{Token: envconf.Secret(adminToken), Logger: logger, Now: time.Now}
	srv.HandleAdmin(admin.Prefix, a.Handler())
	for _, tc := range []struct {
		name    string
		handler http.Handler
		status  int
	}{{"public", srv.Router(), http.StatusNotFound}, {"admin", srv.Admin(), http.StatusUnauthorized}} {
		rec := httptest.NewRecorder()
		tc.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/compatibility/policy", nil))
		require.Equal(t, tc.status, rec.Code, tc.name)
	}
}

func mustDate(t *testing.T, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}
