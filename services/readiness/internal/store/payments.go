// Package store keeps the readiness service's paid calls in Redis: one record
// per payment (network, asset, payer, nonce), the settlement caps, the
// payment-identifier index, and the outbox of settlement events.
//
// A payment record moves verifying → settling → settled, or to refused, or
// to pending when the settlement outcome is unknown. Every move is one Lua
// step over keys that share the payment's shard tag.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// Retention is how long a finished payment is kept for replays. An
// authorization is valid for minutes; a week covers any sane retry.
const Retention = 7 * 24 * time.Hour

// Sharding spreads payment records (and their outbox) over hash tags.
var Sharding = outbox.Sharding{Service: "readiness", Count: outbox.DefaultShards}

// SettlementTopic is where settlement events go.
const SettlementTopic = "pc.readiness.settlements.v1"

// SettlementSchema names the settlement event's payload schema.
const SettlementSchema = "readiness-settlement-v1"

// Key identifies a payment by what makes an EIP-3009 authorization unique.
type Key struct {
	Network string
	Asset   string
	Payer   string
	Nonce   string
}

// ID returns the record id: the SHA-256 of the lower-cased parts.
func (k Key) ID() string {
	sum := sha256.Sum256([]byte(strings.ToLower(k.Network + "|" + k.Asset + "|" + k.Payer + "|" + k.Nonce)))
	return hex.EncodeToString(sum[:])
}

// State is where a payment record stands.
type State string

// The states of a payment record.
const (
	Verifying State = "verifying"
	Settling  State = "settling"
	Pending   State = "pending"
	Settled   State = "settled"
	Refused   State = "refused"
)

// Claim is what a request brings to claim a payment.
type Claim struct {
	Fingerprint  string // SHA-256 of the canonical request body
	PayloadHash  string // SHA-256 of the canonical payment payload
	Requirements []byte // our offer the payment matched, JSON
	Payload      []byte // the payment payload, JSON
	Lease        time.Duration
}

// ClaimOutcome tells the caller what to do with its request.
type ClaimOutcome struct {
	// Claimed is true when this request now owns the payment and must
	// verify and settle it; the token it claimed with proves that
	// ownership in later steps.
	Claimed bool
	// Otherwise the record's current state and, for settled and refused
	// payments, what was stored.
	State      State
	Report     []byte // the report JSON of a settled payment
	Settlement []byte // the facilitator's SettleResponse JSON
	Reason     string // why a refused payment was refused
}

// Errors of a claim that cannot proceed.
var (
	ErrRequestMismatch = errors.New("payment already used for a different request")
	ErrPayloadMismatch = errors.New("payment authorization already seen with a different payload")
	ErrInProgress      = errors.New("payment is being processed by another request")
	ErrLeaseLost       = errors.New("payment record is no longer owned by this request")
	ErrNotFound        = errors.New("payment record not found")
)

// Payments is the Redis store of paid calls.
type Payments struct {
	rdb redis.UniversalClient
}

// NewPayments returns the store.
func NewPayments(rdb redis.UniversalClient) *Payments { return &Payments{rdb: rdb} }

func recordKey(tag, id string) string { return "pc:readiness:" + tag + ":payment:" + id }
func unfinishedKey(tag string) string { return "pc:readiness:" + tag + ":unfinished" }

// keys returns the record, the shard's unfinished index and its outbox.
func keys(id string) []string {
	tag := Sharding.Tag(id)
	return []string{recordKey(tag, id), unfinishedKey(tag), Sharding.Stream(tag)}
}

// Claim claims the payment for this request, or reports what became of it.
func (p *Payments) Claim(ctx context.Context, key Key, c Claim, token string) (ClaimOutcome, error) {
	res, err := claimScript.Run(ctx, p.rdb, keys(key.ID()),
		c.Fingerprint, c.PayloadHash, token, c.Lease.Milliseconds(),
		string(c.Requirements), string(c.Payload), key.Payer, key.ID(), Retention.Milliseconds()).StringSlice()
	if err != nil {
		return ClaimOutcome{}, fmt.Errorf("claiming payment %s: %w", key.ID(), err)
	}
	switch res[0] {
	case "claimed":
		return ClaimOutcome{Claimed: true, State: Verifying}, nil
	case "request_mismatch":
		return ClaimOutcome{}, ErrRequestMismatch
	case "payload_mismatch":
		return ClaimOutcome{}, ErrPayloadMismatch
	case "in_progress":
		return ClaimOutcome{}, ErrInProgress
	case string(Settled):
		return ClaimOutcome{State: Settled, Report: []byte(res[1]), Settlement: []byte(res[2])}, nil
	case string(Refused):
		return ClaimOutcome{State: Refused, Settlement: []byte(res[2]), Reason: res[3]}, nil
	case string(Pending):
		return ClaimOutcome{State: Pending}, nil
	}
	return ClaimOutcome{}, fmt.Errorf("claiming payment %s: unexpected answer %q", key.ID(), res[0])
}

// Release forgets a claim whose payment moved nothing (verification failed,
// a cap was reached, the facilitator was unreachable), so the same payment
// can be tried again.
func (p *Payments) Release(ctx context.Context, id, token string) error {
	if err := releaseScript.Run(ctx, p.rdb, keys(id), token, id).Err(); err != nil {
		return fmt.Errorf("releasing payment %s: %w", id, err)
	}
	return nil
}

// StartSettling stores the report this payment buys and marks the record as
// settling. Should this replica die before recording the outcome, the
// reconciler settles the question once the lease has passed.
func (p *Payments) StartSettling(ctx context.Context, id, token string, report []byte, lease time.Duration) error {
	n, err := startSettlingScript.Run(ctx, p.rdb, keys(id), token, string(report), lease.Milliseconds(), id).Int()
	if err != nil {
		return fmt.Errorf("marking payment %s settling: %w", id, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// MarkPending records that the settlement outcome is unknown; the
// reconciler asks the facilitator again.
func (p *Payments) MarkPending(ctx context.Context, id, token string) error {
	n, err := markPendingScript.Run(ctx, p.rdb, keys(id), token, id).Int()
	if err != nil {
		return fmt.Errorf("marking payment %s pending: %w", id, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// SettlementEvent is the fact published when a payment settles.
type SettlementEvent struct {
	EventID       string    `json:"eventId"`
	PaymentID     string    `json:"paymentId"`
	Network       string    `json:"network"`
	Asset         string    `json:"asset"`
	Payer         string    `json:"payer"`
	PayTo         string    `json:"payTo"`
	Amount        string    `json:"amount"`
	Transaction   string    `json:"transaction"`
	Resource      string    `json:"resource"`
	RulesVersion  string    `json:"rulesVersion"`
	SettledAt     time.Time `json:"settledAt"`
	Reconciled    bool      `json:"reconciled"`
	RequestDigest string    `json:"requestDigest"`
}

// RecordSettled stores the settlement and appends its event to the outbox in
// the same step. It succeeds once per payment: a second call (the request
// and the reconciler racing) changes nothing and returns false.
func (p *Payments) RecordSettled(ctx context.Context, id string, settlement []byte, ev SettlementEvent) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	args := []any{string(settlement), id, Retention.Milliseconds()}
	args = append(args, outbox.Args(ctx, outbox.Event{
		ID: ev.EventID, Topic: SettlementTopic, Key: ev.Payer, Schema: SettlementSchema, Payload: payload,
	})...)
	n, err := recordSettledScript.Run(ctx, p.rdb, keys(id), args...).Int()
	if err != nil {
		return false, fmt.Errorf("recording settlement of %s: %w", id, err)
	}
	return n == 1, nil
}

// RecordRefused stores a definite settlement refusal; replays of the
// payment get the same refusal.
func (p *Payments) RecordRefused(ctx context.Context, id string, settlement []byte, reason string) (bool, error) {
	n, err := recordRefusedScript.Run(ctx, p.rdb, keys(id), string(settlement), reason, id, Retention.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("recording refusal of %s: %w", id, err)
	}
	return n == 1, nil
}

// Unfinished is a payment whose settlement outcome must be settled by the
// reconciler.
type Unfinished struct {
	ID           string
	State        State
	Payer        string
	Requirements []byte
	Payload      []byte
	Fingerprint  string
}

// ShardTags lists the hash tags of every shard, for the reconciler.
func ShardTags() []string {
	out := make([]string, Sharding.Count)
	for i := range out {
		out[i] = fmt.Sprintf("{%s.%02d}", Sharding.Service, i)
	}
	return out
}

// DueForReconciliation lists up to limit unfinished payments of one shard
// whose reconcile time has come.
func (p *Payments) DueForReconciliation(ctx context.Context, shardTag string, now time.Time, limit int) ([]Unfinished, error) {
	ids, err := p.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: unfinishedKey(shardTag), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10),
		ByScore: true, Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("listing unfinished payments: %w", err)
	}
	var out []Unfinished
	for _, id := range ids {
		rec, err := p.rdb.HGetAll(ctx, recordKey(shardTag, id)).Result()
		if err != nil {
			return nil, fmt.Errorf("reading payment %s: %w", id, err)
		}
		if len(rec) == 0 {
			_ = p.rdb.ZRem(ctx, unfinishedKey(shardTag), id).Err() // expired record: nothing left to reconcile
			continue
		}
		out = append(out, Unfinished{
			ID: id, State: State(rec["state"]), Payer: rec["payer"],
			Requirements: []byte(rec["requirements"]), Payload: []byte(rec["payload"]), Fingerprint: rec["fp"],
		})
	}
	return out, nil
}

// Get reads a payment record as the reconciler sees it.
func (p *Payments) Get(ctx context.Context, id string) (Unfinished, error) {
	tag := Sharding.Tag(id)
	rec, err := p.rdb.HGetAll(ctx, recordKey(tag, id)).Result()
	if err != nil {
		return Unfinished{}, fmt.Errorf("reading payment %s: %w", id, err)
	}
	if len(rec) == 0 {
		return Unfinished{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	return Unfinished{
		ID: id, State: State(rec["state"]), Payer: rec["payer"],
		Requirements: []byte(rec["requirements"]), Payload: []byte(rec["payload"]), Fingerprint: rec["fp"],
	}, nil
}
