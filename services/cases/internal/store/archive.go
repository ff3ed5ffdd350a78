package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/services/cases/internal/archive"
)

// Archived cases (docs/archiving.md). The archiver (internal/archiveflow)
// writes a closed case's values to one object of the object store
// (archive.Document) and then, in one step over the case's slot
// (Archive), deletes the case hash, its docket and its documents and
// leaves in the case hash a tombstone:
//
//	pc:cases:{cases.NN}:case:<id>   hash: archive (object key), archive-digest,
//	                                archived-version, archived-at (ms), status
//
// The tombstone has no record and no version field, so every writing step
// (save, reschedule) finds the case changed and the use cases, reloading,
// find it archived (ErrArchived); the opening step finds the key and opens
// nothing over it; the case list's status filter reads its status as
// before. Reads (Load, Docket, Document) serve an archived case from its
// document, so every route answers from the same bytes it read while the
// case was live. What the archive does not take stays where it is: the
// case index and the export notifications (the partners' lists), the
// applied-openings set (so a replayed opening stays a replay), the hosted
// page's spent login markers (a spent link stays spent) and sessions
// (which expire), and the memberships of libs/auth (which expire with
// their grant).

// ErrArchived means the case is archived: it is read from its archive and
// no act changes it any more.
var ErrArchived = errors.New("case archived")

// Objects reads archive objects (an objectstore.Store).
type Objects interface {
	Open(ctx context.Context, key string) (io.ReadCloser, objectstore.Info, error)
}

// archives reads and caches archive documents. Documents never change
// (a key is written for one version of one case), so a cached one is
// always current; the cache holds the last archiveCacheSize read.
type archives struct {
	objects Objects
	mu      sync.Mutex
	docs    map[string]archive.Document
	order   []string
}

const archiveCacheSize = 256

// ReadArchivesFrom makes the store serve archived cases from objects, the
// object store the archiver writes to. Without it, reading an archived
// case is an error.
func (s *Cases) ReadArchivesFrom(objects Objects) {
	s.archives = &archives{objects: objects, docs: map[string]archive.Document{}}
}

// Tombstone says where a case's archive is.
type Tombstone struct {
	ObjectKey string
	Digest    string
	// Version is the case's version the archive holds.
	Version    int64
	ArchivedAt time.Time
}

// tombstoneFields are read with the live fields in one HMGET.
var tombstoneFields = []string{"archive", "archive-digest", "archived-version", "archived-at"}

func tombstoneFrom(v []any) (Tombstone, bool, error) {
	key := str(v[0])
	if key == "" {
		return Tombstone{}, false, nil
	}
	version, err := strconv.ParseInt(str(v[2]), 10, 64)
	if err != nil {
		return Tombstone{}, false, fmt.Errorf("bad archived version: %w", err)
	}
	at, err := strconv.ParseInt(str(v[3]), 10, 64)
	if err != nil {
		return Tombstone{}, false, fmt.Errorf("bad archiving instant: %w", err)
	}
	return Tombstone{ObjectKey: key, Digest: str(v[1]), Version: version, ArchivedAt: time.UnixMilli(at).UTC()}, true, nil
}

// ArchivedCase returns the tombstone of an archived case, and false for a
// live or unknown one.
func (s *Cases) ArchivedCase(ctx context.Context, id string) (Tombstone, bool, error) {
	v, err := s.rdb.HMGet(ctx, s.keysFor(id).caseKey, tombstoneFields...).Result()
	if err != nil {
		return Tombstone{}, false, fmt.Errorf("reading case %s: %w", id, err)
	}
	t, ok, err := tombstoneFrom(v)
	if err != nil {
		return Tombstone{}, false, fmt.Errorf("case %s: %w", id, err)
	}
	return t, ok, nil
}

// archived returns the document of an archived case.
func (s *Cases) archived(ctx context.Context, id string, t Tombstone) (archive.Document, error) {
	if s.archives == nil {
		return archive.Document{}, fmt.Errorf("case %s is archived at %s, and this store reads no archives", id, t.ObjectKey)
	}
	return s.archives.read(ctx, t)
}

func (a *archives) read(ctx context.Context, t Tombstone) (archive.Document, error) {
	a.mu.Lock()
	d, ok := a.docs[t.ObjectKey]
	a.mu.Unlock()
	if ok {
		return d, nil
	}
	body, _, err := a.objects.Open(ctx, t.ObjectKey)
	if err != nil {
		return archive.Document{}, fmt.Errorf("reading archive %s: %w", t.ObjectKey, err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return archive.Document{}, fmt.Errorf("reading archive %s: %w", t.ObjectKey, err)
	}
	if d, err = archive.Decode(b, t.Digest); err != nil {
		return archive.Document{}, fmt.Errorf("archive %s: %w", t.ObjectKey, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.docs[t.ObjectKey]; !ok {
		if len(a.order) == archiveCacheSize {
			delete(a.docs, a.order[0])
			a.order = a.order[1:]
		}
		a.docs[t.ObjectKey] = d
		a.order = append(a.order, t.ObjectKey)
	}
	return d, nil
}

// loadArchived is Load for a case whose hash is a tombstone.
func (s *Cases) loadArchived(ctx context.Context, id string, t Tombstone) (Loaded, error) {
	d, err := s.archived(ctx, id, t)
	if err != nil {
		return Loaded{}, err
	}
	l := Loaded{Archived: &t}
	if l.Case, err = decodeRecord([]byte(d.Case["record"])); err != nil {
		return Loaded{}, fmt.Errorf("archived case %s: %w", id, err)
	}
	if l.Version, err = strconv.ParseInt(d.Case["version"], 10, 64); err != nil {
		return Loaded{}, fmt.Errorf("archived case %s: bad version: %w", id, err)
	}
	if l.Sequence, err = strconv.ParseInt(d.Case["seq"], 10, 64); err != nil {
		return Loaded{}, fmt.Errorf("archived case %s: bad sequence: %w", id, err)
	}
	return l, nil
}

// Snapshot reads every value the archive takes of a live case, in one
// step: its hash, its docket and its documents, as an archive document
// (without the tenant, environment and closing instant, which the
// archiver adds from the case). It also returns the version read, which
// Archive must still find. ErrNotFound for an unknown case, ErrArchived
// for an archived one.
func (s *Cases) Snapshot(ctx context.Context, id string) (archive.Document, int64, error) {
	k := s.keysFor(id)
	v, err := snapshotScript.Run(ctx, s.rdb, []string{k.caseKey, k.docket, k.docs}).Slice()
	if err != nil {
		return archive.Document{}, 0, fmt.Errorf("reading case %s for its archive: %w", id, err)
	}
	d := archive.Document{Format: archive.Format, CaseID: id, Case: pairs(v[0]), Documents: map[string][]byte{}}
	if d.Case["record"] == "" {
		if d.Case["archive"] != "" {
			return archive.Document{}, 0, ErrArchived
		}
		return archive.Document{}, 0, ErrNotFound
	}
	for _, e := range v[1].([]any) {
		d.Docket = append(d.Docket, e.(string))
	}
	for k, c := range pairs(v[2]) {
		d.Documents[k] = []byte(c)
	}
	version, err := strconv.ParseInt(d.Case["version"], 10, 64)
	if err != nil {
		return archive.Document{}, 0, fmt.Errorf("case %s: bad version: %w", id, err)
	}
	return d, version, nil
}

// pairs reads an HGETALL reply of a script (a flat list) as a map.
func pairs(v any) map[string]string {
	list, _ := v.([]any)
	out := make(map[string]string, len(list)/2)
	for i := 0; i+1 < len(list); i += 2 {
		out[list[i].(string)] = list[i+1].(string)
	}
	return out
}

// Archive replaces the live case with its tombstone, in one step over the
// case's slot, if the case is still live at version: the case hash, the
// docket and the documents are deleted, the tombstone written, the case
// leaves the deadline index. It reports false, changing nothing, when the
// case changed (or was archived) since version was read. The caller has
// written the archive and read it back before: from this step on, reads
// are served from it.
func (s *Cases) Archive(ctx context.Context, id string, t Tombstone) (bool, error) {
	k := s.keysFor(id)
	n, err := archiveScript.Run(ctx, s.rdb, []string{k.caseKey, k.docket, k.docs, k.deadlines},
		t.Version, t.ObjectKey, t.Digest, t.ArchivedAt.UnixMilli(), id).Int()
	if err != nil {
		return false, fmt.Errorf("archiving case %s: %w", id, err)
	}
	return n == 1, nil
}

// snapshotScript: KEYS case, docket, documents.
var snapshotScript = redis.NewScript(`
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), redis.call('HGETALL', KEYS[3])}
`)

// archiveScript: KEYS case, docket, documents, deadlines; ARGV version,
// object key, digest, archived-at ms, case id.
var archiveScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] or redis.call('HEXISTS', KEYS[1], 'record') == 0 then return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'archive', ARGV[2], 'archive-digest', ARGV[3], 'archived-version', ARGV[1], 'archived-at', ARGV[4], 'status', status)
redis.call('ZREM', KEYS[4], ARGV[5])
return 1
`)

// SweepCases returns up to n case ids of the shard with the given tag,
// from its case index after cursor ("" from the start), and the cursor to
// go on from ("" once the end is reached). A case held by several
// partners is listed once per partner; the caller takes each as a
// candidate only.
func (s *Cases) SweepCases(ctx context.Context, tag, cursor string, n int) ([]string, string, error) {
	from := "-"
	if cursor != "" {
		from = "(" + cursor
	}
	members, err := s.rdb.ZRangeByLex(ctx, shardKeys(tag).caseIndex, &redis.ZRangeBy{Min: from, Max: "+", Count: int64(n)}).Result()
	if err != nil {
		return nil, "", fmt.Errorf("sweeping the cases of %s: %w", tag, err)
	}
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if i := strings.LastIndex(m, sepKey); i >= 0 {
			ids = append(ids, m[i+1:])
		}
	}
	if len(members) < n {
		return ids, "", nil
	}
	return ids, members[len(members)-1], nil
}

// Status returns a case's status field (live or archived), "" for an
// unknown case: the archiver's cheap first look at a candidate.
func (s *Cases) Status(ctx context.Context, id string) (string, error) {
	v, err := s.rdb.HGet(ctx, s.keysFor(id).caseKey, "status").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the status of case %s: %w", id, err)
	}
	return v, nil
}

// archivedDocket is Docket for an archived case: nil for a live one.
func (s *Cases) archivedDocket(ctx context.Context, id string, fromSequence, count int64) ([]string, error) {
	t, archived, err := s.ArchivedCase(ctx, id)
	if err != nil || !archived {
		return nil, err
	}
	d, err := s.archived(ctx, id, t)
	if err != nil {
		return nil, err
	}
	from := min(fromSequence-1, int64(len(d.Docket)))
	return d.Docket[from:min(from+count, int64(len(d.Docket)))], nil
}

// archivedDocument is Document for an archived case: not found for a live
// one.
func (s *Cases) archivedDocument(ctx context.Context, id, digest string) ([]byte, bool, error) {
	t, archived, err := s.ArchivedCase(ctx, id)
	if err != nil || !archived {
		return nil, false, err
	}
	d, err := s.archived(ctx, id, t)
	if err != nil {
		return nil, false, err
	}
	b, ok := d.Documents[digest]
	return b, ok, nil
}

// The archiver's sweep of a shard (internal/archiveflow): a lease, so one
// replica at a time reads a shard's index, and the cursor it reached, so
// the next sweep, on any replica, goes on from there.
//
//	pc:cases:{cases.NN}:archive-sweep         string: the replica holding the sweep, expiring
//	pc:cases:{cases.NN}:archive-sweep-cursor  string: the case index member the last sweep ended at

func sweepKeys(tag string) []string {
	return []string{"pc:cases:" + tag + ":archive-sweep", "pc:cases:" + tag + ":archive-sweep-cursor"}
}

// ClaimSweep takes the shard's sweep lease for owner, unless another
// replica holds it, and returns the cursor to sweep from.
func (s *Cases) ClaimSweep(ctx context.Context, tag, owner string, lease time.Duration) (string, bool, error) {
	v, err := claimSweepScript.Run(ctx, s.rdb, sweepKeys(tag), owner, lease.Milliseconds()).Slice()
	if err != nil {
		return "", false, fmt.Errorf("claiming the archive sweep of %s: %w", tag, err)
	}
	if v[0].(int64) == 0 {
		return "", false, nil
	}
	cursor, _ := v[1].(string)
	return cursor, true, nil
}

// EndSweep records where owner's sweep of the shard ended ("" to start
// again from the beginning) and gives the lease back, if owner still holds
// it; a sweep whose lease ran out records nothing.
func (s *Cases) EndSweep(ctx context.Context, tag, owner, cursor string) error {
	if err := endSweepScript.Run(ctx, s.rdb, sweepKeys(tag), owner, cursor).Err(); err != nil {
		return fmt.Errorf("ending the archive sweep of %s: %w", tag, err)
	}
	return nil
}

// claimSweepScript: KEYS lease, cursor; ARGV owner, lease ms.
var claimSweepScript = redis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0, false} end
return {1, redis.call('GET', KEYS[2]) or ''}
`)

// endSweepScript: KEYS lease, cursor; ARGV owner, cursor.
var endSweepScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 1
`)
