// Package store keeps opened cases in Redis. Every write is one Lua step
// over keys that share the case's shard tag (libs/outbox.Sharding):
//
//	pc:cases:{cases.NN}:case:<id>          hash: record (JSON), status, version, seq
//	pc:cases:{cases.NN}:case:<id>:docket   list: the case-event-v2 bodies, sequence order
//	pc:cases:{cases.NN}:case:<id>:docs     hash: document digest → content (an answer's text)
//	pc:cases:{cases.NN}:opened-applied     set: case-opened event ids applied
//	pc:cases:{cases.NN}:deadlines          sorted set: case id scored by its next deadline (ms)
//	pc:cases:{cases.NN}:outbox             the shard's outbox stream
//	pc:cases:{cases.NN}:export-index       sorted set (lex): evidence-export notifications per partner (exports.go)
//	pc:cases:{cases.NN}:export-notes       hash: partner + event id → the notification's case, side and time
//	pc:cases:{cases.NN}:export-receipts    hash: partner + event id → the partner's receipt
//	pc:cases:{cases.NN}:case-index         sorted set (lex): each partner's cases, newest first (index.go)
//	pc:cases:{cases.NN}:case:<id>:login-spent:<sha256>
//	                                       string: when the hosted page's login token of that hash was spent (sessions.go)
//	pc:cases:{cases.NN}:case:<id>:login-spent
//	                                       string: the earlier, per-case form of that marker, moved before a reissue
//	pc:cases:{cases.NN}:case:<id>:respond-session:<sha256>
//	                                       hash: a hosted respondent session, expiring (sessions.go)
//
// The step that changes a case assigns its events' sequences (per case,
// from 1, without gaps) and ids, appends them to the docket and to the
// outbox, and reschedules the case's next deadline, so no event exists
// without its state change and no state change without its events.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// Errors of the store.
var (
	ErrNotFound = errors.New("case not found")
	ErrConflict = errors.New("case changed since it was read")
)

// EventID is the id of a case's event with the given sequence:
// "case-event:<caseId>:<sequence>". Case ids are at most 64 characters, so
// it stays within the 160 characters of case-event-v2.
func EventID(caseID string, sequence int64) string {
	return eventIDPrefix(caseID) + strconv.FormatInt(sequence, 10)
}

func eventIDPrefix(caseID string) string { return "case-event:" + caseID + ":" }

// Event is a case event ready to record. The recording step writes
//
//	body     = BodyHead + eventId + `","sequence":` + sequence + BodyTail
//	envelope = EnvelopeHead + body + EnvelopeTail
//
// appending body to the docket and envelope to the outbox. The events
// package builds these parts; the id and sequence are only known inside
// the step.
type Event struct {
	BodyHead, BodyTail         []byte
	EnvelopeHead, EnvelopeTail []byte
	// Export, set on an evidence_export_ready event, indexes the
	// notification for each of its recipients in the same step
	// (exports.go).
	Export *ExportNote
}

// Cases is the Redis store of cases.
type Cases struct {
	rdb      redis.UniversalClient
	sharding outbox.Sharding
	durable  *redisclient.Durable
	// archives reads archived cases' documents (archive.go); nil until
	// ReadArchivesFrom.
	archives *archives
}

// NewCases returns the store of cases spread over shards hash tags
// (CASES_SHARDS; the count is part of the data layout, docs/redis.md says
// how to change it). Every step that opens or changes a case waits for
// durable's confirmation (nil: none): the case is the record of the
// proceedings, its executions among them.
func NewCases(rdb redis.UniversalClient, shards int, durable *redisclient.Durable) (*Cases, error) {
	sharding := outbox.Sharding{Service: "cases", Count: shards}
	if err := sharding.Validate(); err != nil {
		return nil, err
	}
	return &Cases{rdb: rdb, sharding: sharding, durable: durable}, nil
}

// Sharding is the store's shard layout, for the outbox relay.
func (s *Cases) Sharding() outbox.Sharding { return s.sharding }

type keys struct {
	tag, caseKey, docket, docs, applied, deadlines, stream string
	exportIndex, exportNotes, exportReceipts, caseIndex    string
}

func (s *Cases) keysFor(caseID string) keys {
	tag := s.sharding.Tag(caseID)
	base := "pc:cases:" + tag
	k := shardKeys(tag)
	k.caseKey, k.docket = base+":case:"+caseID, base+":case:"+caseID+":docket"
	k.docs = base + ":case:" + caseID + ":docs"
	k.applied, k.deadlines, k.stream = base+":opened-applied", deadlinesKey(tag), s.sharding.Stream(tag)
	return k
}

func deadlinesKey(tag string) string { return "pc:cases:" + tag + ":deadlines" }

// Loaded is a case as read, with the version a save must match and the
// sequence of its last event.
type Loaded struct {
	Case     procedure.Case
	Version  int64
	Sequence int64
	// Archived is the tombstone of an archived case, read from its
	// archive (archive.go); nil for a live one.
	Archived *Tombstone
}

// Load reads a case, live or archived.
func (s *Cases) Load(ctx context.Context, id string) (Loaded, error) {
	v, err := s.rdb.HMGet(ctx, s.keysFor(id).caseKey, append([]string{"record", "version", "seq"}, tombstoneFields...)...).Result()
	if err != nil {
		return Loaded{}, fmt.Errorf("reading case %s: %w", id, err)
	}
	if v[0] == nil {
		t, archived, err := tombstoneFrom(v[3:])
		if err != nil {
			return Loaded{}, fmt.Errorf("case %s: %w", id, err)
		}
		if archived {
			return s.loadArchived(ctx, id, t)
		}
		return Loaded{}, ErrNotFound
	}
	var l Loaded
	if l.Case, err = decodeRecord([]byte(v[0].(string))); err != nil {
		return Loaded{}, fmt.Errorf("case %s: %w", id, err)
	}
	if l.Version, err = strconv.ParseInt(str(v[1]), 10, 64); err != nil {
		return Loaded{}, fmt.Errorf("case %s: bad version: %w", id, err)
	}
	if l.Sequence, err = strconv.ParseInt(str(v[2]), 10, 64); err != nil {
		return Loaded{}, fmt.Errorf("case %s: bad sequence: %w", id, err)
	}
	return l, nil
}

func str(v any) string { s, _ := v.(string); return s }

// Open stores a new case with its opening events, unless the case-opened
// event openedEventID was applied before. It reports whether it applied
// the opening; a repeated event, or another event for an existing case,
// changes nothing and reports false.
func (s *Cases) Open(ctx context.Context, c procedure.Case, openedEventID string, events []Event) (bool, error) {
	record, err := encodeRecord(c)
	if err != nil {
		return false, err
	}
	k := s.keysFor(c.ID)
	args := append([]any{openedEventID}, s.common(ctx, c, record)...)
	args = append(args, eventArgs(events)...)
	keys := []string{k.caseKey, k.docket, k.deadlines, k.stream, k.applied, k.exportIndex, k.exportNotes, k.caseIndex}
	var n int
	_, err = s.durable.Write(ctx, s.rdb, k.caseKey, func(rdb redis.Scripter) (err error) {
		n, err = openScript.Run(ctx, rdb, keys, args...).Int()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("opening case %s: %w", c.ID, err)
	}
	return n == 1, nil
}

// Document is content an act refers to by its digest (the SHA-256 of
// Content, lowercase hex), such as the text of an answer. The procedure
// sees only the digest; the store keeps the content beside the case.
type Document struct {
	Digest  string
	Content []byte
}

// Save writes c and records its events, and keeps docs, if the case is
// still at expectVersion; otherwise it returns ErrConflict and the caller
// reloads and decides again. The case's next deadline is rescheduled in the
// same step.
func (s *Cases) Save(ctx context.Context, expectVersion int64, c procedure.Case, events []Event, docs ...Document) error {
	record, err := encodeRecord(c)
	if err != nil {
		return err
	}
	k := s.keysFor(c.ID)
	args := append([]any{expectVersion}, s.common(ctx, c, record)...)
	args = append(args, eventArgs(events)...)
	for _, d := range docs {
		args = append(args, d.Digest, d.Content)
	}
	keys := []string{k.caseKey, k.docket, k.deadlines, k.stream, k.docs, k.exportIndex, k.exportNotes, k.caseIndex}
	var n int
	_, err = s.durable.Write(ctx, s.rdb, k.caseKey, func(rdb redis.Scripter) (err error) {
		n, err = saveScript.Run(ctx, rdb, keys, args...).Int()
		return err
	})
	if err != nil {
		return fmt.Errorf("saving case %s: %w", c.ID, err)
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

// Reschedule sets the case's entry in its shard's deadline index to its
// next deadline (or removes it) if the case is still at version: a
// scheduler that found nothing due puts back the entry it claimed.
func (s *Cases) Reschedule(ctx context.Context, version int64, c procedure.Case) error {
	k := s.keysFor(c.ID)
	if err := rescheduleScript.Run(ctx, s.rdb, []string{k.caseKey, k.deadlines}, version, nextDeadline(c), c.ID).Err(); err != nil {
		return fmt.Errorf("rescheduling case %s: %w", c.ID, err)
	}
	return nil
}

// Unschedule drops a case id from a shard's deadline index when the case
// does not exist (any more).
func (s *Cases) Unschedule(ctx context.Context, caseID string) error {
	k := s.keysFor(caseID)
	return s.rdb.ZRem(ctx, k.deadlines, caseID).Err()
}

// Docket returns up to count event bodies from the given sequence on
// (from 1), in order.
func (s *Cases) Docket(ctx context.Context, caseID string, fromSequence, count int64) ([]json.RawMessage, error) {
	if fromSequence < 1 || count < 1 {
		return nil, nil
	}
	v, err := s.rdb.LRange(ctx, s.keysFor(caseID).docket, fromSequence-1, fromSequence+count-2).Result()
	if err != nil {
		return nil, fmt.Errorf("reading docket of case %s: %w", caseID, err)
	}
	if len(v) == 0 {
		// Past the end of a live docket, or an archived case's.
		if v, err = s.archivedDocket(ctx, caseID, fromSequence, count); err != nil {
			return nil, err
		}
	}
	out := make([]json.RawMessage, len(v))
	for i, b := range v {
		out[i] = json.RawMessage(b)
	}
	return out, nil
}

// Document returns the content of a case's document by digest, and false
// when the case keeps no such document.
func (s *Cases) Document(ctx context.Context, caseID, digest string) ([]byte, bool, error) {
	b, err := s.rdb.HGet(ctx, s.keysFor(caseID).docs, digest).Bytes()
	if errors.Is(err, redis.Nil) {
		// Not kept, or the case is archived.
		return s.archivedDocument(ctx, caseID, digest)
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading document of case %s: %w", caseID, err)
	}
	return b, true, nil
}

// ClaimDue returns up to limit case ids of the shard with the given tag
// whose next deadline is at or before now, and pushes each one's score to
// now+lease in the same step, so other replicas skip them while this one
// works. A claim is only a lease: the case's own version decides which
// replica's events are recorded, and a replica that dies leaves the case
// due again when the lease ends.
func (s *Cases) ClaimDue(ctx context.Context, tag string, now time.Time, lease time.Duration, limit int) ([]Due, error) {
	flat, err := claimScript.Run(ctx, s.rdb, []string{deadlinesKey(tag)}, now.UnixMilli(), lease.Milliseconds(), limit).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("claiming due deadlines of %s: %w", tag, err)
	}
	out := make([]Due, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		ms, err := strconv.ParseFloat(flat[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("claiming due deadlines of %s: score %q of %s: %w", tag, flat[i+1], flat[i], err)
		}
		out = append(out, Due{CaseID: flat[i], At: time.UnixMilli(int64(ms))})
	}
	return out, nil
}

// Due is a claimed deadline: the case, and when its entry fell due (its
// deadline, or the end of an earlier claim that lapsed).
type Due struct {
	CaseID string
	At     time.Time
}

// DueCounts returns, per shard in Tags order, how many cases have a
// deadline due at now that no scheduler has claimed.
func (s *Cases) DueCounts(ctx context.Context, now time.Time) ([]int64, error) {
	tags := s.Tags()
	keys := make([]string, len(tags))
	for i, tag := range tags {
		keys[i] = deadlinesKey(tag)
	}
	counts, err := redisclient.CountDue(ctx, s.rdb, keys, now)
	if err != nil {
		return nil, fmt.Errorf("counting due deadlines: %w", err)
	}
	return counts, nil
}

// Tags lists every shard's tag.
func (s *Cases) Tags() []string { return s.sharding.Tags() }

// common are the ARGV values every writing script takes after its first:
// record, status, next deadline (ms, or "" for none), case id, event id
// prefix, the outbox values of the events, and the case's index members.
func (s *Cases) common(ctx context.Context, c procedure.Case, record []byte) []any {
	args := []any{record, string(c.Status()), nextDeadline(c), c.ID, eventIDPrefix(c.ID)}
	// Id and payload are set per event inside the script.
	args = append(args, outbox.Args(ctx, outbox.Event{ID: "-", Topic: api.CaseEventsTopic, Key: c.ID, Schema: api.CaseEventEnvelopeSchema})...)
	return append(args, caseIndexMembers(c))
}

func nextDeadline(c procedure.Case) string {
	at, ok := procedure.NextDeadline(c)
	if !ok {
		return ""
	}
	return strconv.FormatInt(at.UnixMilli(), 10)
}

func eventArgs(events []Event) []any {
	args := []any{len(events)}
	for _, e := range events {
		args = append(args, e.BodyHead, e.BodyTail, e.EnvelopeHead, e.EnvelopeTail, e.Export.entries())
	}
	return args
}
