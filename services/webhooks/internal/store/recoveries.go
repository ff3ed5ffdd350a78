package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

// Recovery statuses.
const (
	RecoveryRunning   = "running"   // replays are being scheduled
	RecoveryCompleted = "completed" // the window was scanned to its end (or to the replay limit)
	RecoveryCancelled = "cancelled" // the endpoint was disabled or deleted before the end
)

// Recovery is a bulk "recover failed since T" job for one endpoint, as
// stored. Its position (AfterMs, AfterN) moves only together with its
// counters, in one script under the worker's lease, so a worker that dies
// mid-batch leaves the job where the last saved batch left it.
type Recovery struct {
	ID           string    `json:"id"`
	EndpointID   string    `json:"endpointId"`
	Tenant       string    `json:"tenant"`
	Environment  string    `json:"environment"`
	PartnerID    string    `json:"partnerId"`
	Since        time.Time `json:"since"`
	Until        time.Time `json:"until"`
	Status       string    `json:"status"`
	Total        int       `json:"total"`     // the partner's deliveries created in the window: what the scan reads
	Scanned      int       `json:"scanned"`   // of Total, read so far
	Scheduled    int       `json:"scheduled"` // replays made
	LimitReached bool      `json:"limitReached,omitempty"`
	NextSince    time.Time `json:"nextSince,omitzero"` // where a new recovery continues once the limit is reached
	CancelReason string    `json:"cancelReason,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	CompletedAt  time.Time `json:"completedAt,omitzero"`
	// AfterMs and AfterN are the scan position: the creation millisecond
	// reached and how many index entries of that millisecond are done.
	AfterMs int64 `json:"afterMs"`
	AfterN  int   `json:"afterN"`
}

// Scope is the partner the recovery belongs to.
func (r Recovery) Scope() endpoints.Scope {
	return endpoints.Scope{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID}
}

// Done reports whether the job has finished.
func (r Recovery) Done() bool { return r.Status != RecoveryRunning }

// Errors of the recovery store.
var (
	ErrRecoveryNotFound   = errors.New("recovery not found")
	ErrRecoveryInProgress = errors.New("a recovery of this endpoint is running")
)

// InProgressError names the running recovery that refused a new one.
type InProgressError struct{ ID string }

func (e *InProgressError) Error() string { return "recovery " + e.ID + " of this endpoint is running" }

// Unwrap makes errors.Is(err, ErrRecoveryInProgress) hold.
func (e *InProgressError) Unwrap() error { return ErrRecoveryInProgress }

// Recoveries stores recovery jobs and the queue the workers lease them
// from. Jobs are few and small, so all of them share one hash tag: create,
// claim and save are each one script on one slot.
type Recoveries struct {
	rdb       redis.UniversalClient
	retention time.Duration
}

// NewRecoveries returns the recovery store; finished jobs stay readable for
// retention.
func NewRecoveries(rdb redis.UniversalClient, retention time.Duration) *Recoveries {
	return &Recoveries{rdb: rdb, retention: retention}
}

const recoveryTag = "{rcv}"

func recoveryKey(id string) string { return prefix + recoveryTag + ":job:" + id }
func recoveryQueueKey() string     { return prefix + recoveryTag + ":queue" }

// recoveryActiveKey holds the id of the endpoint's running recovery: one
// at a time per endpoint, so two overlapping jobs never replay the same
// deliveries twice.
func recoveryActiveKey(s endpoints.Scope, endpointID string) string {
	return prefix + recoveryTag + ":active:" + partnerTag(s)[3:27] + ":" + endpointID
}

// activeTTL bounds how long a lost job could block its endpoint; every
// saved batch renews it.
const activeTTL = 24 * time.Hour

// createRecoveryScript KEYS: record, queue, active. ARGV: json, id, now ms, active ttl ms.
var createRecoveryScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[3])
if cur then return {0, cur} end
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[4])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return {1, ARGV[2]}
`)

// Create stores a new running recovery and queues it, unless the endpoint
// has one running: then an *InProgressError names it.
func (s *Recoveries) Create(ctx context.Context, r Recovery) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding recovery %s: %w", r.ID, err)
	}
	res, err := createRecoveryScript.Run(ctx, s.rdb, []string{recoveryKey(r.ID), recoveryQueueKey(), recoveryActiveKey(r.Scope(), r.EndpointID)},
		b, r.ID, r.CreatedAt.UnixMilli(), activeTTL.Milliseconds()).Slice()
	if err != nil {
		return fmt.Errorf("creating recovery %s: %w", r.ID, err)
	}
	if ok, _ := res[0].(int64); ok != 1 {
		id, _ := res[1].(string)
		return &InProgressError{ID: id}
	}
	return nil
}

// Get loads a recovery of scope; another scope's is not found.
func (s *Recoveries) Get(ctx context.Context, scope endpoints.Scope, id string) (Recovery, error) {
	raw, err := s.rdb.Get(ctx, recoveryKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Recovery{}, ErrRecoveryNotFound
	}
	if err != nil {
		return Recovery{}, fmt.Errorf("loading recovery %s: %w", id, err)
	}
	var r Recovery
	if err := json.Unmarshal(raw, &r); err != nil {
		return Recovery{}, fmt.Errorf("decoding recovery %s: %w", id, err)
	}
	if r.Scope() != scope {
		return Recovery{}, ErrRecoveryNotFound
	}
	return r, nil
}

// claimRecoveryScript KEYS: queue. ARGV: now ms, lease ms, token, record
// key prefix. The first due job is pushed to the end of the lease and its
// record marked with the token.
var claimRecoveryScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #ids == 0 then return false end
local key = ARGV[4] .. ids[1]
local rec = redis.call('GET', key)
if not rec then
  redis.call('ZREM', KEYS[1], ids[1])
  return false
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ids[1])
redis.call('SET', key .. ':lease', ARGV[3], 'PX', ARGV[2])
return rec
`)

// Claim leases the first due recovery for lease under token; ok is false
// when none is due. A worker that dies leaves the job to come due again
// when the lease lapses.
func (s *Recoveries) Claim(ctx context.Context, now time.Time, lease time.Duration, token string) (Recovery, bool, error) {
	raw, err := claimRecoveryScript.Run(ctx, s.rdb, []string{recoveryQueueKey()}, now.UnixMilli(), lease.Milliseconds(), token,
		prefix+recoveryTag+":job:").Text()
	if errors.Is(err, redis.Nil) {
		return Recovery{}, false, nil
	}
	if err != nil {
		return Recovery{}, false, fmt.Errorf("claiming a recovery: %w", err)
	}
	var r Recovery
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return Recovery{}, false, fmt.Errorf("decoding claimed recovery: %w", err)
	}
	return r, true, nil
}

// saveRecoveryScript KEYS: record, lease, queue, active. ARGV: token, json,
// id, done (1 or 0), retention ms, active ttl ms, now ms.
var saveRecoveryScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[5])
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[3], ARGV[3])
  if redis.call('GET', KEYS[4]) == ARGV[3] then redis.call('DEL', KEYS[4]) end
else
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[3])
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
end
return 1
`)

// Save stores a claimed recovery's progress under the lease token. A
// running job goes back on the queue, due now, so any replica continues
// it; a finished one leaves the queue and frees its endpoint.
// ErrLeaseLost means another worker holds it now; nothing changed.
func (s *Recoveries) Save(ctx context.Context, token string, r Recovery, now time.Time) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding recovery %s: %w", r.ID, err)
	}
	done := "0"
	if r.Done() {
		done = "1"
	}
	res, err := saveRecoveryScript.Run(ctx, s.rdb,
		[]string{recoveryKey(r.ID), recoveryKey(r.ID) + ":lease", recoveryQueueKey(), recoveryActiveKey(r.Scope(), r.EndpointID)},
		token, b, r.ID, done, s.retention.Milliseconds(), activeTTL.Milliseconds(), now.UnixMilli()).Int()
	if err != nil {
		return fmt.Errorf("saving recovery %s: %w", r.ID, err)
	}
	if res == 0 {
		return ErrLeaseLost
	}
	return nil
}

// IndexEntry is one delivery of a partner's index: its id and creation
// millisecond.
type IndexEntry struct {
	ID        string
	CreatedMs int64
}

// CountWindow counts the deliveries of scope created in [since, until).
func (s *Deliveries) CountWindow(ctx context.Context, scope endpoints.Scope, since, until time.Time) (int, error) {
	n, err := s.rdb.ZCount(ctx, partnerDeliveriesKey(scope), strconv.FormatInt(since.UnixMilli(), 10),
		"("+strconv.FormatInt(until.UnixMilli(), 10)).Result()
	if err != nil {
		return 0, fmt.Errorf("counting deliveries: %w", err)
	}
	return int(n), nil
}

// Window returns up to limit index entries of scope created in
// [fromMs, untilMs), oldest first, skipping the first skip entries of
// fromMs (a scan position: the entries of that millisecond already read).
func (s *Deliveries) Window(ctx context.Context, scope endpoints.Scope, fromMs int64, skip int, untilMs int64, limit int) ([]IndexEntry, error) {
	zs, err := s.rdb.ZRangeByScoreWithScores(ctx, partnerDeliveriesKey(scope), &redis.ZRangeBy{
		Min: strconv.FormatInt(fromMs, 10), Max: "(" + strconv.FormatInt(untilMs, 10), Count: int64(limit + skip),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("scanning deliveries: %w", err)
	}
	out := make([]IndexEntry, 0, len(zs))
	for i, z := range zs {
		ms := int64(z.Score)
		if ms == fromMs && i < skip {
			continue
		}
		id, _ := z.Member.(string)
		out = append(out, IndexEntry{ID: id, CreatedMs: ms})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// GetMany loads deliveries by id in scope; missing ones (expired) and
// other scopes' are left out.
func (s *Deliveries) GetMany(ctx context.Context, scope endpoints.Scope, ids []string) ([]Delivery, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, deliveryKey(s.shardOf(id), id), "rec")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("loading deliveries: %w", err)
	}
	out := make([]Delivery, 0, len(ids))
	for i, cmd := range cmds {
		raw, err := cmd.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("loading delivery %s: %w", ids[i], err)
		}
		var d Delivery
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("decoding delivery %s: %w", ids[i], err)
		}
		if d.Scope() == scope {
			out = append(out, d)
		}
	}
	return out, nil
}
