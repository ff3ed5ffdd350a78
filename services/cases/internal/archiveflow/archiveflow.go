// Package archiveflow archives closed cases out of Redis into the object
// store once their retention after closing has passed (docs/archiving.md).
//
// The Archiver sweeps each shard's case index a batch at a time, from a
// cursor kept in Redis, and takes each case that is due (archive.Due):
//
//  1. Snapshot reads every value of the case in one step, at a version;
//  2. the archive document is encoded (the same bytes for the same
//     version) and put under a key that names that version;
//  3. the object is read back and must be byte-identical;
//  4. store.Archive, one step over the case's slot, checks the case is
//     still live at that version, deletes its hash, docket and documents
//     and leaves the tombstone that names the object and its digest.
//
// A crash, or a failure, at any point leaves the case readable: before
// step 4 nothing in Redis changed and the case is live (an object put in
// step 2 is an orphan nothing names, written over with the same bytes
// when the case is archived later, or left beside a later version's);
// step 4 is atomic, and it only runs once the object read back whole, so
// from then on the tombstone names an archive that exists. A case changed
// between steps 1 and 4 is not archived (the version check), and is
// looked at again on the next sweep.
//
// Any number of replicas may run it. A shard is swept by the replica
// holding its sweep lease; should two replicas still archive the same case
// at once (a lease that ran out mid-sweep), both put the same bytes under
// the same key and only one archiving step finds the case live.
package archiveflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/services/cases/internal/archive"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Config configures the Archiver.
type Config struct {
	// After is the retention after a case closes; zero switches archiving
	// off (CASES_ARCHIVE_AFTER, "off" or 0).
	After time.Duration
	// Interval is the pause between sweeps.
	Interval time.Duration
	// Batch is the most case index entries read per shard per sweep.
	Batch int
	// Lease is how long a replica holds a shard's sweep.
	Lease time.Duration
}

// DefaultConfig returns the defaults: archive 90 days after closing, a
// sweep a minute of up to 500 index entries per shard (16 shards: 11
// million entries a day).
func DefaultConfig() Config {
	return Config{After: 90 * 24 * time.Hour, Interval: time.Minute, Batch: 500, Lease: 5 * time.Minute}
}

// Validate reports an unusable setting.
func (c Config) Validate() error {
	if c.After < 0 {
		return errors.New("CASES_ARCHIVE_AFTER must not be negative (0 or off switches archiving off)")
	}
	if c.After > 0 && (c.Interval <= 0 || c.Lease <= 0 || c.Batch < 1) {
		return errors.New("case archiver: CASES_ARCHIVE_INTERVAL and CASES_ARCHIVE_LEASE must be positive, CASES_ARCHIVE_BATCH at least 1")
	}
	return nil
}

// Enabled reports whether cases are archived at all.
func (c Config) Enabled() bool { return c.After > 0 }

// Archiver moves due cases from Redis to the object store.
type Archiver struct {
	cases   *store.Cases
	objects objectstore.Store
	cfg     Config
	owner   string
	logger  *slog.Logger
	now     func() time.Time
}

// New returns an Archiver; owner names this replica in the sweep leases,
// now may be nil for time.Now.
func New(cases *store.Cases, objects objectstore.Store, cfg Config, owner string, logger *slog.Logger, now func() time.Time) *Archiver {
	if now == nil {
		now = time.Now
	}
	return &Archiver{cases: cases, objects: objects, cfg: cfg, owner: owner, logger: logger, now: now}
}

// Run sweeps every Interval until ctx is cancelled; with archiving off it
// only waits.
func (a *Archiver) Run(ctx context.Context) error {
	if !a.cfg.Enabled() {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	for {
		if n, err := a.Sweep(ctx); err != nil && ctx.Err() == nil {
			a.logger.ErrorContext(ctx, "archiving cases failed", "archived", n, "err", err)
		} else if n > 0 {
			a.logger.InfoContext(ctx, "cases archived", "archived", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sweep takes one batch of each shard whose sweep lease it gets, archives
// the cases due, and reports how many it archived. A case that fails
// stays live and is tried again when the sweep comes round to it.
func (a *Archiver) Sweep(ctx context.Context) (int, error) {
	if !a.cfg.Enabled() {
		return 0, nil
	}
	var errs []error
	archived := 0
	for _, tag := range a.cases.Tags() {
		cursor, ok, err := a.cases.ClaimSweep(ctx, tag, a.owner, a.cfg.Lease)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		ids, next, err := a.cases.SweepCases(ctx, tag, cursor, a.cfg.Batch)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, id := range ids {
			done, err := a.ArchiveIfDue(ctx, id)
			if err != nil {
				errs = append(errs, err)
			}
			if done {
				archived++
			}
		}
		if err := a.cases.EndSweep(ctx, tag, a.owner, next); err != nil {
			errs = append(errs, err)
		}
	}
	return archived, errors.Join(errs...)
}

// closedStatuses are the statuses a closed case has (archive.ClosedAt):
// the first look at a candidate, before its record is read.
var closedStatuses = map[string]bool{
	string(procedure.StatusAwarded): true, string(procedure.StatusSettled): true, string(procedure.StatusTerminated): true,
}

// ArchiveIfDue archives the case if it is live and due, and reports
// whether it did.
func (a *Archiver) ArchiveIfDue(ctx context.Context, id string) (bool, error) {
	status, err := a.cases.Status(ctx, id)
	if err != nil || !closedStatuses[status] {
		return false, err
	}
	l, err := a.cases.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if l.Archived != nil || !archive.Due(l.Case, a.now(), a.cfg.After) {
		return false, nil
	}
	return a.archive(ctx, l)
}

// archive runs the four steps of the package doc on a due case.
func (a *Archiver) archive(ctx context.Context, l store.Loaded) (bool, error) {
	id := l.Case.ID
	doc, version, err := a.cases.Snapshot(ctx, id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrArchived) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if version != l.Version {
		return false, nil // changed since it was judged due: judged again next sweep
	}
	closedAt, _ := archive.ClosedAt(l.Case)
	doc.Tenant, doc.Environment, doc.ClosedAt = l.Case.Tenant, l.Case.Environment, closedAt.UTC()
	b, digest, err := archive.Encode(doc)
	if err != nil {
		return false, err
	}
	key := archive.ObjectKey(l.Case.Tenant, l.Case.Environment, id, version)
	if err := a.objects.Put(ctx, key, bytes.NewReader(b), int64(len(b)), archive.ContentType); err != nil {
		return false, fmt.Errorf("archiving case %s: writing %s: %w", id, key, err)
	}
	if err := a.readBack(ctx, key, b); err != nil {
		return false, fmt.Errorf("archiving case %s: %w", id, err)
	}
	done, err := a.cases.Archive(ctx, id, store.Tombstone{ObjectKey: key, Digest: digest, Version: version, ArchivedAt: a.now()})
	if err != nil || !done {
		return false, err
	}
	a.logger.InfoContext(ctx, "case archived", "case", id, "object", key, "bytes", len(b), "digest", digest)
	return true, nil
}

// readBack checks the object under key holds exactly want.
func (a *Archiver) readBack(ctx context.Context, key string, want []byte) error {
	body, _, err := a.objects.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", key, err)
	}
	defer body.Close()
	got, err := io.ReadAll(io.LimitReader(body, int64(len(want))+1))
	if err != nil {
		return fmt.Errorf("reading back %s: %w", key, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("reading back %s: %d bytes differ from the %d written", key, len(got), len(want))
	}
	return nil
}
