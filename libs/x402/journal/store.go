package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/x402"
)

// Record is a payment as the journal holds it.
type Record struct {
	ID          string
	Owner       string
	Resource    string
	Fingerprint string
	Ref         string
	State       State
	Payer       string
	Offer       x402.PaymentRequirements
	Payment     x402.PaymentPayload
	Receipt     []byte
	Settlement  *x402.SettleResponse // once settled or refused
	Reason      string               // why a refused payment was refused
	Fulfilled   bool
}

func recordKey(tag, id string) string { return "pc:x402:" + tag + ":authorization:" + id }

func unfinishedKey(tag, owner string) string { return "pc:x402:" + tag + ":unfinished:" + owner }

// keys returns the record, the owner's unfinished index of its shard and the
// shard's outbox: every script takes these three.
func (j *Journal) keys(id string) []string {
	tag := Sharding.Tag(id)
	return []string{recordKey(tag, id), unfinishedKey(tag, j.cfg.Owner), Sharding.Stream(tag)}
}

func (j *Journal) claim(ctx context.Context, id, token string, p Purchase, payload, offer []byte) (bool, Record, error) {
	res, err := claimScript.Run(ctx, j.rdb, j.keys(id),
		j.cfg.Owner, p.Resource, p.Fingerprint, digest(payload), token, j.cfg.Lease.Milliseconds(),
		string(offer), string(payload), p.Payment.Payload.Authorization.From, id, Retention.Milliseconds(), p.Ref).StringSlice()
	if err != nil {
		return false, Record{}, fmt.Errorf("claiming payment %s: %w", id, err)
	}
	switch res[0] {
	case "claimed":
		return true, Record{}, nil
	case "already_used":
		return false, Record{}, ErrAlreadyUsed
	case "payload_mismatch":
		return false, Record{}, ErrPayloadMismatch
	case "request_mismatch":
		return false, Record{}, ErrRequestMismatch
	case "in_progress":
		return false, Record{}, ErrInProgress
	case string(Pending):
		return false, Record{ID: id, State: Pending}, nil
	case string(Settled), string(Refused):
		rec, err := j.Get(ctx, id)
		return false, rec, err
	}
	return false, Record{}, fmt.Errorf("claiming payment %s: unexpected answer %q", id, res[0])
}

func (j *Journal) startSettling(ctx context.Context, id, token string, receipt []byte) error {
	keys := j.keys(id)
	var n int
	_, err := j.cfg.Durable.Write(ctx, j.rdb, keys[0], func(rdb redis.Scripter) (err error) {
		n, err = startSettlingScript.Run(ctx, rdb, keys, token, string(receipt), j.cfg.Lease.Milliseconds(), id).Int()
		return err
	})
	if err != nil {
		return fmt.Errorf("marking payment %s settling: %w", id, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

func (j *Journal) markPending(ctx context.Context, id, token string) error {
	n, err := markPendingScript.Run(ctx, j.rdb, j.keys(id), token, id).Int()
	if err != nil {
		return fmt.Errorf("marking payment %s pending: %w", id, err)
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// recordSettled stores the settlement and appends its event, if any, to the
// outbox in the same step. It succeeds once per payment: the request and
// the reconciler racing record one settlement and one event.
func (j *Journal) recordSettled(ctx context.Context, id string, settlement []byte, fulfilAfter time.Duration, event []any) error {
	fulfilled := "0"
	if j.cfg.FulfilledOnSettle {
		fulfilled = "1"
	}
	hasEvent := "0"
	if event != nil {
		hasEvent = "1"
	}
	args := append([]any{string(settlement), id, Retention.Milliseconds(), fulfilled, fulfilAfter.Milliseconds(), hasEvent}, event...)
	keys := j.keys(id)
	_, err := j.cfg.Durable.Write(ctx, j.rdb, keys[0], func(rdb redis.Scripter) error {
		return recordSettledScript.Run(ctx, rdb, keys, args...).Err()
	})
	if err != nil {
		return fmt.Errorf("recording settlement of %s: %w", id, err)
	}
	return nil
}

func (j *Journal) recordRefused(ctx context.Context, id string, settlement []byte, reason string) error {
	if err := recordRefusedScript.Run(ctx, j.rdb, j.keys(id), string(settlement), reason, id, Retention.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("recording refusal of %s: %w", id, err)
	}
	return nil
}

// Fulfilled records that the owner delivered what a settled payment paid
// for: nothing is left to reconcile.
func (j *Journal) Fulfilled(ctx context.Context, id string) error {
	if err := fulfilledScript.Run(ctx, j.rdb, j.keys(id), id).Err(); err != nil {
		return fmt.Errorf("marking payment %s fulfilled: %w", id, err)
	}
	return nil
}

// Get reads a payment record.
func (j *Journal) Get(ctx context.Context, id string) (Record, error) {
	h, err := j.rdb.HGetAll(ctx, recordKey(Sharding.Tag(id), id)).Result()
	if err != nil {
		return Record{}, fmt.Errorf("reading payment %s: %w", id, err)
	}
	if len(h) == 0 {
		return Record{}, fmt.Errorf("payment %s: %w", id, ErrNotFound)
	}
	return fromHash(id, h)
}

func fromHash(id string, h map[string]string) (Record, error) {
	r := Record{
		ID: id, Owner: h["owner"], Resource: h["resource"], Fingerprint: h["fp"], Ref: h["ref"],
		State: State(h["state"]), Payer: h["payer"], Receipt: []byte(h["receipt"]), Reason: h["reason"],
		Fulfilled: h["fulfilled"] == "1",
	}
	if err := json.Unmarshal([]byte(h["requirements"]), &r.Offer); err != nil {
		return Record{}, fmt.Errorf("decoding the stored offer of %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(h["payload"]), &r.Payment); err != nil {
		return Record{}, fmt.Errorf("decoding the stored payment of %s: %w", id, err)
	}
	if s := h["settlement"]; s != "" {
		r.Settlement = &x402.SettleResponse{}
		if err := json.Unmarshal([]byte(s), r.Settlement); err != nil {
			return Record{}, fmt.Errorf("decoding the stored settlement of %s: %w", id, err)
		}
	}
	return r, nil
}

// Standing says whether a payment can still move money: Absent and Refused
// cannot, nor can Abandoned (its request died before settling and its
// lease lapsed, so that claim can no longer start settling); Settled did;
// Verifying, Settling and Pending may yet.
func (j *Journal) Standing(ctx context.Context, id string) (State, error) {
	s, err := standingScript.Run(ctx, j.rdb, j.keys(id)).Text()
	if err != nil {
		return "", fmt.Errorf("reading the standing of payment %s: %w", id, err)
	}
	return State(s), nil
}

// due lists up to limit payments of one shard whose reconcile time has come.
func (j *Journal) due(ctx context.Context, tag string, now time.Time, limit int) ([]Record, error) {
	ids, err := j.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: unfinishedKey(tag, j.cfg.Owner), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10),
		ByScore: true, Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("listing unfinished payments: %w", err)
	}
	var out []Record
	for _, id := range ids {
		h, err := j.rdb.HGetAll(ctx, recordKey(tag, id)).Result()
		if err != nil {
			return nil, fmt.Errorf("reading payment %s: %w", id, err)
		}
		if len(h) == 0 {
			_ = j.rdb.ZRem(ctx, unfinishedKey(tag, j.cfg.Owner), id).Err() // expired record: nothing left to reconcile
			continue
		}
		r, err := fromHash(id, h)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
