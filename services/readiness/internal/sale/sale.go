// Package sale sells one readiness report for one x402 payment, through the
// project's x402 settlement journal:
//
//	claim the payment globally (network, asset, payer, nonce) → verify it
//	with the facilitator → compute the report → count it against the
//	settlement caps → settle → record the settlement and its event in one
//	step.
//
// A payment buys one report: a retry with the same payment and the same
// request gets the stored report (replayed), never a second settlement; the
// same payment for another request is refused, and for another resource
// (a filing fee) too. When the settlement outcome is unknown the payment
// waits for the journal's reconciler.
package sale

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/jcs"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/readiness/internal/events"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// Owner is the readiness service's name in the settlement journal.
const Owner = "readiness"

// Config configures a Seller.
type Config struct {
	Table readiness.RuleTable
	// Lease bounds one request's hold on a payment; it must exceed the
	// facilitator timeout so a live request is never reconciled under it.
	Lease time.Duration
	// Resource is the path of the paid resource, which the journal claims
	// payments for.
	Resource string
	// ResourceURL is its public URL, recorded in events.
	ResourceURL string
	// Durable confirms a payment's settlement records before the report
	// is answered (nil: none; journal.Config.Durable).
	Durable *redisclient.Durable
}

// Seller sells reports.
type Seller struct {
	cfg        Config
	rules      readiness.Rules
	journal    *journal.Journal
	paymentIDs *store.PaymentIDs
	caps       *store.Caps
	now        func() time.Time
}

// NewSeller returns a Seller over the shared journal. now may be nil for
// time.Now.
func NewSeller(cfg Config, rdb redis.UniversalClient, caps *store.Caps, f journal.Facilitator, logger *slog.Logger, now func() time.Time) (*Seller, error) {
	rules, err := readiness.NewRules(cfg.Table)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	s := &Seller{cfg: cfg, rules: rules, paymentIDs: store.NewPaymentIDs(rdb), caps: caps, now: now}
	j, err := journal.New(journal.Config{Owner: Owner, Lease: cfg.Lease, FulfilledOnSettle: true, Event: s.settlementEvent, Durable: cfg.Durable}, rdb, f, logger)
	if err != nil {
		return nil, err
	}
	s.journal = j
	return s, nil
}

// Purchase is one paid request, already validated by the HTTP layer.
type Purchase struct {
	Request     readiness.Request
	Fingerprint string                   // SHA-256 of the canonical request body
	Payment     x402.PaymentPayload      // as the client signed it
	Offer       x402.PaymentRequirements // our own offer the payment matched
	PaymentID   string                   // payment-identifier id, "" when none
}

// Receipt is what a settled payment bought.
type Receipt struct {
	Report     json.RawMessage // the report's exact bytes, as first computed
	Settlement x402.SettleResponse
	Replayed   bool
}

// Sell runs the purchase, or replays its stored outcome. Its errors are the
// journal's (*journal.Refusal among them), *store.CapReached and
// store.ErrPaymentIDConflict.
func (s *Seller) Sell(ctx context.Context, p Purchase) (Receipt, error) {
	if p.PaymentID != "" {
		payload, err := json.Marshal(p.Payment)
		if err != nil {
			return Receipt{}, fmt.Errorf("encoding payment: %w", err)
		}
		if err := s.paymentIDs.Bind(ctx, p.PaymentID, digest(payload)); err != nil {
			return Receipt{}, err
		}
	}
	var reservation store.Reservation
	out, err := s.journal.Pay(ctx, journal.Purchase{
		Resource: s.cfg.Resource, Fingerprint: p.Fingerprint, Payment: p.Payment, Offer: p.Offer,
		Prepare: func(ctx context.Context) ([]byte, error) {
			now := s.now()
			report, err := json.Marshal(readiness.Evaluate(s.rules, p.Request, now))
			if err != nil {
				return nil, fmt.Errorf("encoding report: %w", err)
			}
			// Counted before settling: a settlement whose outcome is
			// unknown stays counted until the reconciler knows it.
			if reservation, err = s.caps.Reserve(ctx, p.Payment.Payload.Authorization.From, now); err != nil {
				return nil, err
			}
			return report, nil
		},
		Undo: func(ctx context.Context) { s.caps.Release(ctx, reservation) },
	})
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{Report: out.Receipt, Settlement: out.Settlement, Replayed: out.Replayed}, nil
}

// settlementEvent is the fact a settlement publishes, recorded by the
// journal in the same step as the settlement.
func (s *Seller) settlementEvent(r journal.Record, settlement x402.SettleResponse, reconciled bool) (outbox.Event, error) {
	ev := events.Settlement{
		EventID:       "readiness-settlement:" + r.ID,
		PaymentID:     r.ID,
		Network:       r.Offer.Network,
		Asset:         r.Offer.Asset,
		Payer:         r.Payer,
		PayTo:         r.Offer.PayTo,
		Amount:        r.Offer.Amount,
		Transaction:   settlement.Transaction,
		Resource:      s.cfg.ResourceURL,
		RulesVersion:  s.rules.Version(),
		SettledAt:     s.now().UTC().Truncate(time.Millisecond),
		Reconciled:    reconciled,
		RequestDigest: r.Fingerprint,
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return outbox.Event{}, err
	}
	return outbox.Event{ID: ev.EventID, Topic: events.SettlementTopic, Key: ev.Payer, Schema: events.SettlementSchema, Payload: payload}, nil
}

// ReconcileOnce asks the facilitator again about every readiness payment
// whose settlement outcome is unknown and records the answers. It returns
// how many it resolved.
func (s *Seller) ReconcileOnce(ctx context.Context) (int, error) {
	return s.journal.ReconcileOnce(ctx, s.now(), nil)
}

// RunReconciler reconciles every interval until ctx is cancelled.
func (s *Seller) RunReconciler(ctx context.Context, interval time.Duration) error {
	return s.journal.RunReconciler(ctx, interval, nil)
}

// Fingerprint is the SHA-256 of the RFC 8785 canonical JSON of a request
// body: the same object sent with other spacing, member order or number
// spelling is the same request. A body outside I-JSON (the HTTP layer has
// already refused it) is taken as its bytes.
func Fingerprint(body []byte) string {
	if canonical, err := jcs.Canonicalize(json.RawMessage(body)); err == nil {
		return digest(canonical)
	}
	return digest(body)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
