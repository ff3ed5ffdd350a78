package rails_test

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/cases/internal/rails"
)

// network is the test network: Base Sepolia, which the local facilitator
// settles by default.
const network = "eip155:84532"

// clock is the local facilitator's clock, moved only by the test.
type clock struct{ unix atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(c.unix.Load(), 0) }
func (c *clock) Advance(d time.Duration) { c.unix.Add(int64(d / time.Second)) }

// fixture is the real local facilitator on a real redis-server, over real
// HTTP, and the rail paying through it from a fresh operator account.
type fixture struct {
	ledger   *localfacilitator.Ledger
	clock    *clock
	asset    x402.Asset
	operator *ecdsa.PrivateKey
	rail     *rails.X402Refunds
	url      string
}

const token = "test-facilitator-token"

func newFixture(t testing.TB, operatorFunds uint64) *fixture {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	f := &fixture{ledger: localfacilitator.NewLedger(rdb), clock: &clock{}}
	f.clock.unix.Store(time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC).Unix())

	// The facilitator demands a bearer token, as the service's is
	// configured in production (FACILITATOR_AUTH_HEADER).
	cfg := localfacilitator.DefaultConfig()
	cfg.Now = f.clock.Now
	cfg.Token = envconf.Secret(token)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: logger})
	server, err := localfacilitator.NewServer(cfg, f.ledger, logger)
	require.NoError(t, err)
	server.Register(hs.Router())
	ts := httptest.NewServer(hs.Router())
	t.Cleanup(ts.Close)
	f.url = ts.URL

	asset, ok := x402.USDC(network)
	require.True(t, ok)
	f.asset = asset
	f.operator = newKey(t)
	if operatorFunds > 0 {
		f.fund(t, f.operator, operatorFunds)
	}
	f.rail = f.railAt(t, ts.URL)
	return f
}

// railAt returns a rail of the fixture's operator paying through the
// facilitator at url.
func (f *fixture) railAt(t testing.TB, url string) *rails.X402Refunds {
	t.Helper()
	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: url, Authorization: envconf.Secret("Bearer " + token), Timeout: 5 * time.Second})
	require.NoError(t, err)
	rail, err := rails.NewX402Refunds(rails.Config{Networks: []string{network}}, client, f.operator)
	require.NoError(t, err)
	return rail
}

func (f *fixture) fund(t testing.TB, key *ecdsa.PrivateKey, amount uint64) {
	t.Helper()
	require.NoError(t, f.ledger.Fund(context.Background(), network, f.asset.Address.Hex(), address(key).Hex(), amount))
}

func (f *fixture) balance(t testing.TB, addr string) uint64 {
	t.Helper()
	n, err := f.ledger.Balance(context.Background(), network, f.asset.Address.Hex(), addr)
	require.NoError(t, err)
	return n
}

func (f *fixture) settlements(t testing.TB) []localfacilitator.Settlement {
	t.Helper()
	s, err := f.ledger.Settlements(context.Background(), network, f.asset.Address.Hex())
	require.NoError(t, err)
	return s
}

// transfer is a refund of USD 42.50 to a fresh payer, created now.
func (f *fixture) transfer(t testing.TB, executionID string) rails.Transfer {
	t.Helper()
	amount, err := rails.AtomicUSDC("USD", 4250)
	require.NoError(t, err)
	return rails.Transfer{
		ExecutionID: executionID,
		Network:     network,
		Asset:       f.asset.Address.Hex(),
		To:          address(newKey(t)).Hex(),
		Amount:      amount,
		CreatedAt:   f.clock.Now(),
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	return key
}

func address(key *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(key.PublicKey) }

func TestARefundMovesTheAmountFromTheOperatorToThePayerOnce(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	tr := f.transfer(t, "exe_01JD7Q4ZK2")

	got, err := f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)

	require.Equal(t, uint64(42_500_000), tr.Amount, "USD 42.50 is 42.5 USDC")
	require.Equal(t, uint64(100*1_000_000-42_500_000), f.balance(t, f.rail.Operator()))
	require.Equal(t, tr.Amount, f.balance(t, tr.To))
	settled := f.settlements(t)
	require.Len(t, settled, 1)
	st := settled[0]
	require.Equal(t, address(f.operator), st.From)
	require.Equal(t, common.HexToAddress(tr.To), st.To)
	require.Equal(t, tr.Amount, st.Amount)
	require.Equal(t, rails.Nonce(tr.ExecutionID), st.Nonce, "the nonce is the execution's")

	want := rails.Receipt{
		Transaction: st.Transaction, Network: network, Asset: f.asset.Address.Hex(),
		From: address(f.operator).Hex(), To: common.HexToAddress(tr.To).Hex(), Amount: tr.Amount,
	}
	require.Empty(t, cmp.Diff(want, got, cmpIgnoreConfirmedAt))
	require.WithinDuration(t, time.Now(), got.ConfirmedAt, time.Minute)
}

var cmpIgnoreConfirmedAt = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "ConfirmedAt" }, cmp.Ignore())

// Twenty replicas (or retries) executing the same command at once send the
// same signed authorization: the ledger settles it once and answers every
// one of them with the same transaction.
func TestTwentyConcurrentRefundsOfOneExecutionSettleOneTransfer(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	tr := f.transfer(t, "exe_concurrent")
	// Each attempt has its own rail and client, as separate pods would.
	attempts := make([]*rails.X402Refunds, 20)
	for i := range attempts {
		attempts[i] = f.railAt(t, f.url)
	}

	receipts := make([]rails.Receipt, len(attempts))
	errs := make([]error, len(attempts))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, rail := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			receipts[i], errs[i] = rail.Refund(context.Background(), tr)
		}()
	}
	close(start)
	wg.Wait()

	for i, err := range errs {
		require.NoError(t, err, "attempt %d", i)
	}
	settled := f.settlements(t)
	require.Len(t, settled, 1, "one transfer")
	for i, r := range receipts {
		require.Equal(t, settled[0].Transaction, r.Transaction, "attempt %d learns the one transaction", i)
	}
	require.Equal(t, tr.Amount, f.balance(t, tr.To))
	require.Equal(t, uint64(100*1_000_000)-tr.Amount, f.balance(t, f.rail.Operator()))
}

// An attempt whose answer was lost (a crash after sending, a timeout) is
// answered by asking again, later, even after the authorization's window
// has closed: the facilitator answers the stored settlement.
func TestARetryAfterTheWindowAnswersTheSettlementWithoutPayingAgain(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	tr := f.transfer(t, "exe_retry")
	first, err := f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)

	f.clock.Advance(rails.Validity + time.Hour)
	again, err := f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)
	require.Equal(t, first.Transaction, again.Transaction)
	require.Len(t, f.settlements(t), 1)
	require.Equal(t, tr.Amount, f.balance(t, tr.To))
}

// A refund that never settled within its window can never settle: the
// execution's nonce was not used, and its only authorization has expired.
func TestARefundPastItsWindowIsRefusedAndMovesNothing(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	tr := f.transfer(t, "exe_late")
	f.clock.Advance(rails.Validity)

	_, err := f.rail.Refund(context.Background(), tr)
	var refusal *rails.Refusal
	require.ErrorAs(t, err, &refusal)
	require.Equal(t, x402.ReasonValidBefore, refusal.Reason)
	require.Empty(t, f.settlements(t))
	require.Equal(t, uint64(100*1_000_000), f.balance(t, f.rail.Operator()))
}

// The same execution with other terms (here another amount) carries the
// same nonce under another authorization: the ledger refuses it and
// nothing moves a second time.
func TestAnotherTransferUnderASettledExecutionIsRefusedAsNonceUsed(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	tr := f.transfer(t, "exe_changed")
	_, err := f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)

	changed := tr
	changed.Amount = tr.Amount + 1
	_, err = f.rail.Refund(context.Background(), changed)
	require.ErrorIs(t, err, rails.ErrNonceUsed)
	require.NotErrorIs(t, err, rails.ErrRefused, "not a refusal with nothing moved: the execution did pay")
	require.Len(t, f.settlements(t), 1)
	require.Equal(t, tr.Amount, f.balance(t, tr.To))

	// Two executions are two nonces: the same payer can be refunded twice.
	second := tr
	second.ExecutionID = "exe_other"
	_, err = f.rail.Refund(context.Background(), second)
	require.NoError(t, err)
	require.Len(t, f.settlements(t), 2)
}

// An operator without the funds is refused with nothing moved, and the same
// execution settles once the operator is funded: a failed execution is
// retried with the same identity.
func TestAnUnfundedOperatorIsRefusedAndTheRetryPaysOnceFunded(t *testing.T) {
	f := newFixture(t, 1_000_000) // USD 1, less than the refund
	tr := f.transfer(t, "exe_unfunded")

	_, err := f.rail.Refund(context.Background(), tr)
	var refusal *rails.Refusal
	require.ErrorAs(t, err, &refusal)
	require.ErrorIs(t, err, rails.ErrRefused)
	require.Equal(t, x402.ReasonInsufficientFunds, refusal.Reason)
	require.Empty(t, f.settlements(t))
	require.Equal(t, uint64(1_000_000), f.balance(t, f.rail.Operator()))
	require.Zero(t, f.balance(t, tr.To))

	f.fund(t, f.operator, 100*1_000_000)
	_, err = f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)
	require.Len(t, f.settlements(t), 1)
	require.Equal(t, tr.Amount, f.balance(t, tr.To))
}

// Transfers the rail can see are wrong are refused before anything is
// signed or sent.
func TestBadTransfersAreRefusedBeforeAnythingMoves(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	for _, tc := range []struct {
		name   string
		edit   func(*rails.Transfer)
		reason string
	}{
		{"a destination that is not an address", func(tr *rails.Transfer) { tr.To = "0x1234" }, rails.ReasonInvalidDestination},
		{"a destination without 0x", func(tr *rails.Transfer) { tr.To = strings.TrimPrefix(tr.To, "0x") + "00" }, rails.ReasonInvalidDestination},
		{"the zero address", func(tr *rails.Transfer) { tr.To = common.Address{}.Hex() }, rails.ReasonInvalidDestination},
		{"the operator itself", func(tr *rails.Transfer) { tr.To = f.rail.Operator() }, rails.ReasonInvalidDestination},
		{"a zero amount", func(tr *rails.Transfer) { tr.Amount = 0 }, rails.ReasonInvalidAmount},
		{"a network the rail is not configured for", func(tr *rails.Transfer) { tr.Network = "eip155:8453" }, rails.ReasonUnsupportedNetwork},
		{"another token", func(tr *rails.Transfer) { tr.Asset = address(newKey(t)).Hex() }, rails.ReasonUnsupportedAsset},
		{"no execution id", func(tr *rails.Transfer) { tr.ExecutionID = "" }, rails.ReasonInvalidTransfer},
		{"no creation instant", func(tr *rails.Transfer) { tr.CreatedAt = time.Time{} }, rails.ReasonInvalidTransfer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := f.transfer(t, "exe_bad")
			tc.edit(&tr)
			_, err := f.rail.Refund(context.Background(), tr)
			var refusal *rails.Refusal
			require.ErrorAs(t, err, &refusal)
			require.Equal(t, tc.reason, refusal.Reason)
			require.Empty(t, f.settlements(t))
			require.Equal(t, uint64(100*1_000_000), f.balance(t, f.rail.Operator()))
		})
	}
}

// A facilitator that cannot be reached is a transient failure: retryable,
// and not a refusal.
func TestAnUnreachableFacilitatorIsUnavailableNotARefusal(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	gone := httptest.NewServer(nil)
	gone.Close()
	rail := f.railAt(t, gone.URL)

	tr := f.transfer(t, "exe_unreachable")
	_, err := rail.Refund(context.Background(), tr)
	require.ErrorIs(t, err, rails.ErrUnavailable)
	require.NotErrorIs(t, err, rails.ErrRefused)
	require.ErrorIs(t, err, facilitator.ErrUnavailable)

	// The same execution pays once the facilitator is back.
	_, err = f.rail.Refund(context.Background(), tr)
	require.NoError(t, err)
	require.Len(t, f.settlements(t), 1)
}

// A facilitator that refuses our credentials gave no answer about the
// transfer: it is unavailable to us, not a refusal of the refund.
func TestAFacilitatorRefusingOurTokenIsUnavailable(t *testing.T) {
	f := newFixture(t, 100*1_000_000)
	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: f.url, Authorization: envconf.Secret("Bearer wrong")})
	require.NoError(t, err)
	rail, err := rails.NewX402Refunds(rails.Config{Networks: []string{network}}, client, f.operator)
	require.NoError(t, err)

	_, err = rail.Refund(context.Background(), f.transfer(t, "exe_token"))
	require.ErrorIs(t, err, rails.ErrUnavailable)
	require.ErrorIs(t, err, facilitator.ErrRejected)
	require.Empty(t, f.settlements(t))
}

func TestAtomicUSDCConvertsCentsAndRefusesOtherCurrencies(t *testing.T) {
	for _, tc := range []struct {
		currency string
		cents    int64
		want     uint64
		reason   string
	}{
		{"USD", 1, 10_000, ""},
		{"USD", 4250, 42_500_000, ""},
		{"USD", 100_000_00, 100_000_000_000, ""},
		{"EUR", 4250, 0, rails.ReasonUnsupportedCurrency},
		{"usd", 4250, 0, rails.ReasonUnsupportedCurrency},
		{"", 4250, 0, rails.ReasonUnsupportedCurrency},
		{"USD", 0, 0, rails.ReasonInvalidAmount},
		{"USD", -1, 0, rails.ReasonInvalidAmount},
		{"USD", 1 << 62, 0, rails.ReasonInvalidAmount},
	} {
		got, err := rails.AtomicUSDC(tc.currency, tc.cents)
		if tc.reason == "" {
			require.NoError(t, err, "%s %d", tc.currency, tc.cents)
			require.Equal(t, tc.want, got)
			continue
		}
		var refusal *rails.Refusal
		require.True(t, errors.As(err, &refusal), "%s %d: %v", tc.currency, tc.cents, err)
		require.Equal(t, tc.reason, refusal.Reason)
	}
}

func TestNoncesAreTheExecutionsAndDistinct(t *testing.T) {
	a, b := rails.Nonce("exe_a"), rails.Nonce("exe_b")
	require.Equal(t, a, rails.Nonce("exe_a"))
	require.NotEqual(t, a, b)
	require.Len(t, a, 2+64)
	require.NotEqual(t, "0x"+common.Bytes2Hex(crypto.Keccak256([]byte("exe_a"))), a, "domain-separated")
}

func TestConfigNeedsKnownNetworks(t *testing.T) {
	key := newKey(t)
	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	for _, nets := range [][]string{nil, {"eip155:1"}, {"solana:mainnet"}} {
		_, err := rails.NewX402Refunds(rails.Config{Networks: nets}, client, key)
		require.Error(t, err, "%v", nets)
	}
	_, err = rails.NewX402Refunds(rails.Config{Networks: []string{network}}, client, nil)
	require.Error(t, err)
}
