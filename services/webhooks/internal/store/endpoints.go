// Package store keeps the webhooks service's state in Redis: endpoints,
// delivery records with their attempts, and the due schedule the senders
// claim from. Every atomic step is one Lua script over keys that share a
// hash tag: a partner's keys share {p:<scope>}, a delivery shard's share
// {d:<n>}.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

const prefix = "pc:wh:"

// partnerTag is the hash tag of a partner's keys. Tenant and partner ids are
// hashed so no character of theirs can end the tag early.
func partnerTag(s endpoints.Scope) string {
	sum := sha256.Sum256([]byte(s.Tenant + "\x00" + s.Environment + "\x00" + s.PartnerID))
	return "{p:" + hex.EncodeToString(sum[:12]) + "}"
}

func endpointKey(s endpoints.Scope, id string) string { return prefix + partnerTag(s) + ":ep:" + id }
func endpointIndexKey(s endpoints.Scope) string       { return prefix + partnerTag(s) + ":eps" }
func partnerDeliveriesKey(s endpoints.Scope) string   { return prefix + partnerTag(s) + ":dlv" }

// endpointRecord is an endpoint as stored.
type endpointRecord struct {
	ID             string          `json:"id"`
	Tenant         string          `json:"tenant"`
	Environment    string          `json:"environment"`
	PartnerID      string          `json:"partnerId"`
	URL            string          `json:"url"`
	EventTypes     []string        `json:"eventTypes"`
	Description    string          `json:"description"`
	Status         string          `json:"status"`
	DisabledReason string          `json:"disabledReason,omitempty"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Health         delivery.Health `json:"health"`
	Events         []eventRecord   `json:"events,omitempty"`
	Version        int64           `json:"version"`
}

// eventRecord is an operational event as stored.
type eventRecord struct {
	Type         string    `json:"type"`
	At           time.Time `json:"at"`
	Reason       string    `json:"reason"`
	FailingSince time.Time `json:"failingSince,omitzero"`
	Failures     int       `json:"failures"`
}

func toEndpointRecord(e endpoints.Endpoint) endpointRecord {
	return endpointRecord{ID: e.ID, Tenant: e.Scope.Tenant, Environment: e.Scope.Environment, PartnerID: e.Scope.PartnerID,
		URL: e.URL, EventTypes: e.EventTypes, Description: e.Description, Status: string(e.Status), DisabledReason: e.DisabledReason,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(), Health: e.Health, Events: toEventRecords(e.Events), Version: e.Version}
}

func toEventRecords(evs []endpoints.Event) []eventRecord {
	var out []eventRecord
	for _, ev := range evs {
		out = append(out, eventRecord{Type: ev.Type, At: ev.At.UTC(), Reason: ev.Reason, FailingSince: ev.FailingSince.UTC(), Failures: ev.Failures})
	}
	return out
}

func fromEventRecords(rs []eventRecord) []endpoints.Event {
	var out []endpoints.Event
	for _, r := range rs {
		out = append(out, endpoints.Event{Type: r.Type, At: r.At, Reason: r.Reason, FailingSince: r.FailingSince, Failures: r.Failures})
	}
	return out
}

func fromEndpointRecord(r endpointRecord) endpoints.Endpoint {
	return endpoints.Endpoint{ID: r.ID, Scope: endpoints.Scope{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID},
		URL: r.URL, EventTypes: r.EventTypes, Description: r.Description, Status: endpoints.Status(r.Status), DisabledReason: r.DisabledReason,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Health: r.Health, Events: fromEventRecords(r.Events), Version: r.Version}
}

// createEndpointScript KEYS: record, index. ARGV: json, created ms, id, max.
var createEndpointScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 'too_many' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 'ok'
`)

// updateEndpointScript KEYS: record. ARGV: json, expected version.
var updateEndpointScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 'not_found' end
if tostring(cjson.decode(cur)['version']) ~= ARGV[2] then return 'conflict' end
redis.call('SET', KEYS[1], ARGV[1])
return 'ok'
`)

// deleteEndpointScript KEYS: record, index. ARGV: id.
var deleteEndpointScript = redis.NewScript(`
if redis.call('DEL', KEYS[1]) == 0 then return 'not_found' end
redis.call('ZREM', KEYS[2], ARGV[1])
return 'ok'
`)

// Endpoints is the endpoint store.
type Endpoints struct {
	rdb redis.UniversalClient
}

// NewEndpoints returns the endpoint store.
func NewEndpoints(rdb redis.UniversalClient) *Endpoints { return &Endpoints{rdb: rdb} }

// Create stores a new endpoint, refusing past endpoints.MaxPerPartner.
func (s *Endpoints) Create(ctx context.Context, e endpoints.Endpoint) error {
	b, err := json.Marshal(toEndpointRecord(e))
	if err != nil {
		return fmt.Errorf("encoding endpoint %s: %w", e.ID, err)
	}
	res, err := createEndpointScript.Run(ctx, s.rdb, []string{endpointKey(e.Scope, e.ID), endpointIndexKey(e.Scope)},
		b, e.CreatedAt.UnixMilli(), e.ID, endpoints.MaxPerPartner).Text()
	if err != nil {
		return fmt.Errorf("creating endpoint %s: %w", e.ID, err)
	}
	switch res {
	case "too_many":
		return endpoints.ErrTooMany
	case "exists":
		return fmt.Errorf("creating endpoint %s: id taken", e.ID)
	}
	return nil
}

// Get loads one endpoint of scope.
func (s *Endpoints) Get(ctx context.Context, scope endpoints.Scope, id string) (endpoints.Endpoint, error) {
	raw, err := s.rdb.Get(ctx, endpointKey(scope, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return endpoints.Endpoint{}, endpoints.ErrNotFound
	}
	if err != nil {
		return endpoints.Endpoint{}, fmt.Errorf("loading endpoint %s: %w", id, err)
	}
	var r endpointRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return endpoints.Endpoint{}, fmt.Errorf("decoding endpoint %s: %w", id, err)
	}
	return fromEndpointRecord(r), nil
}

// List loads every endpoint of scope, oldest first.
func (s *Endpoints) List(ctx context.Context, scope endpoints.Scope) ([]endpoints.Endpoint, error) {
	ids, err := s.rdb.ZRange(ctx, endpointIndexKey(scope), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("listing endpoints: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = endpointKey(scope, id)
	}
	raws, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("loading endpoints: %w", err)
	}
	out := make([]endpoints.Endpoint, 0, len(raws))
	for i, raw := range raws {
		str, ok := raw.(string)
		if !ok {
			continue // deleted between the two reads
		}
		var r endpointRecord
		if err := json.Unmarshal([]byte(str), &r); err != nil {
			return nil, fmt.Errorf("decoding endpoint %s: %w", ids[i], err)
		}
		out = append(out, fromEndpointRecord(r))
	}
	return out, nil
}

// Update stores e if nobody changed it since it was loaded (e.Version), and
// returns it with its new version.
func (s *Endpoints) Update(ctx context.Context, e endpoints.Endpoint) (endpoints.Endpoint, error) {
	expected := e.Version
	e.Version++
	b, err := json.Marshal(toEndpointRecord(e))
	if err != nil {
		return e, fmt.Errorf("encoding endpoint %s: %w", e.ID, err)
	}
	res, err := updateEndpointScript.Run(ctx, s.rdb, []string{endpointKey(e.Scope, e.ID)}, b, expected).Text()
	if err != nil {
		return e, fmt.Errorf("updating endpoint %s: %w", e.ID, err)
	}
	switch res {
	case "not_found":
		return e, endpoints.ErrNotFound
	case "conflict":
		return e, endpoints.ErrConflict
	}
	return e, nil
}

// Modify loads, changes and stores an endpoint, retrying a few times when
// another writer got there first.
func (s *Endpoints) Modify(ctx context.Context, scope endpoints.Scope, id string, change func(endpoints.Endpoint) (endpoints.Endpoint, error)) (endpoints.Endpoint, error) {
	for range 5 {
		cur, err := s.Get(ctx, scope, id)
		if err != nil {
			return cur, err
		}
		next, err := change(cur)
		if err != nil {
			return cur, err
		}
		next.Version = cur.Version
		saved, err := s.Update(ctx, next)
		if errors.Is(err, endpoints.ErrConflict) {
			continue
		}
		return saved, err
	}
	return endpoints.Endpoint{}, endpoints.ErrConflict
}

// Delete removes an endpoint of scope.
func (s *Endpoints) Delete(ctx context.Context, scope endpoints.Scope, id string) error {
	res, err := deleteEndpointScript.Run(ctx, s.rdb, []string{endpointKey(scope, id), endpointIndexKey(scope)}, id).Text()
	if err != nil {
		return fmt.Errorf("deleting endpoint %s: %w", id, err)
	}
	if res == "not_found" {
		return endpoints.ErrNotFound
	}
	return nil
}
