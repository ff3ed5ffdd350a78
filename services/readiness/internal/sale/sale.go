// Package sale sells one readiness report for one x402 payment:
//
//	claim the payment (network, asset, payer, nonce) → verify it with the
//	facilitator → compute the report → count it against the settlement caps →
//	settle → record the settlement and its event in one step.
//
// A payment buys one report: a retry with the same payment and the same
// request gets the stored report (replayed), never a second settlement. When
// the settlement outcome is unknown the payment waits for the Reconciler,
// which asks the facilitator again and records the answer.
package sale

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

	"github.com/pcourt/pcourt/libs/jcs"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// Facilitator verifies and settles payments. Settle must be idempotent for
// one authorization: asking again returns the original outcome.
type Facilitator interface {
	Verify(ctx context.Context, req x402.VerifyRequest) (x402.VerifyResponse, error)
	Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error)
}

// Config configures a Seller.
type Config struct {
	Table readiness.RuleTable
	// Lease bounds one request's hold on a payment; it must exceed the
	// facilitator timeout so a live request is never reconciled under it.
	Lease time.Duration
	// Resource is the public URL of the paid resource, recorded in events.
	Resource string
}

// Seller sells reports.
type Seller struct {
	cfg         Config
	payments    *store.Payments
	caps        *store.Caps
	facilitator Facilitator
	logger      *slog.Logger
	now         func() time.Time
}

// NewSeller returns a Seller. now may be nil for time.Now.
func NewSeller(cfg Config, payments *store.Payments, caps *store.Caps, f Facilitator, logger *slog.Logger, now func() time.Time) *Seller {
	if now == nil {
		now = time.Now
	}
	return &Seller{cfg: cfg, payments: payments, caps: caps, facilitator: f, logger: logger, now: now}
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

// Refused is a payment the facilitator refused. Settlement is set when the
// refusal came from settling (the client gets it in PAYMENT-RESPONSE).
type Refused struct {
	Reason     string
	Settlement *x402.SettleResponse
}

func (r *Refused) Error() string { return "payment refused: " + r.Reason }

// Errors of Sell besides *Refused and *store.CapReached.
var (
	ErrFacilitatorUnavailable = errors.New("facilitator unavailable")
	ErrAwaitingReconciliation = errors.New("settlement outcome unknown; awaiting reconciliation")
	ErrInProgress             = store.ErrInProgress
	ErrRequestMismatch        = store.ErrRequestMismatch
	ErrPayloadMismatch        = store.ErrPayloadMismatch
	ErrPaymentIDConflict      = store.ErrPaymentIDConflict
)

// Sell runs the purchase, or replays its stored outcome.
func (s *Seller) Sell(ctx context.Context, p Purchase) (Receipt, error) {
	payload, err := json.Marshal(p.Payment)
	if err != nil {
		return Receipt{}, fmt.Errorf("encoding payment: %w", err)
	}
	payloadHash := digest(payload)
	if p.PaymentID != "" {
		if err := s.payments.BindPaymentID(ctx, p.PaymentID, payloadHash); err != nil {
			return Receipt{}, err
		}
	}
	offer, err := json.Marshal(p.Offer)
	if err != nil {
		return Receipt{}, fmt.Errorf("encoding offer: %w", err)
	}
	auth := p.Payment.Payload.Authorization
	key := store.Key{Network: p.Offer.Network, Asset: p.Offer.Asset, Payer: auth.From, Nonce: auth.Nonce}
	id, token := key.ID(), newToken()

	claim, err := s.payments.Claim(ctx, key, store.Claim{
		Fingerprint: p.Fingerprint, PayloadHash: payloadHash, Requirements: offer, Payload: payload, Lease: s.cfg.Lease,
	}, token)
	if err != nil {
		return Receipt{}, err
	}
	if !claim.Claimed {
		return replay(claim)
	}

	verify, err := s.facilitator.Verify(ctx, x402.VerifyRequest{X402Version: x402.Version, PaymentPayload: p.Payment, PaymentRequirements: p.Offer})
	if err != nil {
		s.release(ctx, id, token)
		return Receipt{}, fmt.Errorf("%w: verifying: %v", ErrFacilitatorUnavailable, err)
	}
	if !verify.IsValid {
		// Verification moves nothing and may fail for a reason the payer can
		// fix (funds); the claim is released so the payment can be retried.
		s.release(ctx, id, token)
		return Receipt{}, &Refused{Reason: verify.InvalidReason}
	}

	now := s.now()
	report, err := json.Marshal(readiness.Evaluate(s.cfg.Table, p.Request, now))
	if err != nil {
		s.release(ctx, id, token)
		return Receipt{}, fmt.Errorf("encoding report: %w", err)
	}
	reservation, err := s.caps.Reserve(ctx, auth.From, now)
	if err != nil {
		s.release(ctx, id, token)
		return Receipt{}, err
	}
	if err := s.payments.StartSettling(ctx, id, token, report, s.cfg.Lease); err != nil {
		s.caps.Release(ctx, reservation)
		return Receipt{}, err
	}

	settlement, err := s.facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: p.Payment, PaymentRequirements: p.Offer})
	if err != nil {
		// Whether the funds moved is unknown. The reservation stays counted
		// and the reconciler settles the question.
		if perr := s.payments.MarkPending(context.WithoutCancel(ctx), id, token); perr != nil {
			s.logger.ErrorContext(ctx, "marking payment pending failed; the reconciler picks it up when its lease lapses", "payment", id, "err", perr)
		}
		s.logger.WarnContext(ctx, "settlement outcome unknown", "payment", id, "err", err)
		return Receipt{}, ErrAwaitingReconciliation
	}
	outcome, err := s.record(context.WithoutCancel(ctx), id, p.Fingerprint, settlement, false)
	if err != nil {
		return Receipt{}, err
	}
	if !settlement.Success {
		s.caps.Release(ctx, reservation)
		return Receipt{}, outcome
	}
	return Receipt{Report: report, Settlement: settlement}, nil
}

// record stores the facilitator's settle answer: a settlement with its
// event, or a refusal. It returns the *Refused for a refusal.
func (s *Seller) record(ctx context.Context, id, fingerprint string, settlement x402.SettleResponse, reconciled bool) (*Refused, error) {
	raw, err := json.Marshal(settlement)
	if err != nil {
		return nil, fmt.Errorf("encoding settlement: %w", err)
	}
	if !settlement.Success {
		if _, err := s.payments.RecordRefused(ctx, id, raw, settlement.ErrorReason); err != nil {
			return nil, err
		}
		return &Refused{Reason: settlement.ErrorReason, Settlement: &settlement}, nil
	}
	return nil, s.recordSettled(ctx, id, fingerprint, settlement, raw, reconciled)
}

func (s *Seller) recordSettled(ctx context.Context, id, fingerprint string, settlement x402.SettleResponse, raw []byte, reconciled bool) error {
	unfinished, err := s.payments.Get(ctx, id)
	if err != nil {
		return err
	}
	var offer x402.PaymentRequirements
	if err := json.Unmarshal(unfinished.Requirements, &offer); err != nil {
		return fmt.Errorf("decoding stored offer of %s: %w", id, err)
	}
	_, err = s.payments.RecordSettled(ctx, id, raw, store.SettlementEvent{
		EventID:       "readiness-settlement:" + id,
		PaymentID:     id,
		Network:       offer.Network,
		Asset:         offer.Asset,
		Payer:         unfinished.Payer,
		PayTo:         offer.PayTo,
		Amount:        offer.Amount,
		Transaction:   settlement.Transaction,
		Resource:      s.cfg.Resource,
		RulesVersion:  s.cfg.Table.Version,
		SettledAt:     s.now().UTC().Truncate(time.Millisecond),
		Reconciled:    reconciled,
		RequestDigest: fingerprint,
	})
	return err
}

func (s *Seller) release(ctx context.Context, id, token string) {
	if err := s.payments.Release(context.WithoutCancel(ctx), id, token); err != nil {
		s.logger.ErrorContext(ctx, "releasing payment claim failed; it frees itself when the lease lapses", "payment", id, "err", err)
	}
}

// replay turns a stored outcome into the answer for a retry.
func replay(c store.ClaimOutcome) (Receipt, error) {
	switch c.State {
	case store.Settled:
		var settlement x402.SettleResponse
		if err := json.Unmarshal(c.Settlement, &settlement); err != nil {
			return Receipt{}, fmt.Errorf("decoding stored settlement: %w", err)
		}
		return Receipt{Report: c.Report, Settlement: settlement, Replayed: true}, nil
	case store.Refused:
		var settlement x402.SettleResponse
		if err := json.Unmarshal(c.Settlement, &settlement); err != nil {
			return Receipt{}, fmt.Errorf("decoding stored settlement: %w", err)
		}
		return Receipt{}, &Refused{Reason: c.Reason, Settlement: &settlement}
	}
	return Receipt{}, ErrAwaitingReconciliation
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

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
