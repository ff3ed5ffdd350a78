package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webhook/receiver"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// TestWebhookSecurityRound2ThroughTheEdge replays items 4, 5, 7 and 9 of
// the issue "Security, round 2" against the running stack, through the
// edge, with two partners, two tenants and both environments. The stack
// runs as `make run` does: WEBHOOK_EGRESS_ALLOW_CIDRS=127.0.0.0/8 and
// http allowed for sandbox. Every refusal of the service leaves the
// webhooks keyspace (endpoints, deliveries, attempts, schedules) as it
// was; the refusals run first, before any delivery is in flight.
func TestWebhookSecurityRound2ThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	st := startStack(t)
	p := newProbe(t, st)
	edgePort, err := strconv.Atoi(st.edge[strings.LastIndexByte(st.edge, ':')+1:])
	require.NoError(t, err)
	webhooksAdmin := edgePort + 4 + 1000 // the webhooks service's admin listener (metrics, pprof)

	aSandbox := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	bSandbox := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-b", "")
	bOtherTenant := p.mint(t, "tenant-two", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-b", "")
	aLive := p.mint(t, "tenant-dev", auth.Live, auth.RolePlatformOrchestrator, "partner-a", "")
	bLive := p.mint(t, "tenant-dev", auth.Live, auth.RolePlatformOrchestrator, "partner-b", "")
	liveOtherTenant := p.mint(t, "tenant-two", auth.Live, auth.RolePlatformOrchestrator, "partner-a", "")

	// One endpoint of each live credential to PATCH: a refused change
	// leaves it as it was.
	liveEndpoint := p.register(t, aLive, "https://a-live.partner.example/hook")
	sandboxEndpoint := p.register(t, aSandbox, "http://a-sandbox.partner.example/hook")

	t.Run("9: a URL with characters a URI does not allow is refused", func(t *testing.T) {
		for _, raw := range []string{
			"https://hooks.partner.example/pc?a=b c",
			"https://hooks.partner.example/pc?a=<script>",
			"https://hooks.partner.example/pc?next=>",
			"https://hooks.partner.example/a b",
			`https://hooks.partner.example/pc?a="b"`,
			"https://hooks.partner.example/pc?a={b}|c^d`e",
			"https://hooks.partner.example/pc?a=b\r\nX-Injected: 1",
			"https://hooks.partner.example/pc?a=b\tc",
			"https://hooks.partner.example/pc?name=été",
			"https://hooks.partner.example/pc?a=100%",
		} {
			p.webhooksUnchanged(t, func() {
				for _, who := range []minted{aLive, liveOtherTenant, aSandbox, bOtherTenant} {
					r := p.do(t, "POST", "/api/webhooks/endpoints", who, p.key(), map[string]any{"url": raw})
					require.Equal(t, http.StatusBadRequest, r.status, "%q: %s", raw, r.body)
					require.Equal(t, "invalid_endpoint", r.code, raw)
					require.Contains(t, string(r.body), "url", raw)
				}
				r := p.do(t, "PATCH", "/api/webhooks/endpoints/"+liveEndpoint, aLive, "", map[string]any{"url": raw})
				require.Equal(t, http.StatusBadRequest, r.status, "%q: %s", raw, r.body)
				require.Equal(t, "invalid_endpoint", r.code, raw)
			})
		}
		// Percent-encoded, the same URL is fine.
		id := p.register(t, aLive, "https://hooks.partner.example/pc?a=b%20c&d=%3Cscript%3E")
		r := p.do(t, "GET", "/api/webhooks/endpoints/"+id, aLive, "", nil)
		require.Contains(t, string(r.body), `"url":"https://hooks.partner.example/pc?a=b%20c\u0026d=%3Cscript%3E"`)
	})

	t.Run("5: every spelling of an internal address is refused for live, whatever the allowlist says", func(t *testing.T) {
		spellings := []string{
			"https://127.1/",
			"https://2130706433/",
			"https://0x7f000001/",
			"https://0177.0.0.1/",
			"https://127.0.0.1./",
			"https://localhost./",
			"https://api.localhost/",
			"https://[::1]/",
			"https://[0:0:0:0:0:0:0:1]/",
			"https://[::ffff:127.0.0.1]/",
			"https://[::ffff:7f00:1]/",
			"https://[64:ff9b::7f00:1]/",
			"https://0.0.0.0/",
			"https://0/",
			"https://[::]/",
			"https://169.254.169.254/latest/meta-data/",
			"https://2852039166/latest/meta-data/",
			"https://[fe80::1%25lo]/",
			"https://10.0.0.8/",
			fmt.Sprintf("https://127.0.0.1:%d/debug/pprof/goroutine?debug=1", webhooksAdmin),
		}
		p.webhooksUnchanged(t, func() {
			for _, raw := range spellings {
				for _, who := range []minted{aLive, bLive, liveOtherTenant} {
					r := p.do(t, "POST", "/api/webhooks/endpoints", who, p.key(), map[string]any{"url": raw})
					require.Equal(t, http.StatusUnprocessableEntity, r.status, "%q: %s", raw, r.body)
					require.Equal(t, "endpoint_url_forbidden", r.code, raw)
					require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
				}
				r := p.do(t, "PATCH", "/api/webhooks/endpoints/"+liveEndpoint, aLive, "", map[string]any{"url": raw})
				require.Equal(t, http.StatusUnprocessableEntity, r.status, "%q: %s", raw, r.body)
				require.Equal(t, "endpoint_url_forbidden", r.code, raw)
			}
		})
		r := p.do(t, "POST", "/api/webhooks/endpoints", aLive, p.key(), map[string]any{"url": "https://0x7f000001/"})
		require.Contains(t, string(r.body), "127.0.0.1", "the detail names the address as the dialer reads it")

		// Sandbox: outside the allowlist, refused in every spelling too;
		// inside it, an address must be spelled in dotted decimal.
		p.webhooksUnchanged(t, func() {
			for _, raw := range []string{"http://169.254.169.254/", "http://0xa9fea9fe/", "http://[::ffff:169.254.169.254]/", "http://10.8/", "http://[fd00::1]/"} {
				for _, who := range []minted{aSandbox, bOtherTenant} {
					r := p.do(t, "POST", "/api/webhooks/endpoints", who, p.key(), map[string]any{"url": raw})
					require.Equal(t, http.StatusUnprocessableEntity, r.status, "%q: %s", raw, r.body)
					require.Equal(t, "endpoint_url_forbidden", r.code, raw)
				}
			}
			for _, raw := range []string{"http://127.1:9/", "http://2130706433:9/", "http://0177.0.0.1:9/"} {
				r := p.do(t, "POST", "/api/webhooks/endpoints", aSandbox, p.key(), map[string]any{"url": raw})
				require.Equal(t, http.StatusBadRequest, r.status, "%q: %s", raw, r.body)
				require.Equal(t, "invalid_endpoint", r.code, raw)
				require.Contains(t, string(r.body), "dotted decimal", raw)
			}
			r := p.do(t, "PATCH", "/api/webhooks/endpoints/"+sandboxEndpoint, aSandbox, "", map[string]any{"url": "http://169.254.169.254/"})
			require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		})
	})

	t.Run("7: no example key of the docs is a conformance key or a published one", func(t *testing.T) {
		example := docsExampleJWKS(t)
		vectors := conformanceVectorKeys(t)
		published := map[string]string{}
		for _, env := range []string{"sandbox", "live"} {
			r := p.do(t, "GET", "/api/webhooks/keys?environment="+env, minted{}, "", nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			var set signature.JWKS
			require.NoError(t, json.Unmarshal(r.body, &set))
			require.NotEmpty(t, set.Keys)
			for _, k := range set.Keys {
				published[k.Kid] = k.X
			}
		}
		require.NotEmpty(t, example.Keys)
		for _, k := range example.Keys {
			require.True(t, strings.HasPrefix(k.Kid, "example-not-a-real-key-"), "the docs' example kid %q says it is an example", k.Kid)
			_, err := signature.ParseKeyID(k.Kid)
			require.Error(t, err, "the docs' example kid %q has the form of a deployment's", k.Kid)
			for kid, x := range vectors {
				require.NotEqual(t, kid, k.Kid, "the docs' example is a conformance key")
				require.NotEqual(t, x, k.X, "the docs' example %s is conformance key %s, whose seed is published", k.Kid, kid)
			}
			_, ok := published[k.Kid]
			require.False(t, ok, "the docs' example kid is published")
		}
		for kid, x := range vectors {
			require.Contains(t, kid, "seed-is-public", "a conformance kid says its seed is public")
			_, ok := published[kid]
			require.False(t, ok, "conformance key %s is published by the stack", kid)
			for pkid, px := range published {
				require.NotEqual(t, x, px, "the stack publishes conformance key %s as %s", kid, pkid)
			}
		}
	})

	t.Run("4: a delivery signed for one partner is refused at every other partner's receiver", func(t *testing.T) {
		// A's receiver: the ready-made Go receiver, configured with the
		// endpoint id registration returned, verifying against the keys
		// the edge publishes. Its own test event verifies there.
		a := newPartnerReceiver(t, p, aSandbox, "sandbox")
		mine := a.testEvent(t, p)
		require.True(t, mine.Test, "A's own test event arrives, marked as a test")
		require.Equal(t, "terminated", mine.Event.Type)

		for who, cred := range map[string]minted{"partner B": bSandbox, "partner B of another tenant": bOtherTenant} {
			b := newPartnerReceiver(t, p, cred, "sandbox")
			got := b.testEvent(t, p)
			require.True(t, got.Test, "%s: a test event is marked as one (signed x-pc-test: true)", who)
			// The receiver answers before the sender records the attempt.
			record := p.attempted(t, cred, got.Event.DeliveryID)
			require.Equal(t, b.endpointID, record.Data.EndpointID, who)
			require.True(t, record.Data.Test, who)
			signed := record.Data.Attempts[0].RequestHeaders
			require.Equal(t, b.endpointID, signed["X-Pc-Endpoint-Id"], who)
			require.Equal(t, "true", signed["X-Pc-Test"], who)

			// B copies the signed headers and body from its delivery
			// record and replays them to A's receiver, well inside the
			// timestamp window: refused, and nothing changes at pcourt.
			p.webhooksUnchanged(t, func() {
				status, answer := a.replay(t, signed, record.Data.RequestBody)
				require.Equal(t, http.StatusUnauthorized, status, "%s: %s", who, answer)
				require.Equal(t, "recipient_mismatch\n", answer, who)
			})
			// The same bytes at B's own receiver are B's: a duplicate.
			status, answer := b.replay(t, signed, record.Data.RequestBody)
			require.Equal(t, http.StatusOK, status, "%s: %s", who, answer)
			require.Equal(t, "duplicate\n", answer)
		}
		require.Empty(t, a.others(mine.Event.EventID), "A's callback saw no delivery but its own")
	})

	t.Run("4: the same holds in live", func(t *testing.T) {
		// Live endpoints need https and a public address; the deliveries
		// fail at dial time here, but each attempt's record keeps the
		// signed headers it sent, which is all a replay needs.
		a := newPartnerReceiver(t, p, aLive, "live")
		bEndpoint := p.register(t, bLive, "https://b-live.partner.example/hook")
		deliveryID := p.sendTestEvent(t, bLive, bEndpoint)
		record := p.attempted(t, bLive, deliveryID)
		signed := record.Data.Attempts[0].RequestHeaders
		require.Equal(t, bEndpoint, signed["X-Pc-Endpoint-Id"])
		kid, err := signature.ParseKeyID(signed["X-Pc-Key-Id"])
		require.NoError(t, err)
		require.Equal(t, signature.Live, kid.Environment)
		p.webhooksUnchanged(t, func() {
			status, answer := a.replay(t, signed, record.Data.RequestBody)
			require.Equal(t, http.StatusUnauthorized, status, answer)
			require.Equal(t, "recipient_mismatch\n", answer)
		})
	})

	t.Run("5: with the dev allowlist, live never dials loopback; sandbox may, and its answer is not kept", func(t *testing.T) {
		var calls atomic.Int64
		internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Header().Set("X-Internal-Build", "secret-build-sha")
			_, _ = io.WriteString(w, strings.Repeat("internal secret dump\n", 1000))
		}))
		t.Cleanup(internal.Close)
		port := internal.Listener.Addr().(*net.TCPAddr).Port

		// The probe: a sandbox endpoint at the admin port's
		// goroutine dump, and one at another internal service.
		for _, url := range []string{
			fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/goroutine?debug=1", webhooksAdmin),
			fmt.Sprintf("http://127.0.0.1:%d/dump", port),
		} {
			id := p.register(t, aSandbox, url)
			record := p.attempted(t, aSandbox, p.sendTestEvent(t, aSandbox, id))
			at := record.Data.Attempts[0]
			require.NotZero(t, at.ResponseStatus, "%s: the dial is allowed in sandbox: %s", url, at.Error)
			require.True(t, at.ResponseWithheld, url)
			require.Empty(t, at.ResponseBody, url)
			require.Empty(t, at.ResponseHeaders, url)
			raw := p.do(t, "GET", "/api/webhooks/deliveries/"+record.Data.ID, aSandbox, "", nil)
			require.NotContains(t, string(raw.body), "goroutine profile", url)
			require.NotContains(t, string(raw.body), "internal secret dump", url)
			require.NotContains(t, string(raw.body), "secret-build-sha", url)
		}
		require.Equal(t, int64(1), calls.Load(), "the internal server answered the sandbox delivery once")

		// A live endpoint whose name resolves to loopback (it passed
		// registration: names are not resolved there) is refused when
		// the sender dials it, allowlist or not.
		name := loopbackName(t)
		if name == "" {
			t.Skip("no host name of this machine resolves to loopback only; the dial-time refusal of live is covered by services/webhooks/internal/dispatch")
		}
		id := p.register(t, aLive, fmt.Sprintf("https://%s:%d/dump", name, port))
		record := p.attempted(t, aLive, p.sendTestEvent(t, aLive, id))
		at := record.Data.Attempts[0]
		require.Equal(t, "forbidden_address", at.ErrorClass, at.Error)
		require.Zero(t, at.ResponseStatus)
		require.Equal(t, int64(1), calls.Load(), "live never reached the internal server")
	})
}

// webhooksUnchanged runs act and requires it to leave the webhooks
// service's state (endpoints, deliveries, attempts, schedules) as it was.
func (p *probe) webhooksUnchanged(t *testing.T, act func()) {
	t.Helper()
	redistest.Unchanged(t, p.rdb, bookkeeping, act, "pc:wh:*")
}

// register registers an endpoint for every event type and returns its id.
func (p *probe) register(t *testing.T, who minted, url string) string {
	t.Helper()
	r := p.do(t, "POST", "/api/webhooks/endpoints", who, p.key(), map[string]any{"url": url, "description": "security round 2"})
	require.Equal(t, http.StatusCreated, r.status, "%s: %s", url, r.body)
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &created))
	require.NotEmpty(t, created.Data.ID)
	return created.Data.ID
}

// sendTestEvent asks for a test event of type terminated (the issue's
// probe) and returns its delivery id.
func (p *probe) sendTestEvent(t *testing.T, who minted, endpointID string) string {
	t.Helper()
	r := p.do(t, "POST", "/api/webhooks/endpoints/"+endpointID+"/test", who, p.key(), map[string]any{"type": "terminated"})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	var d struct {
		Data struct {
			ID   string `json:"id"`
			Test bool   `json:"test"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &d))
	require.True(t, d.Data.Test, "the delivery says it is a test event")
	return d.Data.ID
}

// deliveryRecord is GET /api/webhooks/deliveries/{id}.
type deliveryRecord struct {
	Data struct {
		ID          string `json:"id"`
		EndpointID  string `json:"endpointId"`
		Test        bool   `json:"test"`
		RequestBody string `json:"requestBody"`
		Attempts    []struct {
			RequestHeaders   map[string]string `json:"requestHeaders"`
			ResponseStatus   int               `json:"responseStatus"`
			ResponseHeaders  map[string]string `json:"responseHeaders"`
			ResponseBody     string            `json:"responseBody"`
			ResponseWithheld bool              `json:"responseWithheld"`
			ErrorClass       string            `json:"errorClass"`
			Error            string            `json:"error"`
		} `json:"attempts"`
	} `json:"data"`
}

// attempted polls the delivery until its first attempt is recorded.
func (p *probe) attempted(t *testing.T, who minted, deliveryID string) deliveryRecord {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		r := p.do(t, "GET", "/api/webhooks/deliveries/"+deliveryID, who, "", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var d deliveryRecord
		require.NoError(t, json.Unmarshal(r.body, &d))
		if len(d.Data.Attempts) > 0 && p.countedInHealth(d.Data.EndpointID) >= len(d.Data.Attempts) {
			return d
		}
		require.True(t, time.Now().Before(deadline), "delivery %s has no attempt counted after 30 s", deliveryID)
		<-tick.C
	}
}

// countedInHealth is how many attempts the endpoint's health figures
// count: webhooks counts an attempt one round trip after it records it
// (store.countAttempts), so a test that goes on to require that nothing
// changes waits for both writes. Each endpoint here receives one
// delivery, so its count reaches that delivery's attempts.
func (p *probe) countedInHealth(endpointID string) int {
	ctx := context.Background()
	keys, err := p.rdb.Keys(ctx, "pc:wh:*:health:"+endpointID+":*").Result()
	if err != nil {
		return 0
	}
	n := 0
	for _, k := range keys {
		v, err := p.rdb.HGet(ctx, k, "n").Int()
		if err == nil {
			n += v
		}
	}
	return n
}

// partnerReceiver is a partner's callback endpoint: the libs/webhook
// receiver, configured for the endpoint id registration returned.
type partnerReceiver struct {
	who        minted
	endpointID string
	url        string
	got        chan receiver.Delivery
}

// newPartnerReceiver registers an endpoint of who for a receiver served
// here and starts the receiver for that endpoint id. A live endpoint
// cannot name this loopback receiver (https, no internal address), so
// it is registered at a public name: only replays reach its receiver.
func newPartnerReceiver(t *testing.T, p *probe, who minted, env string) *partnerReceiver {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	r := &partnerReceiver{who: who, url: "http://" + srv.Listener.Addr().String() + "/pcourt", got: make(chan receiver.Delivery, 16)}
	registered := r.url
	if env == "live" {
		registered = "https://" + strings.ReplaceAll(who.cred.PartnerID, "_", "-") + "-live.partner.example/pcourt"
	}
	r.endpointID = p.register(t, who, registered)
	keys, err := receiver.NewJWKSCache(p.edge+"/api/webhooks/keys?environment="+env, receiver.JWKSConfig{})
	require.NoError(t, err)
	h, err := receiver.NewHandler(keys, func(_ context.Context, d receiver.Delivery) error {
		r.got <- d
		return nil
	}, receiver.Config{EndpointID: r.endpointID, Environment: signature.Environment(env)})
	require.NoError(t, err)
	srv.Config.Handler = h
	srv.Start()
	return r
}

// testEvent asks for a test event to this receiver's endpoint and waits
// until the receiver verified it.
func (r *partnerReceiver) testEvent(t *testing.T, p *probe) receiver.Delivery {
	t.Helper()
	p.sendTestEvent(t, r.who, r.endpointID)
	select {
	case d := <-r.got:
		return d
	case <-time.After(30 * time.Second):
		t.Fatalf("no verified delivery at the receiver of %s after 30 s", r.endpointID)
		return receiver.Delivery{}
	}
}

// others drains what else the receiver's callback saw.
func (r *partnerReceiver) others(except string) []string {
	var out []string
	for {
		select {
		case d := <-r.got:
			if d.Event.EventID != except {
				out = append(out, d.Event.EventID)
			}
		default:
			return out
		}
	}
}

// replay posts the headers and body, as copied from a delivery record,
// to this receiver, and returns its answer.
func (r *partnerReceiver) replay(t *testing.T, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(answer)
}

// docsExampleJWKS is the JWKS example of docs/webhook-signatures.md.
func docsExampleJWKS(t *testing.T) signature.JWKS {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhook-signatures.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "## Verification keys (JWKS)")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```json\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	var set signature.JWKS
	require.NoError(t, json.Unmarshal([]byte(block), &set))
	return set
}

// conformanceVectorKeys are the vectors' keys, kid to x.
func conformanceVectorKeys(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhook-signature-vectors.json"))
	require.NoError(t, err)
	var f struct {
		Keys []struct {
			KeyID        string `json:"keyId"`
			PublicKeyHex string `json:"publicKeyHex"`
		} `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	out := map[string]string{}
	for _, k := range f.Keys {
		pub, err := hex.DecodeString(k.PublicKeyHex)
		require.NoError(t, err)
		out[k.KeyID] = signature.NewJWK(k.KeyID, pub).X
	}
	return out
}

// loopbackName is a name of this machine that resolves to loopback
// addresses only (its host name, usually, through /etc/hosts), or "".
func loopbackName(t *testing.T) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil || host == "" || strings.EqualFold(host, "localhost") {
		return ""
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return ""
		}
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	return strings.ToLower(host)
}
