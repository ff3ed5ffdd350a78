// Package recovery is the bulk "recover failed since T" of one endpoint:
// every delivery of that endpoint created in a window that ended without a
// 2xx (failed, or cancelled while it waited) gets a replay, a new delivery
// of the same event with trigger recovery, linked to its original.
//
// A request is answered at once with a job; workers on every replica lease
// the job from Redis a batch at a time, so any replica progresses it and a
// crashed worker's lease lapses for another. Replays get ids derived from
// the job and the original, so a batch redone after a crash schedules
// nothing twice.
package recovery

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Bounds of one recovery.
const (
	// MaxWindow is the longest window one recovery scans: twice the
	// retry schedule (about 3.2 days), so an outage over a long weekend
	// is one request, while the scan stays bounded.
	MaxWindow = 7 * 24 * time.Hour
	// MaxReplays is the most replays one recovery makes (Config.MaxReplays);
	// past it the job completes with limitReached and nextSince, where a new
	// one continues.
	MaxReplays = 10000
)

// ErrInvalidWindow is a since/until pair the rules refuse.
var ErrInvalidWindow = errors.New("invalid recovery window")

// Window is a validated [Since, Until) of delivery creation times.
type Window struct {
	Since, Until time.Time
}

// NewWindow checks a requested window at now: since is required and before
// until; until defaults to now and may not be later (a recovery never
// replays deliveries made after it, its own replays included); the window
// is at most MaxWindow long. Times are kept to the millisecond, the
// precision of the index.
func NewWindow(since time.Time, until *time.Time, now time.Time) (Window, error) {
	now = now.Truncate(time.Millisecond)
	w := Window{Since: since.UTC().Truncate(time.Millisecond), Until: now.UTC()}
	if until != nil {
		w.Until = until.UTC().Truncate(time.Millisecond)
	}
	switch {
	case since.IsZero():
		return w, fmt.Errorf("%w: since is required", ErrInvalidWindow)
	case w.Until.After(now):
		return w, fmt.Errorf("%w: until is in the future", ErrInvalidWindow)
	case !w.Since.Before(w.Until):
		return w, fmt.Errorf("%w: since must be before until", ErrInvalidWindow)
	case w.Until.Sub(w.Since) > MaxWindow:
		return w, fmt.Errorf("%w: the window is longer than %s; split it", ErrInvalidWindow, MaxWindow)
	}
	return w, nil
}

// Recoverable reports whether a delivery is one a recovery replays: it
// ended without a 2xx.
func Recoverable(d store.Delivery) bool {
	return d.Status == store.StatusFailed || d.Status == store.StatusCancelled
}

// ReplayID is the id of the replay of delivery orig made by recovery job:
// the same pair always gives the same id.
func ReplayID(job, orig string) string {
	sum := sha256.Sum256([]byte("recovery\x00" + job + "\x00" + orig))
	return "dlv_" + hex.EncodeToString(sum[:12])
}

// Store is what the worker needs of the recovery store.
type Store interface {
	Claim(ctx context.Context, now time.Time, lease time.Duration, token string) (store.Recovery, bool, error)
	Save(ctx context.Context, token string, r store.Recovery, now time.Time) error
}

// Deliveries is what the worker needs of the delivery store.
type Deliveries interface {
	Window(ctx context.Context, scope endpoints.Scope, fromMs int64, skip int, untilMs int64, limit int) ([]store.IndexEntry, error)
	GetMany(ctx context.Context, scope endpoints.Scope, ids []string) ([]store.Delivery, error)
	Create(ctx context.Context, d store.Delivery) (bool, error)
}

// EndpointGetter reads one endpoint.
type EndpointGetter interface {
	Get(ctx context.Context, scope endpoints.Scope, id string) (endpoints.Endpoint, error)
}

// Config configures a Worker.
type Config struct {
	Lease time.Duration // how long one batch may take before another worker may take the job
	Batch int           // index entries read per batch
	Poll  time.Duration // how often an idle worker looks for a job
	// MaxReplays bounds the replays of one job (MaxReplays; tests lower it).
	MaxReplays int
}

// DefaultConfig reads 500 entries per batch under a 30 s lease, and looks
// for work every second.
func DefaultConfig() Config {
	return Config{Lease: 30 * time.Second, Batch: 500, Poll: time.Second, MaxReplays: MaxReplays}
}

// Worker progresses recovery jobs.
type Worker struct {
	cfg        Config
	jobs       Store
	deliveries Deliveries
	endpoints  EndpointGetter
	logger     *slog.Logger
	now        func() time.Time
	token      string
	// scheduled, when set, is called after a batch scheduled replays, so
	// the sender of this replica sends them without waiting for its poll.
	scheduled func()
}

// NewWorker returns a worker; now may be nil (time.Now) and scheduled nil.
func NewWorker(cfg Config, jobs Store, deliveries Deliveries, eps EndpointGetter, logger *slog.Logger, now func() time.Time, scheduled func()) *Worker {
	if now == nil {
		now = time.Now
	}
	b := make([]byte, 8)
	_, _ = crand.Read(b)
	return &Worker{cfg: cfg, jobs: jobs, deliveries: deliveries, endpoints: eps, logger: logger, now: now,
		token: "rcvw_" + hex.EncodeToString(b), scheduled: scheduled}
}

// Run progresses jobs until ctx ends: it works while there is work and
// polls when there is none.
func (w *Worker) Run(ctx context.Context) error {
	t := time.NewTicker(w.cfg.Poll)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			worked, err := w.Step(ctx)
			if err != nil {
				w.logger.ErrorContext(ctx, "recovery batch failed", "err", err)
			}
			if !worked || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Step claims one due job and runs one batch of it. worked is false when
// no job was due.
func (w *Worker) Step(ctx context.Context) (worked bool, err error) {
	job, ok, err := w.jobs.Claim(ctx, w.now(), w.cfg.Lease, w.token)
	if err != nil || !ok {
		return false, err
	}
	log := w.logger.With("recovery", job.ID, "endpoint", job.EndpointID)
	next, made, err := w.batch(ctx, job)
	if err != nil {
		// The job stays leased; it comes due again when the lease lapses.
		return true, fmt.Errorf("recovery %s: %w", job.ID, err)
	}
	if err := w.jobs.Save(ctx, w.token, next, w.now()); err != nil {
		return true, fmt.Errorf("recovery %s: %w", job.ID, err)
	}
	if made > 0 && w.scheduled != nil {
		w.scheduled()
	}
	if next.Done() {
		log.InfoContext(ctx, "recovery finished", "status", next.Status, "scheduled", next.Scheduled,
			"scanned", next.Scanned, "limitReached", next.LimitReached, "cancelReason", next.CancelReason)
	}
	return true, nil
}

// batch reads the next entries of the window and replays the recoverable
// ones of the endpoint. It returns the job as it stands after them.
func (w *Worker) batch(ctx context.Context, job store.Recovery) (store.Recovery, int, error) {
	now := w.now()
	job.UpdatedAt = now
	scope := job.Scope()
	ep, err := w.endpoints.Get(ctx, scope, job.EndpointID)
	switch {
	case errors.Is(err, endpoints.ErrNotFound):
		return finish(job, store.RecoveryCancelled, "endpoint_deleted", now), 0, nil
	case err != nil:
		return job, 0, err
	case ep.Status != endpoints.Enabled:
		return finish(job, store.RecoveryCancelled, "endpoint_disabled", now), 0, nil
	}
	from := job.AfterMs
	if from < job.Since.UnixMilli() {
		from, job.AfterN = job.Since.UnixMilli(), 0
	}
	entries, err := w.deliveries.Window(ctx, scope, from, job.AfterN, job.Until.UnixMilli(), w.cfg.Batch)
	if err != nil {
		return job, 0, err
	}
	if len(entries) == 0 {
		return finish(job, store.RecoveryCompleted, "", now), 0, nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	loaded, err := w.deliveries.GetMany(ctx, scope, ids)
	if err != nil {
		return job, 0, err
	}
	byID := make(map[string]store.Delivery, len(loaded))
	for _, d := range loaded {
		byID[d.ID] = d
	}
	made := 0
	for _, e := range entries {
		d, ok := byID[e.ID]
		if ok && d.EndpointID == job.EndpointID && Recoverable(d) {
			if job.Scheduled >= w.cfg.MaxReplays {
				job.LimitReached, job.NextSince = true, time.UnixMilli(e.CreatedMs).UTC()
				return finish(job, store.RecoveryCompleted, "", now), made, nil
			}
			r := store.Delivery{ID: ReplayID(job.ID, d.ID), EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID,
				Tenant: d.Tenant, Environment: d.Environment, PartnerID: d.PartnerID, Status: store.StatusScheduled,
				Trigger: store.TriggerRecovery, ReplayOf: d.ID, RecoveryID: job.ID, Test: d.Test, CreatedAt: now, NextAttemptAt: now, Event: d.Event}
			if _, err := w.deliveries.Create(ctx, r); err != nil {
				return job, made, err
			}
			job.Scheduled++
			made++
		}
		if e.CreatedMs == job.AfterMs {
			job.AfterN++
		} else {
			job.AfterMs, job.AfterN = e.CreatedMs, 1
		}
		job.Scanned++
	}
	if len(entries) < w.cfg.Batch {
		return finish(job, store.RecoveryCompleted, "", now), made, nil
	}
	return job, made, nil
}

func finish(job store.Recovery, status, reason string, now time.Time) store.Recovery {
	job.Status, job.CancelReason, job.CompletedAt, job.UpdatedAt = status, reason, now, now
	return job
}
