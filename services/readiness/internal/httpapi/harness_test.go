package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/readiness/internal/httpapi"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/sale"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

const (
	testnet = "eip155:84532"
	payTo   = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
	funding = 1_000_000 // 1 USDC in atomic units: a hundred reports
	// publicBase is the configured public origin of the API.
	publicBase = "https://api.pcourt.test"
)

var validBody = []byte(`{"caseTrack":"ai_standard","claimantType":"human","respondentType":"organization","amountInDisputeUsd":40000,"remedy":"money_obligation","settlementRail":"none","fastTrackClaimClass":null,"mutualConsentReported":true,"authorityToBindReported":true,"claimantEvidenceReady":true,"respondentEvidenceReady":true,"microClaimsTierConsentReported":false,"remedialJurisdictionOptInReported":true,"corpusAmountUsd":null}`)

// stack is the readiness service wired as in production: real Redis, the
// local facilitator over real HTTP (behind a proxy the tests can break), and
// real EIP-3009 signatures.
type stack struct {
	url      string
	rdb      redis.UniversalClient
	ledger   *localfacilitator.Ledger
	seller   *sale.Seller
	payer    *ecdsa.PrivateKey
	asset    string
	settle   atomic.Int32 // what the proxy does to /settle: 0 pass, 1 drop the answer after settling
	facProxy *httptest.Server
	facURL   string                 // the facilitator itself, behind the proxy
	onSettle atomic.Pointer[func()] // runs before the proxy forwards a /settle
	// facClient reaches the facilitator as the services do, for tests that
	// play another service on the same Redis.
	facClient *facilitator.Client
}

type option func(*options)

type options struct {
	funding        uint64
	enabled        bool
	payerCap       store.Cap
	facilitatorURL string
	// facilitatorDirect skips the proxy the failure tests break /settle
	// with: the benchmarks reach the facilitator as production does.
	facilitatorDirect bool
	rdb               redis.UniversalClient // nil: a standalone server of its own
}

func withFunding(n uint64) option { return func(o *options) { o.funding = n } }
func withDisabled() option        { return func(o *options) { o.enabled = false } }
func withPayerCap(n int) option {
	return func(o *options) { o.payerCap = store.Cap{Limit: n, Window: time.Hour} }
}
func withFacilitatorAt(u string) option          { return func(o *options) { o.facilitatorURL = u } }
func withFacilitatorDirect() option              { return func(o *options) { o.facilitatorDirect = true } }
func withRedis(rdb redis.UniversalClient) option { return func(o *options) { o.rdb = rdb } }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newStack(t testing.TB, opts ...option) *stack {
	t.Helper()
	o := options{enabled: true, funding: funding}
	for _, opt := range opts {
		opt(&o)
	}
	if o.rdb == nil {
		o.rdb = redistest.NewClient(t)
	}
	s := &stack{rdb: o.rdb}
	s.ledger = localfacilitator.NewLedger(s.rdb)

	fac := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: quiet()})
	facServer, err := localfacilitator.NewServer(localfacilitator.DefaultConfig(), s.ledger, quiet())
	require.NoError(t, err)
	facServer.Register(fac.Router())
	facSrv := httptest.NewServer(fac.Router())
	t.Cleanup(facSrv.Close)
	target, _ := url.Parse(facSrv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path == "/settle" && s.settle.Load() == 1 {
			return io.ErrUnexpectedEOF // settled at the facilitator, answer lost on the way back
		}
		return nil
	}
	s.facURL = facSrv.URL
	s.facProxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/settle" {
			if hook := s.onSettle.Swap(nil); hook != nil {
				(*hook)()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.facProxy.Close)
	switch {
	case o.facilitatorURL != "":
	case o.facilitatorDirect:
		o.facilitatorURL = s.facURL
	default:
		o.facilitatorURL = s.facProxy.URL
	}

	s.payer, err = crypto.GenerateKey()
	require.NoError(t, err)
	usdc, _ := x402.USDC(testnet)
	s.asset = usdc.Address.Hex()
	require.NoError(t, s.ledger.Fund(context.Background(), testnet, s.asset, s.payerAddress(), o.funding))

	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: o.facilitatorURL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	table := readiness.DefaultRuleTable()
	s.seller, err = sale.NewSeller(sale.Config{Table: table, Lease: 30 * time.Second, Resource: httpapi.Path, ResourceURL: publicBase + httpapi.Path},
		s.rdb, store.NewCaps(s.rdb, o.payerCap, store.Cap{}), client, quiet(), nil)
	require.NoError(t, err)
	s.facClient = client
	challenge, err := httpapi.NewChallenge([]string{testnet}, payTo, 60, discovery(t))
	require.NoError(t, err)
	base, err := x402.ParsePublicBase(publicBase)
	require.NoError(t, err)
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "readiness", Logger: quiet(), Mapper: httpapi.Problem})
	httpapi.NewHandler(httpapi.Config{Enabled: o.enabled, PublicBase: base}, challenge, s.seller, quiet()).Register(srv.Router())
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// discovery is the bazaar metadata as main reads it: from the OpenAPI document.
func discovery(t testing.TB) httpapi.Discovery {
	t.Helper()
	var d httpapi.Discovery
	var err error
	d.RequestSchema, err = api.Schema("ReadinessRequest")
	require.NoError(t, err)
	d.ExampleRequest, err = api.Example("ReadinessRequestExample")
	require.NoError(t, err)
	d.ExampleResponse, err = api.Example("ReadinessReportExample")
	require.NoError(t, err)
	return d
}

func (s *stack) payerAddress() string { return crypto.PubkeyToAddress(s.payer.PublicKey).Hex() }

// answer is one exchange, validated against the OpenAPI document.
type answer struct {
	status   int
	header   http.Header
	body     []byte
	problem  string
	required *x402.PaymentRequired
	settled  *x402.SettleResponse
	report   *reportBody
}

type reportBody struct {
	OK      bool            `json:"ok"`
	Data    json.RawMessage `json:"data"`
	Payment struct {
		Protocol    string `json:"protocol"`
		PriceUsd    string `json:"priceUsd"`
		Replayed    bool   `json:"replayed"`
		Network     string `json:"network"`
		Transaction string `json:"transaction"`
	} `json:"payment"`
}

func (s *stack) post(t testing.TB, body []byte, paymentHeader string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+httpapi.Path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if paymentHeader != "" {
		req.Header.Set(x402.HeaderPaymentSignature, paymentHeader)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	requireHeaderFits(t, resp)
	a := answer{status: resp.StatusCode, header: resp.Header, body: raw}
	switch {
	case resp.StatusCode == http.StatusPaymentRequired:
		var pr x402.PaymentRequired
		require.NoError(t, x402.DecodeHeader(resp.Header.Get(x402.HeaderPaymentRequired), &pr))
		var fromBody x402.PaymentRequired
		require.NoError(t, json.Unmarshal(raw, &fromBody))
		require.Equal(t, pr.Accepts, fromBody.Accepts, "header and body carry the same challenge")
		require.Equal(t, pr.Error, fromBody.Error)
		a.required = &pr
	case resp.StatusCode == http.StatusOK:
		a.report = &reportBody{}
		require.NoError(t, json.Unmarshal(raw, a.report))
	default:
		var p struct{ Code string }
		require.NoError(t, json.Unmarshal(raw, &p))
		a.problem = p.Code
	}
	if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
		a.settled = &x402.SettleResponse{}
		require.NoError(t, x402.DecodeHeader(h, a.settled))
	}
	return a
}

// maxHeaderBlock is the bound on a response's header block (DESIGN.md):
// nginx's default proxy_buffer_size, also ingress-nginx's, is one 4 KiB
// page, and a larger header block becomes 502 "upstream sent too big header".
const maxHeaderBlock = 4096

// headerBlock is the size of resp's status line and header fields as they
// travel on HTTP/1.1, with the empty line that ends them.
func headerBlock(t testing.TB, resp *http.Response) int {
	t.Helper()
	dump, err := httputil.DumpResponse(resp, false)
	require.NoError(t, err)
	return len(dump)
}

// requireHeaderFits fails the test when resp's header block would not pass
// an ingress with default buffers. Every exchange of the harness checks it.
func requireHeaderFits(t testing.TB, resp *http.Response) {
	t.Helper()
	n := headerBlock(t, resp)
	require.Less(t, n, maxHeaderBlock, "%d answered a header block of %d bytes (PAYMENT-REQUIRED %d, PAYMENT-RESPONSE %d)",
		resp.StatusCode, n, len(resp.Header.Get(x402.HeaderPaymentRequired)), len(resp.Header.Get(x402.HeaderPaymentResponse)))
}

// offer asks for the challenge and returns our testnet offer from it.
func (s *stack) offer(t testing.TB) x402.PaymentRequirements {
	t.Helper()
	a := s.post(t, validBody, "")
	require.Equal(t, http.StatusPaymentRequired, a.status)
	for _, o := range a.required.Accepts {
		if o.Network == testnet {
			return o
		}
	}
	t.Fatal("no testnet offer")
	return x402.PaymentRequirements{}
}

// sign pays offer with the stack's payer, letting edit change the signed
// authorization or the accepted requirements first.
func (s *stack) sign(t testing.TB, offer x402.PaymentRequirements, edit func(*x402.PaymentRequirements)) x402.PaymentPayload {
	t.Helper()
	if edit != nil {
		edit(&offer)
	}
	p, err := x402.NewExactPayment(s.payer, offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	return p
}

func encode(t testing.TB, v any) string {
	t.Helper()
	h, err := x402.EncodeHeader(v)
	require.NoError(t, err)
	return h
}

// ledgerState is what a refusal must leave unchanged.
type ledgerState struct {
	payer, payee uint64
	settlements  int
	outbox       int64
}

func (s *stack) ledgerState(t testing.TB) ledgerState {
	t.Helper()
	ctx := context.Background()
	payer, err := s.ledger.Balance(ctx, testnet, s.asset, s.payerAddress())
	require.NoError(t, err)
	payee, err := s.ledger.Balance(ctx, testnet, s.asset, payTo)
	require.NoError(t, err)
	settlements, err := s.ledger.Settlements(ctx, testnet, s.asset)
	require.NoError(t, err)
	var outbox int64
	for _, stream := range journal.Sharding.Streams() {
		n, err := s.rdb.XLen(ctx, stream).Result()
		require.NoError(t, err)
		outbox += n
	}
	return ledgerState{payer: payer, payee: payee, settlements: len(settlements), outbox: outbox}
}
