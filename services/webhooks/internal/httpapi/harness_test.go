package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/httpapi"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

type stack struct {
	url         string
	partner     string // platform orchestrator of partner-test, sandbox
	live        string // the same partner, live
	other       string // another partner
	claimant    string // a claimant agent credential
	reviewer    string // a tribunal reviewer, partner tribunal-reviewer-1, sandbox
	adjudicator string // a tribunal adjudicator, partner tribunal-ai-1, sandbox
	endpoints   *store.Endpoints
	deliveries  *store.Deliveries
	recoveries  *store.Recoveries
	ring        *keys.Ring
}

// newStack runs the API; a ring replaces the ephemeral keys.
func newStack(t testing.TB, ring ...*keys.Ring) *stack {
	t.Helper()
	rdb := redistest.NewClient(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	creds := auth.NewStore(rdb, auth.DefaultStoreConfig())
	s := &stack{endpoints: store.NewEndpoints(rdb), deliveries: store.NewDeliveries(rdb, store.DefaultDeliveriesConfig()),
		recoveries: store.NewRecoveries(rdb, time.Hour)}
	s.partner, _ = authtest.Mint(t, creds, auth.RolePlatformOrchestrator)
	s.live, _ = authtest.Mint(t, creds, auth.RolePlatformOrchestrator, func(r *auth.MintRequest) { r.Environment = auth.Live })
	s.other, _ = authtest.Mint(t, creds, auth.RolePlatformOrchestrator, func(r *auth.MintRequest) { r.PartnerID = "partner-other" })
	s.claimant, _ = authtest.Mint(t, creds, auth.RoleClaimantAgent)
	s.reviewer, _ = authtest.Mint(t, creds, auth.RoleReviewer, authtest.WithPartner("tribunal-reviewer-1"))
	s.adjudicator, _ = authtest.Mint(t, creds, auth.RoleAdjudicator, authtest.WithPartner("tribunal-ai-1"), authtest.WithAgent("adjudicator-1"))
	ks, err := keys.Ephemeral(time.Now())
	require.NoError(t, err)
	s.ring, err = keys.New(keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon()), ks...)
	require.NoError(t, err)
	if len(ring) > 0 {
		s.ring = ring[0]
	}

	idempotent, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:wh"), logger)
	require.NoError(t, err)
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "webhooks", Logger: logger, Mapper: httpapi.Problem})
	useCases := selfservice.New(selfservice.Deps{
		Endpoints:  s.endpoints,
		Deliveries: s.deliveries,
		Recoveries: s.recoveries,
		URLRules: endpoints.URLRules{AllowHTTP: true, CheckAddr: egress.Policy{
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		}.CheckFor},
		EventTypes: httpapi.EventTypes,
		Logger:     logger,
	})
	httpapi.Register(srv.Router(), httpapi.Deps{Credentials: creds, UseCases: useCases, Journal: idempotent, Keys: s.ring})
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r reply) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

func (s *stack) do(t testing.TB, method, path, token string, body any, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			b, err = json.Marshal(body)
			require.NoError(t, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &r.body)
	}
	return r
}
