package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// auditKey is the append-only stream of administrative changes. Nothing in
// the edge trims or deletes it.
const auditKey = "pc:edge:audit"

// AuditEntry is one administrative change: who made it, when, what.
type AuditEntry struct {
	// ID is the stream entry id, set when read.
	ID     string    `json:"id"`
	Actor  string    `json:"actor"`
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	// Target names what changed: a family, family/integration, a partner.
	Target string `json:"target"`
	// Change is the request as applied, JSON.
	Change json.RawMessage `json:"change"`
}

// AppendAudit records a change.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) error {
	err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: auditKey, Values: []any{
		"actor", e.Actor, "at", e.At.UTC().Format(time.RFC3339Nano), "action", e.Action, "target", e.Target, "change", string(e.Change),
	}}).Err()
	if err != nil {
		return fmt.Errorf("auditing %s on %s: %w", e.Action, e.Target, err)
	}
	return nil
}

// Audit returns up to count changes, newest first.
func (s *Store) Audit(ctx context.Context, count int64) ([]AuditEntry, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, auditKey, "+", "-", count).Result()
	if err != nil {
		return nil, fmt.Errorf("reading the audit stream: %w", err)
	}
	out := make([]AuditEntry, 0, len(msgs))
	for _, m := range msgs {
		str := func(k string) string { v, _ := m.Values[k].(string); return v }
		at, _ := time.Parse(time.RFC3339Nano, str("at"))
		out = append(out, AuditEntry{ID: m.ID, Actor: str("actor"), At: at, Action: str("action"), Target: str("target"), Change: json.RawMessage(str("change"))})
	}
	return out, nil
}
