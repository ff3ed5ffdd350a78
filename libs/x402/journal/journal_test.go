package journal_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

const network = "eip155:84532"

// fixture is a journal over a real Redis and the local facilitator over
// real HTTP, with a switch that loses /settle answers after settling.
type fixture struct {
	rdb    redis.UniversalClient
	ledger *localfacilitator.Ledger
	fac    *lossy
	payer  *ecdsa.PrivateKey
	offer  x402.PaymentRequirements
}

// lossy settles for real, then loses the answer while lose is set.
type lossy struct {
	*facilitator.Client
	lose atomic.Bool
}

func (l *lossy) Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error) {
	s, err := l.Client.Settle(ctx, req)
	if err == nil && l.lose.Load() {
		return x402.SettleResponse{}, facilitator.ErrOutcomeUnknown
	}
	return s, err
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureOn(t, redistest.NewClient(t))
}

// newFixtureOn is newFixture over a Redis of the test's choosing.
func newFixtureOn(t testing.TB, rdb redis.UniversalClient) *fixture {
	t.Helper()
	f := &fixture{rdb: rdb, ledger: localfacilitator.NewLedger(rdb)}
	hs := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "facilitator", Logger: quiet()})
	server, err := localfacilitator.NewServer(localfacilitator.DefaultConfig(), f.ledger, quiet())
	require.NoError(t, err)
	server.Register(hs.Router())
	ts := httptest.NewServer(hs.Router())
	t.Cleanup(ts.Close)
	client, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: ts.URL})
	require.NoError(t, err)
	f.fac = &lossy{Client: client}
	f.payer, err = crypto.GenerateKey()
	require.NoError(t, err)
	usdc, _ := x402.USDC(network)
	require.NoError(t, f.ledger.Fund(context.Background(), network, usdc.Address.Hex(), crypto.PubkeyToAddress(f.payer.PublicKey).Hex(), 1_000_000))
	f.offer, err = usdc.Offer("10000", common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), 60)
	require.NoError(t, err)
	return f
}

func (f *fixture) journal(t testing.TB, owner string, fulfilledOnSettle bool) *journal.Journal {
	t.Helper()
	j, err := journal.New(journal.Config{
		Owner: owner, Lease: 30 * time.Second, FulfilledOnSettle: fulfilledOnSettle,
		Event: func(r journal.Record, s x402.SettleResponse, reconciled bool) (outbox.Event, error) {
			payload, err := json.Marshal(map[string]any{"payment": r.ID, "tx": s.Transaction, "reconciled": reconciled})
			return outbox.Event{ID: owner + ":" + r.ID, Topic: "test.settlements.v1", Key: r.Payer, Schema: "test-v1", Payload: payload}, err
		},
	}, f.rdb, f.fac, quiet())
	require.NoError(t, err)
	return j
}

func (f *fixture) payment(t testing.TB) x402.PaymentPayload {
	t.Helper()
	p, err := x402.NewExactPayment(f.payer, f.offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	return p
}

func (f *fixture) settlements(t testing.TB) int {
	t.Helper()
	s, err := f.ledger.Settlements(context.Background(), network, f.offer.Asset)
	require.NoError(t, err)
	return len(s)
}

func (f *fixture) events(t testing.TB) int64 {
	t.Helper()
	var n int64
	for _, s := range journal.Sharding.Streams() {
		l, err := f.rdb.XLen(context.Background(), s).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

func purchase(resource string, p x402.PaymentPayload, offer x402.PaymentRequirements) journal.Purchase {
	return journal.Purchase{Resource: resource, Payment: p, Offer: offer,
		Prepare: func(context.Context) ([]byte, error) { return []byte("receipt of " + resource), nil }}
}

func TestOnePaymentBuysOneResourceAcrossOwners(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		f := newFixtureOn(t, rdb)
		readiness, filings := f.journal(t, "readiness", true), f.journal(t, "filings", false)
		p := f.payment(t)

		out, err := readiness.Pay(ctx, purchase("/api/x402/dispute-readiness", p, f.offer))
		require.NoError(t, err)
		require.True(t, out.Settlement.Success)
		require.Equal(t, "receipt of /api/x402/dispute-readiness", string(out.Receipt))
		require.Equal(t, int64(1), f.events(t), "the settlement and its event in one step")

		for _, tc := range []struct {
			j        *journal.Journal
			resource string
		}{
			{filings, "/api/fees/fee-1/x402"},
			{readiness, "/api/other"},
		} {
			_, err := tc.j.Pay(ctx, purchase(tc.resource, p, f.offer))
			require.ErrorIs(t, err, journal.ErrAlreadyUsed, tc.resource)
		}
		again, err := readiness.Pay(ctx, purchase("/api/x402/dispute-readiness", p, f.offer))
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, out.Receipt, again.Receipt)
		require.Equal(t, 1, f.settlements(t), "settled once")
		require.Equal(t, int64(1), f.events(t))

		other := purchase("/api/x402/dispute-readiness", p, f.offer)
		other.Fingerprint = "another body"
		_, err = readiness.Pay(ctx, other)
		require.ErrorIs(t, err, journal.ErrRequestMismatch)
	})
}

func TestConcurrentPresentationsToManyResourcesSettleOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		f := newFixtureOn(t, rdb)
		j := f.journal(t, "filings", false)
		p := f.payment(t)
		var wg sync.WaitGroup
		var paid, used atomic.Int32
		for i := range 20 {
			wg.Go(func() {
				_, err := j.Pay(ctx, purchase(fmt.Sprintf("/api/fees/fee-%d/x402", i), p, f.offer))
				switch {
				case err == nil:
					paid.Add(1)
				case errors.Is(err, journal.ErrAlreadyUsed):
					used.Add(1)
				default:
					t.Errorf("presentation %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int32(1), paid.Load())
		require.Equal(t, int32(19), used.Load())
		require.Equal(t, 1, f.settlements(t))
	})
}

func TestRefusedVerificationReleasesTheClaimAndPrepareErrorsSettleNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	j := f.journal(t, "filings", false)
	p := f.payment(t)

	busy := purchase("/api/fees/fee-1/x402", p, f.offer)
	busy.Prepare = func(context.Context) ([]byte, error) { return nil, errors.New("fee has another payment") }
	_, err := j.Pay(ctx, busy)
	require.EqualError(t, err, "fee has another payment")
	require.Zero(t, f.settlements(t))
	standing, err := j.Standing(ctx, journal.ID(f.offer, p))
	require.NoError(t, err)
	require.Equal(t, journal.Absent, standing, "released: it may pay for something else")

	_, err = j.Pay(ctx, purchase("/api/fees/fee-2/x402", p, f.offer))
	require.NoError(t, err)

	poor, err := crypto.GenerateKey()
	require.NoError(t, err)
	unfunded, err := x402.NewExactPayment(poor, f.offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	_, err = j.Pay(ctx, purchase("/api/fees/fee-3/x402", unfunded, f.offer))
	var refused *journal.Refusal
	require.ErrorAs(t, err, &refused)
	require.Equal(t, x402.ReasonInsufficientFunds, refused.Reason)
	require.Nil(t, refused.Settlement, "refused at verification: nothing was settled")
	require.Equal(t, 1, f.settlements(t))
}

func TestLostSettlementIsReconciledAndFulfilledOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	j := f.journal(t, "filings", false)
	p := f.payment(t)
	id := journal.ID(f.offer, p)

	f.fac.lose.Store(true)
	pu := purchase("/api/fees/fee-1/x402", p, f.offer)
	pu.Ref = "draft-1"
	_, err := j.Pay(ctx, pu)
	require.ErrorIs(t, err, journal.ErrAwaitingReconciliation)
	_, err = j.Pay(ctx, pu)
	require.ErrorIs(t, err, journal.ErrAwaitingReconciliation, "a retry waits for the outcome")

	f.fac.lose.Store(false)
	other := f.journal(t, "readiness", true)
	n, err := other.ReconcileOnce(ctx, time.Now(), nil)
	require.NoError(t, err)
	require.Zero(t, n, "another owner's reconciler leaves it alone")

	var fulfilled []string
	fulfil := func(_ context.Context, r journal.Record) error { fulfilled = append(fulfilled, r.Ref); return nil }
	n, err = j.ReconcileOnce(ctx, time.Now(), fulfil)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"draft-1"}, fulfilled)
	n, err = j.ReconcileOnce(ctx, time.Now().Add(time.Hour), fulfil)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left")
	require.Equal(t, 1, f.settlements(t))
	require.Equal(t, int64(1), f.events(t))

	rec, err := j.Get(ctx, id)
	require.NoError(t, err)
	require.Equal(t, journal.Settled, rec.State)
	require.True(t, rec.Fulfilled)
	out, err := j.Pay(ctx, pu)
	require.NoError(t, err)
	require.True(t, out.Replayed)
	require.True(t, out.Fulfilled)
}

// With durable writes on, a payment is answered only once its replica
// holds the settlement: a primary lost right after the answer loses no
// payment. With the replica away the payment still settles once and is
// answered (the money moved; the record stands), and both of the
// payment's waits (settling started, settled) are logged short.
func TestDurableSettlementIsOnTheReplicaWhenAnswered(t *testing.T) {
	ctx := context.Background()
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	f := newFixtureOn(t, primary.Client(t))
	var log bytes.Buffer
	durable := redisclient.NewDurable(redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 200 * time.Millisecond},
		slog.New(slog.NewJSONHandler(&log, nil)))
	j, err := journal.New(journal.Config{Owner: "readiness", Lease: 30 * time.Second, FulfilledOnSettle: true, Durable: durable}, f.rdb, f.fac, quiet())
	require.NoError(t, err)

	out, err := j.Pay(ctx, purchase("/api/x402/dispute-readiness", f.payment(t), f.offer))
	require.NoError(t, err)
	onReplica, err := journal.New(journal.Config{Owner: "readiness", Lease: time.Second}, replica.Client(t), f.fac, quiet())
	require.NoError(t, err)
	rec, err := onReplica.Get(ctx, out.ID)
	require.NoError(t, err)
	require.Equal(t, journal.Settled, rec.State, "the replica has the settlement when the payment is answered")
	require.Empty(t, log.String())

	replica.Stop()
	out, err = j.Pay(ctx, purchase("/api/x402/dispute-readiness", f.payment(t), f.offer))
	require.NoError(t, err)
	require.True(t, out.Settlement.Success)
	require.Equal(t, 2, f.settlements(t))
	require.Equal(t, 2, strings.Count(log.String(), `"msg":"durable write short"`), log.String())
}
