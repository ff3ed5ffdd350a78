// Package store keeps the readiness service's own state in Redis: the
// settlement caps and the payment-identifier index. The payments themselves,
// their settlements and the outbox of settlement events live in the shared
// x402 settlement journal (libs/x402/journal).
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Retention is how long a payment identifier stays bound: as long as the
// journal keeps the payment it names.
const Retention = 7 * 24 * time.Hour

// PaymentIDs is the index of the x402 payment-identifier extension: a
// client's id bound to the payment payload it first came with.
type PaymentIDs struct {
	rdb redis.UniversalClient
}

// NewPaymentIDs returns the index.
func NewPaymentIDs(rdb redis.UniversalClient) *PaymentIDs { return &PaymentIDs{rdb: rdb} }

// ErrPaymentIDConflict means a payment identifier was already used with a
// different payment payload.
var ErrPaymentIDConflict = errors.New("payment identifier already used with a different payment")

// Bind binds a client's payment-identifier id to the payload it
// came with. The same id with the same payload is a retry; with another
// payload it is ErrPaymentIDConflict.
func (p *PaymentIDs) Bind(ctx context.Context, id, payloadHash string) error {
	key := "pc:readiness:payment-id:{" + id + "}"
	ok, err := p.rdb.SetNX(ctx, key, payloadHash, Retention).Result()
	if err != nil {
		return fmt.Errorf("binding payment identifier: %w", err)
	}
	if ok {
		return nil
	}
	bound, err := p.rdb.Get(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("reading payment identifier: %w", err)
	}
	if bound != payloadHash {
		return ErrPaymentIDConflict
	}
	return nil
}
