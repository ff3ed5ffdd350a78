package localfacilitator_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// start is the fixed start of every test clock, inside no special window.
var start = time.Unix(1_750_000_000, 0)

// clock is a test clock that only moves when told.
type clock struct{ unix atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.unix.Store(start.Unix())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(c.unix.Load(), 0) }
func (c *clock) Advance(d time.Duration) { c.unix.Add(int64(d / time.Second)) }

// At returns the Unix time offset seconds from now, as the decimal string
// an authorization carries.
func (c *clock) At(offset int64) string { return strconv.FormatInt(c.unix.Load()+offset, 10) }

// fixture is a local facilitator on a real redis-server, served over real
// HTTP, and a Client of it.
type fixture struct {
	redis  *redistest.Server
	rdb    *redis.Client
	ledger *localfacilitator.Ledger
	client *facilitator.Client
	url    string
	clock  *clock
	asset  x402.Asset
	// offer is USD 0.010000 of Base Sepolia USDC to a fresh payTo.
	offer x402.PaymentRequirements
}

type fixtureOption func(*localfacilitator.Config, *facilitator.ClientConfig)

func withToken(token, header string) fixtureOption {
	return func(c *localfacilitator.Config, cc *facilitator.ClientConfig) {
		c.Token = envconf.Secret(token)
		cc.Authorization = envconf.Secret(header)
	}
}

func newFixture(t testing.TB, opts ...fixtureOption) *fixture {
	t.Helper()
	srv := redistest.Start(t)
	// No retries: a test that stops Redis wants the failure now, not after
	// go-redis has dialled a dead port for seconds.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	f := &fixture{redis: srv, rdb: rdb, ledger: localfacilitator.NewLedger(rdb), clock: newClock()}

	cfg := localfacilitator.DefaultConfig()
	cfg.Now = f.clock.Now
	var ccfg facilitator.ClientConfig
	for _, o := range opts {
		o(&cfg, &ccfg)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: logger})
	server, err := localfacilitator.NewServer(cfg, f.ledger, logger)
	require.NoError(t, err)
	server.Register(hs.Router())
	ts := httptest.NewServer(hs.Router())
	t.Cleanup(ts.Close)
	f.url = ts.URL

	ccfg.BaseURL = ts.URL
	client, err := facilitator.NewClient(ccfg)
	require.NoError(t, err)
	f.client = client

	asset, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	f.asset = asset
	f.offer = f.offerTo(t, newAddress(t), "10000")
	return f
}

func (f *fixture) offerTo(t testing.TB, payTo common.Address, amount string) x402.PaymentRequirements {
	t.Helper()
	offer, err := f.asset.Offer(amount, payTo, 60)
	require.NoError(t, err)
	return offer
}

// payer returns a fresh key whose address holds balance.
func (f *fixture) payer(t testing.TB, balance uint64) *ecdsa.PrivateKey {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	if balance > 0 {
		require.NoError(t, f.ledger.Fund(context.Background(), f.asset.Network, f.asset.Address.Hex(), address(key).Hex(), balance))
	}
	return key
}

// pay signs a payment for offer with key, as our paying client does.
func (f *fixture) pay(t testing.TB, key *ecdsa.PrivateKey, offer x402.PaymentRequirements) x402.PaymentPayload {
	t.Helper()
	p, err := x402.NewExactPayment(key, offer, f.clock.Now(), rand.Reader)
	require.NoError(t, err)
	return p
}

// balance reads the ledger balance of addr in the fixture's asset.
func (f *fixture) balance(t testing.TB, addr string) uint64 {
	t.Helper()
	n, err := f.ledger.Balance(context.Background(), f.asset.Network, f.asset.Address.Hex(), addr)
	require.NoError(t, err)
	return n
}

func (f *fixture) settlements(t testing.TB) []localfacilitator.Settlement {
	t.Helper()
	s, err := f.ledger.Settlements(context.Background(), f.asset.Network, f.asset.Address.Hex())
	require.NoError(t, err)
	return s
}

func verifyRequest(offer x402.PaymentRequirements, p x402.PaymentPayload) x402.VerifyRequest {
	return x402.VerifyRequest{X402Version: x402.Version, PaymentPayload: p, PaymentRequirements: offer}
}

// resign signs p's (edited) authorization again under the domain of req,
// so that a case breaks only the rule it means to.
func resign(t testing.TB, key *ecdsa.PrivateKey, req x402.PaymentRequirements, p *x402.PaymentPayload) {
	t.Helper()
	domain, err := x402.DomainFor(req)
	require.NoError(t, err)
	sig, err := x402.SignAuthorization(key, domain, p.Payload.Authorization)
	require.NoError(t, err)
	p.Payload.Signature = hexutil.Encode(sig)
}

func address(key *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(key.PublicKey) }

func newAddress(t testing.TB) common.Address {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	return address(key)
}
