// Package store keeps case drafts in Redis. A draft is one hash: the draft
// record (JSON the Go domain reads and writes; Lua never parses it), its
// status and a version for optimistic concurrency. Opening the case is the
// same Lua step as the last confirmation: it stores the opened case, the
// hashes of its show-once capabilities and the case-opened event (outbox).
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// Sharding spreads drafts, and the outbox of case-opened events, over hash tags.
var Sharding = outbox.Sharding{Service: "filings", Count: outbox.DefaultShards}

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
	rdb redis.UniversalClient
}

// NewDrafts returns the store.
func NewDrafts(rdb redis.UniversalClient) *Drafts { return &Drafts{rdb: rdb} }

func draftKey(id string) string {
	return "pc:filings:" + Sharding.Tag(id) + ":draft:" + id
}

// Loaded is a draft as read, with the version a save must match.
type Loaded struct {
	Record  []byte
	Version int64
	Status  string
	Case    []byte // the opened case, once opened
}

// Create stores a new draft at version 1.
func (s *Drafts) Create(ctx context.Context, id string, record []byte, status string) error {
	n, err := createScript.Run(ctx, s.rdb, []string{draftKey(id)}, record, status, Retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("creating draft %s: %w", id, err)
	}
	if n == 0 {
		return ErrExists
	}
	return nil
}

// Load reads a draft.
func (s *Drafts) Load(ctx context.Context, id string) (Loaded, error) {
	v, err := s.rdb.HMGet(ctx, draftKey(id), "record", "version", "status", "case").Result()
	if err != nil {
		return Loaded{}, fmt.Errorf("reading draft %s: %w", id, err)
	}
	if v[0] == nil {
		return Loaded{}, ErrNotFound
	}
	var l Loaded
	l.Record = []byte(v[0].(string))
	if _, err := fmt.Sscan(v[1].(string), &l.Version); err != nil {
		return Loaded{}, fmt.Errorf("draft %s: bad version: %w", id, err)
	}
	l.Status, _ = v[2].(string)
	if c, ok := v[3].(string); ok {
		l.Case = []byte(c)
	}
	return l, nil
}

// Opening is what the last confirmation adds to its save.
type Opening struct {
	CaseID string
	// Case is the confirmed case (confirmed-filing-v2) without secrets.
	Case []byte
	// CapabilityHashes are the SHA-256 hashes of the show-once secrets, by
	// purpose; the secrets themselves are never stored.
	CapabilityHashes map[string]string
	Event            outbox.Event
}

// Save writes the new record if the draft is still at expectVersion, and,
// with an opening, opens the case in the same step. It returns ErrConflict
// when another confirmation saved first: the caller reloads and decides again.
func (s *Drafts) Save(ctx context.Context, id string, expectVersion int64, record []byte, status string, open *Opening) error {
	key := draftKey(id)
	tag := Sharding.Tag(id)
	args := []any{expectVersion, record, status}
	var n int
	var err error
	if open == nil {
		n, err = saveScript.Run(ctx, s.rdb, []string{key}, args...).Int()
	} else {
		caps := make([]any, 0, 2*len(open.CapabilityHashes))
		for purpose, hash := range open.CapabilityHashes {
			caps = append(caps, purpose, hash)
		}
		args = append(args, open.CaseID, open.Case)
		args = append(args, outbox.Args(ctx, open.Event)...)
		args = append(args, caps...)
		n, err = openScript.Run(ctx, s.rdb, []string{key, Sharding.Stream(tag), capabilitiesKey(tag, open.CaseID)}, args...).Int()
	}
	if err != nil {
		return fmt.Errorf("saving draft %s: %w", id, err)
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

func capabilitiesKey(tag, caseID string) string {
	return "pc:filings:" + tag + ":case-capabilities:" + caseID
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

// openScript: KEYS draft, outbox stream, capability hashes of the case.
// ARGV: version, record, status, case id, case JSON, the event's
// outbox.ArgCount values from ARGV[6], then purpose/hash pairs.
var openScript = outbox.Script(`
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'status', ARGV[3], 'case_id', ARGV[4], 'case', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'version', 1)
outbox_append(KEYS[2], 6)
local first = 6 + 6
for i = first, #ARGV, 2 do
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[3], ` + "30 * 24 * 3600 * 1000" + `)
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
