package store

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// A fee is paid at most once. The payments themselves (claim, verification,
// settlement, reconciliation) live in the shared x402 settlement journal
// (libs/x402/journal); what lives here, beside the draft (same hash tag),
// is which payment the fee is bound to. Binding happens after the payment
// is claimed and verified and before it is settled, so two payments of one
// fee never both settle.

func (s *Drafts) feePaymentKey(draftID string) string {
	return "pc:filings:" + s.sharding.Tag(draftID) + ":fee-payment:" + draftID
}

// FeePaymentOf returns the journal id of the payment the draft's fee is
// bound to, "" when none.
func (s *Drafts) FeePaymentOf(ctx context.Context, draftID string) (string, error) {
	id, err := s.rdb.HGet(ctx, s.feePaymentKey(draftID), "payment_id").Result()
	if err == redis.Nil {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the fee payment of %s: %w", draftID, err)
	}
	return id, nil
}

// BindFeePayment binds the draft's fee to payment to, provided it is still
// bound to from ("" for none): a compare-and-swap, so of two requests that
// both saw the fee free, one binds. It reports whether it bound.
func (s *Drafts) BindFeePayment(ctx context.Context, draftID, from, to string) (bool, error) {
	n, err := bindFeePaymentScript.Run(ctx, s.rdb, []string{s.feePaymentKey(draftID)}, from, to, Retention.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("binding the fee payment of %s: %w", draftID, err)
	}
	return n == 1, nil
}

// bindFeePaymentScript ARGV: expected payment id ("" for none), new payment
// id, retention ms.
var bindFeePaymentScript = redis.NewScript(`
local current = redis.call('HGET', KEYS[1], 'payment_id') or ''
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'payment_id', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)
