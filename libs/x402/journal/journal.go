package journal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/x402"
)

// Retention is how long a payment record is kept once claimed. An
// authorization is valid for minutes; a week covers any sane retry, and
// outlives every authorization, so an expired record can never be reused.
const Retention = 7 * 24 * time.Hour

// Sharding spreads payment records, their unfinished indexes and the
// settlement outbox over hash tags.
var Sharding = outbox.Sharding{Service: "x402", Count: outbox.DefaultShards}

// Facilitator verifies and settles payments. Settle must answer a repeat of
// a settled authorization with the original outcome; reconciliation relies
// on it.
type Facilitator interface {
	Verify(ctx context.Context, req x402.VerifyRequest) (x402.VerifyResponse, error)
	Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error)
}

// State is where a payment record stands.
type State string

// The states of a payment record, and two answers of Standing that are
// never stored.
const (
	Verifying State = "verifying"
	Settling  State = "settling"
	Pending   State = "pending"
	Settled   State = "settled"
	Refused   State = "refused"

	// Absent: no record; the payment was never claimed, or its claim was
	// released because nothing moved.
	Absent State = ""
	// Abandoned: claimed, but its request died before settling and its
	// lease lapsed. It can no longer start settling under that claim.
	Abandoned State = "abandoned"
)

// Config configures a Journal for one owner.
type Config struct {
	// Owner names the service using the journal ("readiness", "filings").
	// It scopes the unfinished index, so each service reconciles only its
	// own payments.
	Owner string
	// Lease bounds one request's hold on a payment; it must exceed the
	// facilitator timeout so a live request is never reconciled under it.
	Lease time.Duration
	// FulfilledOnSettle says the settlement itself delivers what was paid
	// for (the readiness report is stored before settling). Otherwise a
	// settled payment stays unfinished until Fulfilled is called, and the
	// reconciler hands it to its fulfil function.
	FulfilledOnSettle bool
	// Event, when set, returns the outbox event recorded in the same step
	// as a settlement.
	Event func(r Record, s x402.SettleResponse, reconciled bool) (outbox.Event, error)
	// Durable confirms the two writes a payment must not lose before the
	// journal goes on (nil: none): the mark that settling started, written
	// before the facilitator moves money (lost, the same payment could be
	// claimed again for another resource), and the settlement itself.
	Durable *redisclient.Durable
}

// Validate reports an unusable configuration.
func (c Config) Validate() error {
	if c.Owner == "" || c.Lease <= 0 {
		return errors.New("x402 journal: owner and a positive lease required")
	}
	return nil
}

// Journal records payments and drives them to settlement.
type Journal struct {
	cfg         Config
	rdb         redis.UniversalClient
	facilitator Facilitator
	logger      *slog.Logger
}

// New returns the journal of one owner.
func New(cfg Config, rdb redis.UniversalClient, f Facilitator, logger *slog.Logger) (*Journal, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Journal{cfg: cfg, rdb: rdb, facilitator: f, logger: logger}, nil
}

// Purchase is one presentation of a payment for a resource.
type Purchase struct {
	// Resource is the path of what the payment buys (not its absolute URL,
	// which follows configuration): a payment pays for one resource.
	Resource string
	// Fingerprint identifies the request within the resource: the same
	// payment with another fingerprint is ErrRequestMismatch. Empty for a
	// resource that takes no body.
	Fingerprint string
	// Ref is the owner's reference (a draft id), handed back on
	// reconciliation.
	Ref     string
	Payment x402.PaymentPayload      // as the client signed it
	Offer   x402.PaymentRequirements // our own offer it matched
	// Prepare, when set, runs once the payment is claimed and verified and
	// before it is settled: it decides whether the sale may go on and
	// returns the receipt to store and replay. An error releases the claim
	// and is returned: nothing was settled.
	Prepare func(ctx context.Context) ([]byte, error)
	// Undo, when set, gives back what Prepare took when no settlement
	// follows it (a refusal, a lost lease).
	Undo func(ctx context.Context)
}

// Outcome is what a settled payment bought.
type Outcome struct {
	ID         string
	Receipt    []byte
	Settlement x402.SettleResponse
	// Replayed: the payment was settled by an earlier request.
	Replayed bool
	// Fulfilled: the owner has delivered what was paid for.
	Fulfilled bool
}

// Refusal is a payment the facilitator refused, at verification or at
// settlement. Settlement is set when the refusal came from settling (the
// client gets it in PAYMENT-RESPONSE).
type Refusal struct {
	Reason     string
	Settlement *x402.SettleResponse
}

func (r *Refusal) Error() string { return "payment refused: " + r.Reason }

// Errors of Pay besides *Refusal and Prepare's own.
var (
	ErrAlreadyUsed            = errors.New("payment already used for another resource")
	ErrRequestMismatch        = errors.New("payment already used for a different request")
	ErrPayloadMismatch        = errors.New("payment authorization already seen with a different payload")
	ErrInProgress             = errors.New("payment is being processed by another request")
	ErrLeaseLost              = errors.New("payment record is no longer owned by this request")
	ErrNotFound               = errors.New("payment record not found")
	ErrFacilitatorUnavailable = errors.New("facilitator unavailable")
	ErrAwaitingReconciliation = errors.New("settlement outcome unknown; awaiting reconciliation")
)

// ID returns the journal id of a payment for our offer.
func ID(offer x402.PaymentRequirements, p x402.PaymentPayload) string {
	return x402.AuthorizationID(offer, p)
}

// Pay claims the payment for the purchase, verifies it, prepares, settles
// and records the outcome; or replays what an earlier request recorded.
func (j *Journal) Pay(ctx context.Context, p Purchase) (Outcome, error) {
	payload, err := json.Marshal(p.Payment)
	if err != nil {
		return Outcome{}, fmt.Errorf("encoding payment: %w", err)
	}
	offer, err := json.Marshal(p.Offer)
	if err != nil {
		return Outcome{}, fmt.Errorf("encoding offer: %w", err)
	}
	id, token := ID(p.Offer, p.Payment), newToken()
	claimed, rec, err := j.claim(ctx, id, token, p, payload, offer)
	if err != nil {
		return Outcome{}, err
	}
	if !claimed {
		return replay(rec)
	}

	verify, err := j.facilitator.Verify(ctx, x402.VerifyRequest{X402Version: x402.Version, PaymentPayload: p.Payment, PaymentRequirements: p.Offer})
	if err != nil {
		j.release(ctx, id, token)
		return Outcome{}, fmt.Errorf("%w: verifying: %v", ErrFacilitatorUnavailable, err)
	}
	if !verify.IsValid {
		// Verification moves nothing and may fail for a reason the payer
		// can fix (funds); the claim is released so the payment can be
		// presented again.
		j.release(ctx, id, token)
		return Outcome{}, &Refusal{Reason: verify.InvalidReason}
	}
	var receipt []byte
	if p.Prepare != nil {
		if receipt, err = p.Prepare(ctx); err != nil {
			j.release(ctx, id, token)
			return Outcome{}, err
		}
	}
	undo := func() {
		if p.Undo != nil {
			p.Undo(context.WithoutCancel(ctx))
		}
	}
	if err := j.startSettling(ctx, id, token, receipt); err != nil {
		undo()
		return Outcome{}, err
	}

	settlement, err := j.facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: p.Payment, PaymentRequirements: p.Offer})
	if err != nil {
		// Whether the funds moved is unknown. What Prepare took stays
		// taken, and the reconciler settles the question.
		if perr := j.markPending(context.WithoutCancel(ctx), id, token); perr != nil {
			j.logger.ErrorContext(ctx, "marking payment pending failed; the reconciler picks it up when its lease lapses", "payment", id, "err", perr)
		}
		j.logger.WarnContext(ctx, "settlement outcome unknown", "payment", id, "err", err)
		return Outcome{}, ErrAwaitingReconciliation
	}
	// The record as the steps above left it, known here without reading
	// it back: the event is built from it.
	settling := Record{
		ID: id, Owner: j.cfg.Owner, Resource: p.Resource, Fingerprint: p.Fingerprint, Ref: p.Ref,
		State: Settling, Payer: p.Payment.Payload.Authorization.From, Offer: p.Offer, Payment: p.Payment, Receipt: receipt,
	}
	if err := j.record(context.WithoutCancel(ctx), settling, settlement, false); err != nil {
		return Outcome{}, err
	}
	if !settlement.Success {
		undo()
		return Outcome{}, &Refusal{Reason: settlement.ErrorReason, Settlement: &settlement}
	}
	return Outcome{ID: id, Receipt: receipt, Settlement: settlement, Fulfilled: j.cfg.FulfilledOnSettle}, nil
}

// replay turns a stored outcome into the answer for a repeat.
func replay(r Record) (Outcome, error) {
	switch r.State {
	case Settled:
		return Outcome{ID: r.ID, Receipt: r.Receipt, Settlement: *r.Settlement, Replayed: true, Fulfilled: r.Fulfilled}, nil
	case Refused:
		return Outcome{}, &Refusal{Reason: r.Reason, Settlement: r.Settlement}
	}
	return Outcome{}, ErrAwaitingReconciliation
}

// record stores the facilitator's settle answer for r, a payment settling
// or pending: a settlement with its event, or a refusal.
func (j *Journal) record(ctx context.Context, r Record, s x402.SettleResponse, reconciled bool) error {
	id := r.ID
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding settlement: %w", err)
	}
	if !s.Success {
		return j.recordRefused(ctx, id, raw, s.ErrorReason)
	}
	var event []any
	if j.cfg.Event != nil {
		ev, err := j.cfg.Event(r, s, reconciled)
		if err != nil {
			return fmt.Errorf("building the settlement event of %s: %w", id, err)
		}
		event = outbox.Args(ctx, ev)
	}
	// A request that settled gets a lease's time to fulfil before the
	// reconciler steps in; the reconciler fulfils at once.
	fulfilAfter := j.cfg.Lease
	if reconciled {
		fulfilAfter = 0
	}
	return j.recordSettled(ctx, id, raw, fulfilAfter, event)
}

func (j *Journal) release(ctx context.Context, id, token string) {
	if err := releaseScript.Run(context.WithoutCancel(ctx), j.rdb, j.keys(id), token, id).Err(); err != nil {
		j.logger.ErrorContext(ctx, "releasing payment claim failed; it frees itself when the lease lapses", "payment", id, "err", err)
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
