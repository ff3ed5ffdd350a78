package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

// Delivery statuses.
const (
	StatusScheduled = "scheduled" // an attempt is due or in flight
	StatusDelivered = "delivered" // a 2xx was received
	StatusFailed    = "failed"    // out of attempts, or the endpoint answered 410
	StatusCancelled = "cancelled" // the endpoint was disabled or deleted before success
)

// Attempt triggers.
const (
	TriggerScheduled = "scheduled"
	TriggerManual    = "manual"
	TriggerRecovery  = "recovery" // a replay made by a bulk recovery of an endpoint
	TriggerTest      = "test"     // a test event the partner asked for
)

// Delivery is one event's delivery to one endpoint, as stored.
type Delivery struct {
	ID          string `json:"id"`
	EventID     string `json:"eventId"`
	EventType   string `json:"eventType"`
	EndpointID  string `json:"endpointId"`
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
	Status      string `json:"status"`
	Trigger     string `json:"trigger"`              // what created it: scheduled (an event), manual (a replay), recovery or test
	ReplayOf    string `json:"replayOf,omitempty"`   // the delivery a replay repeats
	RecoveryID  string `json:"recoveryId,omitempty"` // the recovery that made this replay
	// Test marks a test event and its replays: every attempt is signed
	// x-pc-test: true, so a receiver never takes it for a case fact.
	Test          bool      `json:"test,omitempty"`
	Attempts      int       `json:"attempts"`
	CreatedAt     time.Time `json:"createdAt"`
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
	LastAttemptAt time.Time `json:"lastAttemptAt,omitzero"`
	// LastStatus is the HTTP status of the last attempt's answer; 0 before
	// any attempt and when no answer came (timeout, DNS, TLS, refused).
	LastStatus int `json:"lastStatus,omitempty"`
	// Event is the case-event-v2 body without deliveryId, decoded once
	// when the record is read; the sender encodes it once per attempt.
	Event delivery.Event `json:"event"`
}

// Scope is the partner the delivery belongs to.
func (d Delivery) Scope() endpoints.Scope {
	return endpoints.Scope{Tenant: d.Tenant, Environment: d.Environment, PartnerID: d.PartnerID}
}

// Attempt is one recorded HTTP attempt of a delivery.
type Attempt struct {
	Number          int               `json:"number"`
	Trigger         string            `json:"trigger"`
	StartedAt       time.Time         `json:"startedAt"`
	DurationMs      int64             `json:"durationMs"`
	URL             string            `json:"url"`
	RequestHeaders  map[string]string `json:"requestHeaders"`
	KeyID           string            `json:"keyId"`
	Status          int               `json:"status,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	ResponseBody    string            `json:"responseBody,omitempty"` // the first 4 KiB
	// ResponseWithheld: the receiver was at an internal address the
	// allowlist let through (development); its headers and body are not kept.
	ResponseWithheld bool      `json:"responseWithheld,omitempty"`
	ErrorClass       string    `json:"errorClass,omitempty"`
	Error            string    `json:"error,omitempty"`
	Outcome          string    `json:"outcome"` // success, failure or gone
	NextAttemptAt    time.Time `json:"nextAttemptAt,omitzero"`
}

// ErrDeliveryNotFound is a delivery that does not exist in the scope asked.
var ErrDeliveryNotFound = errors.New("delivery not found")

// ErrLeaseLost is a completion by a sender whose lease lapsed and was taken.
var ErrLeaseLost = errors.New("delivery lease lost")

// DeliveriesConfig sizes the schedule.
type DeliveriesConfig struct {
	Shards    int           // due sets; senders claim from all of them
	Retention time.Duration // how long finished deliveries stay readable
}

// DefaultDeliveriesConfig is 16 shards and 30 days of history.
func DefaultDeliveriesConfig() DeliveriesConfig {
	return DeliveriesConfig{Shards: 16, Retention: 30 * 24 * time.Hour}
}

// Deliveries is the delivery store and schedule.
type Deliveries struct {
	rdb redis.UniversalClient
	cfg DeliveriesConfig
}

// NewDeliveries returns the delivery store.
func NewDeliveries(rdb redis.UniversalClient, cfg DeliveriesConfig) *Deliveries {
	if cfg.Shards < 1 {
		cfg.Shards = 1
	}
	return &Deliveries{rdb: rdb, cfg: cfg}
}

// Shards is the number of due sets.
func (s *Deliveries) Shards() int { return s.cfg.Shards }

func (s *Deliveries) shardOf(id string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(s.cfg.Shards))
}

func shardTag(n int) string               { return "{d:" + strconv.Itoa(n) + "}" }
func deliveryKey(n int, id string) string { return prefix + shardTag(n) + ":dlv:" + id }
func attemptsKey(n int, id string) string { return prefix + shardTag(n) + ":att:" + id }
func dueKey(n int) string                 { return prefix + shardTag(n) + ":due" }

// createDeliveryScript KEYS: record, due, outcomes[, replays]. ARGV:
// json, due ms, id, retention ms, status, outcome field prefix, outcomes
// expiry (ms). The record keeps its status in 'st' too, the one the
// outcome counts hold it under (outcomes.go); a recovery's replay (the
// fourth key, its recovery's counts) is counted there too and marked 'rc'.
var createDeliveryScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'st', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('HINCRBY', KEYS[3], ARGV[6] .. ARGV[5], 1)
redis.call('PEXPIREAT', KEYS[3], ARGV[7])
if KEYS[4] then
  redis.call('HSET', KEYS[1], 'rc', '1')
  redis.call('HINCRBY', KEYS[4], ARGV[5], 1)
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
return 1
`)

// Create stores a delivery and schedules its first attempt at its
// NextAttemptAt, and counts it in its partner's outcomes (Outcomes) in the
// same step. It is idempotent by id: a second call changes nothing and
// reports created false. The partner index is written too, also
// idempotently, so a failure between the two is repaired by the retry.
func (s *Deliveries) Create(ctx context.Context, d Delivery) (created bool, err error) {
	all, err := s.CreateAll(ctx, []Delivery{d})
	if err != nil {
		return false, err
	}
	return all[0], nil
}

// CreateAll creates each of ds as Create does, in one round trip: each
// delivery's record and schedule entry in one Lua step, its partner index
// entry beside it in the same pipeline. It reports which were new. An
// error means some may not be stored or indexed: calling it again with the
// same deliveries completes them and changes nothing else.
func (s *Deliveries) CreateAll(ctx context.Context, ds []Delivery) ([]bool, error) {
	type step struct {
		keys []string
		args []any
		cmd  *redis.Cmd
	}
	steps := make([]step, len(ds))
	pipe := s.rdb.Pipeline()
	for i, d := range ds {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encoding delivery %s: %w", d.ID, err)
		}
		n := s.shardOf(d.ID)
		outcomes, field, expireAt := outcomeSlot(n, d.Scope(), d.CreatedAt)
		st := step{keys: []string{deliveryKey(n, d.ID), dueKey(n), outcomes},
			args: []any{b, d.NextAttemptAt.UnixMilli(), d.ID, s.cfg.Retention.Milliseconds(), d.Status, field, expireAt}}
		if d.RecoveryID != "" {
			st.keys = append(st.keys, replaysKey(n, d.RecoveryID))
		}
		st.cmd = createDeliveryScript.EvalSha(ctx, pipe, st.keys, st.args...)
		steps[i] = st
		idx := partnerDeliveriesKey(d.Scope())
		pipe.ZAddNX(ctx, idx, redis.Z{Score: float64(d.CreatedAt.UnixMilli()), Member: d.ID})
		pipe.ZRemRangeByScore(ctx, idx, "-inf", strconv.FormatInt(d.CreatedAt.Add(-s.cfg.Retention).UnixMilli(), 10))
	}
	cmds, _ := pipe.Exec(ctx) // each command carries its own error
	for _, c := range cmds {
		if c.Err() != nil && !redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			return nil, fmt.Errorf("creating deliveries: %w", c.Err())
		}
	}
	created := make([]bool, len(ds))
	for i, st := range steps {
		cmd := st.cmd
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			// The server lost its script cache (a restart): Run loads it.
			cmd = createDeliveryScript.Run(ctx, s.rdb, st.keys, st.args...)
		}
		res, err := cmd.Int()
		if err != nil {
			return nil, fmt.Errorf("creating delivery %s: %w", ds[i].ID, err)
		}
		created[i] = res == 1
	}
	return created, nil
}

// Get loads a delivery by id within scope; another scope's delivery is
// not found.
func (s *Deliveries) Get(ctx context.Context, scope endpoints.Scope, id string) (Delivery, error) {
	d, err := s.load(ctx, id)
	if err != nil {
		return d, err
	}
	if d.Scope() != scope {
		return Delivery{}, ErrDeliveryNotFound
	}
	return d, nil
}

func (s *Deliveries) load(ctx context.Context, id string) (Delivery, error) {
	raw, err := s.rdb.HGet(ctx, deliveryKey(s.shardOf(id), id), "rec").Bytes()
	if errors.Is(err, redis.Nil) {
		return Delivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("loading delivery %s: %w", id, err)
	}
	var d Delivery
	if err := json.Unmarshal(raw, &d); err != nil {
		return Delivery{}, fmt.Errorf("decoding delivery %s: %w", id, err)
	}
	return d, nil
}

// Attempts loads a delivery's attempts, oldest first.
func (s *Deliveries) Attempts(ctx context.Context, id string) ([]Attempt, error) {
	raws, err := s.rdb.LRange(ctx, attemptsKey(s.shardOf(id), id), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("loading attempts of %s: %w", id, err)
	}
	out := make([]Attempt, 0, len(raws))
	for _, r := range raws {
		var a Attempt
		if err := json.Unmarshal([]byte(r), &a); err != nil {
			return nil, fmt.Errorf("decoding attempt of %s: %w", id, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// claimScript KEYS: due. ARGV: now ms, lease ms, limit, token. Due entries
// are pushed to the end of their lease: a sender that dies leaves them to
// come due again when the lease lapses. The token is written on each record,
// whose key is built from the same prefix and tag.
var claimScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  local key = ARGV[5] .. id
  local rec = redis.call('HGET', key, 'rec')
  if rec then
    redis.call('ZADD', KEYS[1], until_ms, id)
    redis.call('HSET', key, 'lease', ARGV[4])
    table.insert(out, rec)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`)

// Claim leases up to limit due deliveries of shard n for lease, under
// token. Each claimed delivery is the caller's until the lease lapses.
func (s *Deliveries) Claim(ctx context.Context, n int, now time.Time, lease time.Duration, limit int, token string) ([]Delivery, error) {
	raws, err := claimScript.Run(ctx, s.rdb, []string{dueKey(n)}, now.UnixMilli(), lease.Milliseconds(), limit, token,
		prefix+shardTag(n)+":dlv:").StringSlice()
	if err != nil {
		return nil, fmt.Errorf("claiming from shard %d: %w", n, err)
	}
	out := make([]Delivery, 0, len(raws))
	for _, r := range raws {
		var d Delivery
		if err := json.Unmarshal([]byte(r), &d); err != nil {
			return nil, fmt.Errorf("decoding claimed delivery: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// completeScript KEYS: record, attempts, due, outcomes[, replays]. ARGV:
// token, json, attempt json (” for none), next ms (” when finished), id,
// retention ms, status, outcome field prefix, outcomes expiry (ms). A new
// status moves the delivery's count from the old one, in its recovery's
// counts too for a replay counted there ('rc'); a record without 'st'
// (written before the counts existed) was never counted and is not.
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then return 0 end
local was = redis.call('HGET', KEYS[1], 'st')
redis.call('HSET', KEYS[1], 'rec', ARGV[2])
redis.call('HDEL', KEYS[1], 'lease')
redis.call('PEXPIRE', KEYS[1], ARGV[6])
if was and was ~= ARGV[7] then
  redis.call('HSET', KEYS[1], 'st', ARGV[7])
  redis.call('HINCRBY', KEYS[4], ARGV[8] .. was, -1)
  redis.call('HINCRBY', KEYS[4], ARGV[8] .. ARGV[7], 1)
  redis.call('PEXPIREAT', KEYS[4], ARGV[9])
  if KEYS[5] and redis.call('HGET', KEYS[1], 'rc') == '1' then
    redis.call('HINCRBY', KEYS[5], was, -1)
    redis.call('HINCRBY', KEYS[5], ARGV[7], 1)
    redis.call('PEXPIRE', KEYS[5], ARGV[6])
  end
end
if ARGV[3] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[5])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
end
return 1
`)

// Complete stores the delivery's new state under the lease token, appends
// the attempt (nil for none, when the delivery ends or waits without
// sending) and reschedules it at d.NextAttemptAt, or drops it from the
// schedule when its status is final. ErrLeaseLost means another sender
// holds it now; nothing changed. A new status moves the delivery in its
// partner's outcome counts (Outcomes) in the same step; a recorded attempt
// is also counted in its endpoint's hourly health figures (EndpointFigures).
func (s *Deliveries) Complete(ctx context.Context, token string, d Delivery, a *Attempt) error {
	return s.CompleteAll(ctx, token, []Completion{{Delivery: d, Attempt: a}})[0]
}

// Completion is one delivery's new state and the attempt that led to it
// (nil for none), as Complete takes them.
type Completion struct {
	Delivery Delivery
	Attempt  *Attempt
}

// CompleteAll completes each of cs as Complete does, in one round trip:
// every completion is its own atomic step under its own lease check, sent
// together in a pipeline. It returns one error per completion, nil for
// those that were recorded.
func (s *Deliveries) CompleteAll(ctx context.Context, token string, cs []Completion) []error {
	errs := make([]error, len(cs))
	type queued struct {
		i    int
		keys []string
		args []any
	}
	steps := make([]queued, 0, len(cs))
	for i, c := range cs {
		keys, args, err := s.completeStep(token, c)
		if err != nil {
			errs[i] = err
			continue
		}
		steps = append(steps, queued{i: i, keys: keys, args: args})
	}
	if len(steps) == 0 {
		return errs
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(steps))
	for j, st := range steps {
		cmds[j] = completeScript.EvalSha(ctx, pipe, st.keys, st.args...)
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	for j, st := range steps {
		cmd := cmds[j]
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			// The server lost its script cache (a restart): Run loads it.
			cmd = completeScript.Run(ctx, s.rdb, st.keys, st.args...)
		}
		id := cs[st.i].Delivery.ID
		res, err := cmd.Int()
		switch {
		case err != nil:
			errs[st.i] = fmt.Errorf("completing delivery %s: %w", id, err)
		case res == 0:
			errs[st.i] = ErrLeaseLost
		}
	}
	s.countAttempts(ctx, cs, errs)
	return errs
}

// countAttempts counts each recorded attempt of cs in its endpoint's health
// figures, in one more round trip, after the records: a lost count costs a
// health figure, never an attempt. A failed count is reported in errs (the
// dispatcher logs it) without undoing the record.
func (s *Deliveries) countAttempts(ctx context.Context, cs []Completion, errs []error) {
	pipe := s.rdb.Pipeline()
	for i, c := range cs {
		if errs[i] == nil && c.Attempt != nil {
			s.queueStats(ctx, pipe, c.Delivery, *c.Attempt)
		}
	}
	if pipe.Len() == 0 {
		return
	}
	if _, err := pipe.Exec(ctx); err != nil {
		for i, c := range cs {
			if errs[i] == nil && c.Attempt != nil {
				errs[i] = fmt.Errorf("counting the attempt of %s in its endpoint's health: %w", c.Delivery.ID, err)
			}
		}
	}
}

// completeStep encodes one completion as the keys and arguments of
// completeScript.
func (s *Deliveries) completeStep(token string, c Completion) ([]string, []any, error) {
	d := c.Delivery
	b, err := json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding delivery %s: %w", d.ID, err)
	}
	var ab []byte
	if c.Attempt != nil {
		if ab, err = json.Marshal(c.Attempt); err != nil {
			return nil, nil, fmt.Errorf("encoding attempt of %s: %w", d.ID, err)
		}
	}
	next := ""
	if d.Status == StatusScheduled {
		next = strconv.FormatInt(d.NextAttemptAt.UnixMilli(), 10)
	}
	n := s.shardOf(d.ID)
	outcomes, field, expireAt := outcomeSlot(n, d.Scope(), d.CreatedAt)
	keys := []string{deliveryKey(n, d.ID), attemptsKey(n, d.ID), dueKey(n), outcomes}
	if d.RecoveryID != "" {
		keys = append(keys, replaysKey(n, d.RecoveryID))
	}
	return keys, []any{token, b, string(ab), next, d.ID, s.cfg.Retention.Milliseconds(), d.Status, field, expireAt}, nil
}

// Filter narrows a listing. Zero fields match everything.
type Filter struct {
	EventID        string
	EndpointID     string
	Status         string
	EventType      string
	CaseID         string
	ResponseStatus int       // the last attempt's HTTP status
	Since          time.Time // created at or after
	Until          time.Time // created before
}

func (f Filter) match(d Delivery) bool {
	return (f.EventID == "" || d.EventID == f.EventID) &&
		(f.EndpointID == "" || d.EndpointID == f.EndpointID) &&
		(f.Status == "" || d.Status == f.Status) &&
		(f.EventType == "" || d.EventType == f.EventType) &&
		(f.ResponseStatus == 0 || d.LastStatus == f.ResponseStatus) &&
		(f.CaseID == "" || d.Event.CaseID == f.CaseID)
}

// Cursor is where a listing page ends: the creation time and id of its
// last item, newest first.
type Cursor struct {
	CreatedMs int64
	ID        string
}

// List returns up to limit deliveries of scope matching f, newest first,
// after cursor (nil for the first page), and the cursor of the next page
// (nil when there is none). It reads at most scanLimit index entries per
// call so a narrow filter over a long history stays bounded; a page may
// then be short with a cursor to continue.
func (s *Deliveries) List(ctx context.Context, scope endpoints.Scope, f Filter, after *Cursor, limit int) ([]Delivery, *Cursor, error) {
	const scanLimit = 1000
	maxScore := "+inf"
	if !f.Until.IsZero() {
		maxScore = "(" + strconv.FormatInt(f.Until.UnixMilli(), 10)
	}
	if after != nil {
		maxScore = strconv.FormatInt(after.CreatedMs, 10)
	}
	minScore := "-inf"
	if !f.Since.IsZero() {
		minScore = strconv.FormatInt(f.Since.UnixMilli(), 10)
	}
	entries, err := s.rdb.ZRevRangeByScoreWithScores(ctx, partnerDeliveriesKey(scope), &redis.ZRangeBy{
		Max: maxScore, Min: minScore, Count: scanLimit,
	}).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("listing deliveries: %w", err)
	}
	var out []Delivery
	var last *Cursor
	for _, e := range entries {
		id, _ := e.Member.(string)
		c := Cursor{CreatedMs: int64(e.Score), ID: id}
		if after != nil && c.CreatedMs == after.CreatedMs && id >= after.ID {
			continue // same millisecond, already returned (ids descend within it)
		}
		last = &c
		d, err := s.load(ctx, id)
		if errors.Is(err, ErrDeliveryNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if d.Scope() != scope || !f.match(d) {
			continue
		}
		out = append(out, d)
		if len(out) == limit {
			return out, last, nil
		}
	}
	if len(entries) == scanLimit && last != nil {
		return out, last, nil
	}
	return out, nil, nil
}

// DueCounts returns, per shard, how many deliveries are due at now and not
// claimed by any sender: the queue the senders have yet to take. A claimed
// delivery's score is its lease's end, so it is not counted while sent.
func (s *Deliveries) DueCounts(ctx context.Context, now time.Time) ([]int64, error) {
	keys := make([]string, s.cfg.Shards)
	for n := range keys {
		keys[n] = dueKey(n)
	}
	counts, err := redisclient.CountDue(ctx, s.rdb, keys, now)
	if err != nil {
		return nil, fmt.Errorf("counting due deliveries: %w", err)
	}
	return counts, nil
}
