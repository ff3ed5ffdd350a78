package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A fee is paid at most once. Its payment record lives beside its draft (same
// hash tag): the payment that holds it (an x402 authorization), and where
// its settlement stands. A payment whose outcome is unknown, or whose fee is
// settled but not yet applied to the draft, stays in the shard's
// unfinished-fee index until the reconciler or a retry finishes it.

// FeePaymentState is where a fee's payment stands.
type FeePaymentState string

// The states of a fee payment.
const (
	FeeSettling FeePaymentState = "settling"
	FeePending  FeePaymentState = "pending"
	FeeSettled  FeePaymentState = "settled"
	FeeRefused  FeePaymentState = "refused"
)

// Errors of a fee payment claim.
var (
	ErrFeePaymentInProgress = errors.New("this payment is being settled")
	ErrOtherFeePayment      = errors.New("another payment of this fee is being settled")
	ErrFeePaidByOther       = errors.New("the fee was paid by another payment")
)

// FeePayment is a fee's payment record.
type FeePayment struct {
	DraftID    string
	PaymentID  string
	State      FeePaymentState
	Offer      []byte // our requirements it matched, JSON
	Payload    []byte // the payment payload, JSON
	Settlement []byte // the facilitator's SettleResponse, once known
	Reason     string
	Applied    bool // the fee is marked paid on the draft
}

func feePaymentKey(draftID string) string {
	return "pc:filings:" + Sharding.Tag(draftID) + ":fee-payment:" + draftID
}

func unfinishedFeesKey(tag string) string { return "pc:filings:" + tag + ":fee-payments-unfinished" }

func feePaymentKeys(draftID string) []string {
	return []string{feePaymentKey(draftID), unfinishedFeesKey(Sharding.Tag(draftID))}
}

// ClaimFeePayment makes paymentID the payment of the draft's fee, unless the
// fee already has one. It returns the record as it stands: Claimed when this
// call made the claim and the caller must settle.
func (s *Drafts) ClaimFeePayment(ctx context.Context, draftID, paymentID string, offer, payload []byte, lease time.Duration) (FeePayment, bool, error) {
	res, err := claimFeePaymentScript.Run(ctx, s.rdb, feePaymentKeys(draftID),
		paymentID, offer, payload, lease.Milliseconds(), draftID, Retention.Milliseconds()).StringSlice()
	if err != nil {
		return FeePayment{}, false, fmt.Errorf("claiming the fee payment of %s: %w", draftID, err)
	}
	switch res[0] {
	case "claimed":
		return FeePayment{DraftID: draftID, PaymentID: paymentID, State: FeeSettling, Offer: offer, Payload: payload}, true, nil
	case "in_progress":
		return FeePayment{}, false, ErrFeePaymentInProgress
	case "other_in_progress":
		return FeePayment{}, false, ErrOtherFeePayment
	case "paid_by_other":
		return FeePayment{}, false, ErrFeePaidByOther
	}
	p, err := s.FeePayment(ctx, draftID)
	return p, false, err
}

// FeePayment reads a fee's payment record.
func (s *Drafts) FeePayment(ctx context.Context, draftID string) (FeePayment, error) {
	rec, err := s.rdb.HGetAll(ctx, feePaymentKey(draftID)).Result()
	if err != nil {
		return FeePayment{}, fmt.Errorf("reading the fee payment of %s: %w", draftID, err)
	}
	if len(rec) == 0 {
		return FeePayment{}, ErrNotFound
	}
	return FeePayment{
		DraftID: draftID, PaymentID: rec["payment_id"], State: FeePaymentState(rec["state"]),
		Offer: []byte(rec["offer"]), Payload: []byte(rec["payload"]), Settlement: []byte(rec["settlement"]),
		Reason: rec["reason"], Applied: rec["applied"] == "1",
	}, nil
}

// MarkFeePaymentPending records that the settlement outcome is unknown.
func (s *Drafts) MarkFeePaymentPending(ctx context.Context, draftID, paymentID string) error {
	return s.feePaymentStep(ctx, markFeePendingScript, draftID, paymentID)
}

// RecordFeeSettlement stores the facilitator's answer. A settled payment
// stays unfinished until MarkFeeApplied; a refused one is finished.
func (s *Drafts) RecordFeeSettlement(ctx context.Context, draftID, paymentID string, settled bool, settlement []byte, reason string) error {
	state := FeeRefused
	if settled {
		state = FeeSettled
	}
	if err := recordFeeSettlementScript.Run(ctx, s.rdb, feePaymentKeys(draftID), paymentID, string(state), settlement, reason, draftID).Err(); err != nil {
		return fmt.Errorf("recording the fee settlement of %s: %w", draftID, err)
	}
	return nil
}

// MarkFeeApplied records that the draft shows the fee paid: nothing is left to do.
func (s *Drafts) MarkFeeApplied(ctx context.Context, draftID, paymentID string) error {
	return s.feePaymentStep(ctx, markFeeAppliedScript, draftID, paymentID)
}

func (s *Drafts) feePaymentStep(ctx context.Context, script *redis.Script, draftID, paymentID string) error {
	if err := script.Run(ctx, s.rdb, feePaymentKeys(draftID), paymentID, draftID).Err(); err != nil {
		return fmt.Errorf("updating the fee payment of %s: %w", draftID, err)
	}
	return nil
}

// UnfinishedFeePayments lists the drafts of one shard whose fee payment is
// due for reconciliation.
func (s *Drafts) UnfinishedFeePayments(ctx context.Context, shardTag string, now time.Time, limit int) ([]string, error) {
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: unfinishedFeesKey(shardTag), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true, Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("listing unfinished fee payments: %w", err)
	}
	return ids, nil
}

// ShardTags lists the hash tags of every shard.
func ShardTags() []string {
	out := make([]string, Sharding.Count)
	for i := range out {
		out[i] = fmt.Sprintf("{%s.%02d}", Sharding.Service, i)
	}
	return out
}

const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// claimFeePaymentScript: KEYS record, unfinished index; ARGV payment id,
// offer, payload, lease ms, draft id, retention ms.
var claimFeePaymentScript = redis.NewScript(luaNow + `
local r = redis.call('HMGET', KEYS[1], 'payment_id', 'state', 'lease_until')
local function claim()
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'payment_id', ARGV[1], 'state', 'settling', 'offer', ARGV[2], 'payload', ARGV[3],
    'lease_until', now + tonumber(ARGV[4]))
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  -- If this request dies mid-settle, the reconciler takes over after the lease.
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[5])
  return {'claimed'}
end
if not r[1] then return claim() end
if r[1] ~= ARGV[1] then
  if r[2] == 'refused' then return claim() end
  if r[2] == 'settled' then return {'paid_by_other'} end
  return {'other_in_progress'}
end
if r[2] == 'settling' then
  if tonumber(r[3]) > now then return {'in_progress'} end
  redis.call('HSET', KEYS[1], 'state', 'pending')
  redis.call('ZADD', KEYS[2], now, ARGV[5])
end
return {'existing'}
`)

var markFeePendingScript = redis.NewScript(luaNow + `
if redis.call('HGET', KEYS[1], 'payment_id') ~= ARGV[1] then return 0 end
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('ZADD', KEYS[2], now, ARGV[2])
return 1
`)

// recordFeeSettlementScript ARGV: payment id, state, settlement, reason, draft id.
var recordFeeSettlementScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'payment_id') ~= ARGV[1] then return 0 end
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'settlement', ARGV[3], 'reason', ARGV[4])
redis.call('HDEL', KEYS[1], 'lease_until')
if ARGV[2] == 'refused' then redis.call('ZREM', KEYS[2], ARGV[5]) end
return 1
`)

var markFeeAppliedScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'payment_id') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'applied', '1')
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`)
