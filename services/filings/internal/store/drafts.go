// Package store keeps case drafts in Redis. A draft is one hash: the draft
// record (JSON the Go domain reads and writes; Lua never parses it), its
// status and a version for optimistic concurrency. Opening the case is the
// same Lua step as the last confirmation: it marks the draft opened and
// appends the case-opened fact, with the hashes of the show-once
// capabilities, to the outbox.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// Retention keeps a draft after its expiry or opening, for reads and replays.
const Retention = 30 * 24 * time.Hour

// Errors of the store.
var (
	ErrNotFound = errors.New("draft not found")
	ErrExists   = errors.New("draft already exists")
	ErrConflict = errors.New("draft changed since it was read")
)

// Drafts is the Redis store of drafts.
type Drafts struct {
	rdb      redis.UniversalClient
	sharding outbox.Sharding
	durable  *redisclient.Durable
}

// NewDrafts returns the store of drafts spread over shards hash tags
// (FILINGS_SHARDS; the count is part of the data layout, docs/redis.md
// says how to change it). The step that opens a case waits for durable's
// confirmation (nil: none): an acknowledged opening must survive the loss
// of the primary.
func NewDrafts(rdb redis.UniversalClient, shards int, durable *redisclient.Durable) (*Drafts, error) {
	sharding := outbox.Sharding{Service: "filings", Count: shards}
	if err := sharding.Validate(); err != nil {
		return nil, err
	}
	return &Drafts{rdb: rdb, sharding: sharding, durable: durable}, nil
}

// Sharding is the store's shard layout, for the outbox relay.
func (s *Drafts) Sharding() outbox.Sharding { return s.sharding }

func (s *Drafts) draftKey(id string) string {
	return "pc:filings:" + s.sharding.Tag(id) + ":draft:" + id
}

// Stored is a draft as read, with the version a save must match.
type Stored struct {
	Draft   draft.Draft
	Version int64
}

// Create stores a new draft at version 1.
func (s *Drafts) Create(ctx context.Context, d draft.Draft) error {
	record, err := d.MarshalJSON() // already compact: json.Marshal would compact it again
	if err != nil {
		return fmt.Errorf("encoding draft %s: %w", d.ID(), err)
	}
	n, err := createScript.Run(ctx, s.rdb, []string{s.draftKey(d.ID())}, record, string(d.Status()), Retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("creating draft %s: %w", d.ID(), err)
	}
	if n == 0 {
		return ErrExists
	}
	return nil
}

// Load reads a draft. The record is the domain's own JSON form
// (draft.Draft's MarshalJSON, which checks every invariant on the way
// back); this is the one place it is converted.
func (s *Drafts) Load(ctx context.Context, id string) (Stored, error) {
	v, err := s.rdb.HMGet(ctx, s.draftKey(id), "record", "version").Result()
	if err != nil {
		return Stored{}, fmt.Errorf("reading draft %s: %w", id, err)
	}
	if v[0] == nil {
		return Stored{}, ErrNotFound
	}
	var st Stored
	// Straight to the domain's decoder: json.Unmarshal would scan the
	// record once more before handing it over.
	if err := st.Draft.UnmarshalJSON([]byte(v[0].(string))); err != nil {
		return Stored{}, fmt.Errorf("decoding draft %s: %w", id, err)
	}
	if st.Version, err = strconv.ParseInt(v[1].(string), 10, 64); err != nil {
		return Stored{}, fmt.Errorf("draft %s: bad version: %w", id, err)
	}
	return st, nil
}

// Opening is what the last confirmation adds to its save: the case-opened
// fact, appended to the outbox in the same step.
type Opening struct {
	Event outbox.Event
}

// Save writes d if the draft is still at expectVersion, and, with an
// opening, opens the case in the same step. It returns ErrConflict when
// another act saved first: the caller reloads and decides again.
func (s *Drafts) Save(ctx context.Context, d draft.Draft, expectVersion int64, open *Opening) error {
	record, err := d.MarshalJSON() // already compact: json.Marshal would compact it again
	if err != nil {
		return fmt.Errorf("encoding draft %s: %w", d.ID(), err)
	}
	key := s.draftKey(d.ID())
	args := []any{expectVersion, record, string(d.Status())}
	var n int
	if open == nil {
		n, err = saveScript.Run(ctx, s.rdb, []string{key}, args...).Int()
	} else {
		args = append(args, outbox.Args(ctx, open.Event)...)
		_, err = s.durable.Write(ctx, s.rdb, key, func(rdb redis.Scripter) (err error) {
			n, err = openScript.Run(ctx, rdb, []string{key, s.sharding.Stream(s.sharding.Tag(d.ID()))}, args...).Int()
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("saving draft %s: %w", d.ID(), err)
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'status', ARGV[2], 'version', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

var saveScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'status', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1
`)

// openScript: KEYS draft, outbox stream. ARGV: version, record, status,
// then the event's outbox.ArgCount values from ARGV[4].
var openScript = outbox.Script(`
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'status', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
outbox_append(KEYS[2], 4)
return 1
`)

func feeKey(feeID string) string { return "pc:filings:fee:{" + feeID + "}" }

// IndexFee records which draft a fee belongs to, and the x402 requirements
// committed when it was quoted, for reads and checkout by fee id. It is
// written after the draft: a draft whose index write failed was never
// returned to anyone, and expires unused.
func (s *Drafts) IndexFee(ctx context.Context, feeID, draftID string, offers []byte) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, feeKey(feeID), "draft_id", draftID, "offers", offers)
		p.PExpire(ctx, feeKey(feeID), Retention)
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexing fee %s: %w", feeID, err)
	}
	return nil
}

// FeeIndex is what the fee index holds.
type FeeIndex struct {
	DraftID string
	Offers  []byte // the committed x402 requirements, JSON
}

// Fee returns the index entry of a fee.
func (s *Drafts) Fee(ctx context.Context, feeID string) (FeeIndex, error) {
	v, err := s.rdb.HMGet(ctx, feeKey(feeID), "draft_id", "offers").Result()
	if err != nil {
		return FeeIndex{}, fmt.Errorf("reading fee %s: %w", feeID, err)
	}
	if v[0] == nil {
		return FeeIndex{}, ErrNotFound
	}
	idx := FeeIndex{DraftID: v[0].(string)}
	if o, ok := v[1].(string); ok {
		idx.Offers = []byte(o)
	}
	return idx, nil
}
