package recovery_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

var (
	t0     = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	acme   = endpoints.Scope{Tenant: "t1", Environment: "sandbox", PartnerID: "acme"}
	globex = endpoints.Scope{Tenant: "t1", Environment: "sandbox", PartnerID: "globex"}
)

func TestNewWindow(t *testing.T) {
	now := t0
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	for _, tc := range []struct {
		name  string
		since time.Time
		until *time.Time
		ok    bool
	}{
		{"until defaults to now", now.Add(-time.Hour), nil, true},
		{"the longest window", now.Add(-recovery.MaxWindow), nil, true},
		{"explicit until", now.Add(-2 * time.Hour), at(-time.Hour), true},
		{"since missing", time.Time{}, nil, false},
		{"window too long", now.Add(-recovery.MaxWindow - time.Millisecond), nil, false},
		{"until in the future", now.Add(-time.Hour), at(time.Second), false},
		{"since after until", now.Add(-time.Hour), at(-2 * time.Hour), false},
		{"empty window", now.Add(-time.Hour), at(-time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := recovery.NewWindow(tc.since, tc.until, now)
			if !tc.ok {
				require.ErrorIs(t, err, recovery.ErrInvalidWindow)
				return
			}
			require.NoError(t, err)
			if tc.until == nil {
				assert.Equal(t, now, w.Until)
			}
		})
	}
}

type fixture struct {
	ctx  context.Context
	eps  *store.Endpoints
	dlv  *store.Deliveries
	jobs *store.Recoveries
	now  time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rdb := redistest.NewClient(t)
	f := &fixture{ctx: context.Background(), eps: store.NewEndpoints(rdb), dlv: store.NewDeliveries(rdb, store.DefaultDeliveriesConfig()),
		jobs: store.NewRecoveries(rdb, time.Hour), now: t0}
	for _, e := range []struct {
		id    string
		scope endpoints.Scope
	}{{"we_a", acme}, {"we_b", acme}, {"we_g", globex}} {
		require.NoError(t, f.eps.Create(f.ctx, endpoints.New(e.id, e.scope, endpoints.Registration{URL: "https://h.example/" + e.id}, t0.Add(-48*time.Hour))))
	}
	return f
}

func (f *fixture) worker(cfg recovery.Config) *recovery.Worker {
	return recovery.NewWorker(cfg, f.jobs, f.dlv, f.eps, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return f.now }, nil)
}

// seed stores a delivery of endpoint created at, with status.
func (f *fixture) seed(t *testing.T, scope endpoints.Scope, endpoint, id string, at time.Time, status string) {
	t.Helper()
	ev := delivery.Event{SchemaVersion: "case-event-v2", EventID: "evt_" + id, Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "c", ExternalCaseID: "x"}
	_, err := f.dlv.Create(f.ctx, store.Delivery{ID: id, EventID: "evt_" + id, EventType: "case.opened", EndpointID: endpoint,
		Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID, Status: status, Trigger: store.TriggerScheduled,
		CreatedAt: at, NextAttemptAt: at, Event: ev})
	require.NoError(t, err)
}

func (f *fixture) start(t *testing.T, scope endpoints.Scope, endpoint string, since, until time.Time) store.Recovery {
	t.Helper()
	total, err := f.dlv.CountWindow(f.ctx, scope, since, until)
	require.NoError(t, err)
	job := store.Recovery{ID: fmt.Sprintf("rcv_%d", f.now.UnixNano()), EndpointID: endpoint, Tenant: scope.Tenant, Environment: scope.Environment,
		PartnerID: scope.PartnerID, Since: since, Until: until, Status: store.RecoveryRunning, Total: total, CreatedAt: f.now, UpdatedAt: f.now}
	require.NoError(t, f.jobs.Create(f.ctx, job))
	return job
}

// replays returns the recovery replays of scope: original id → replay.
func (f *fixture) replays(t *testing.T, scope endpoints.Scope) map[string]store.Delivery {
	t.Helper()
	list, _, err := f.dlv.List(f.ctx, scope, store.Filter{}, nil, 100)
	require.NoError(t, err)
	out := map[string]store.Delivery{}
	for _, d := range list {
		if d.Trigger == store.TriggerRecovery {
			_, dup := out[d.ReplayOf]
			require.False(t, dup, "two replays of %s", d.ReplayOf)
			out[d.ReplayOf] = d
		}
	}
	return out
}

func (f *fixture) drain(t *testing.T, w *recovery.Worker) {
	t.Helper()
	for range 100 {
		worked, err := w.Step(f.ctx)
		require.NoError(t, err)
		if !worked {
			return
		}
	}
	t.Fatal("the recovery did not finish in 100 batches")
}

func TestRecoveryReplaysTheEndpointsUndeliveredDeliveriesInTheWindow(t *testing.T) {
	f := newFixture(t)
	since := t0.Add(-6 * time.Hour)
	f.seed(t, acme, "we_a", "d_before", since.Add(-time.Millisecond), store.StatusFailed)
	f.seed(t, acme, "we_a", "d_failed1", since, store.StatusFailed)
	f.seed(t, acme, "we_a", "d_ok", since.Add(time.Minute), store.StatusDelivered)
	f.seed(t, acme, "we_a", "d_pending", since.Add(2*time.Minute), store.StatusScheduled)
	f.seed(t, acme, "we_a", "d_cancel", since.Add(2*time.Minute), store.StatusCancelled)
	f.seed(t, acme, "we_b", "d_other_ep", since.Add(3*time.Minute), store.StatusFailed)
	f.seed(t, globex, "we_g", "d_other_partner", since.Add(3*time.Minute), store.StatusFailed)
	for i := range 7 { // several batches, and one millisecond shared by many
		f.seed(t, acme, "we_a", fmt.Sprintf("d_burst%d", i), since.Add(time.Hour), store.StatusFailed)
	}
	f.seed(t, acme, "we_a", "d_at_until", t0.Add(-time.Hour), store.StatusFailed)

	job := f.start(t, acme, "we_a", since, t0.Add(-time.Hour))
	assert.Equal(t, 12, job.Total, "every delivery of the partner in the window, whatever its endpoint")
	cfg := recovery.DefaultConfig()
	cfg.Batch = 3
	f.now = t0.Add(time.Second)
	f.drain(t, f.worker(cfg))

	got := f.replays(t, acme)
	var replayed []string
	for orig, r := range got {
		replayed = append(replayed, orig)
		o, err := f.dlv.Get(f.ctx, acme, orig)
		require.NoError(t, err)
		assert.Equal(t, o.EventID, r.EventID, "same event")
		assert.NotEqual(t, orig, r.ID, "new deliveryId")
		assert.Equal(t, job.ID, r.RecoveryID)
		assert.Equal(t, "we_a", r.EndpointID)
		assert.Equal(t, store.StatusScheduled, r.Status)
		assert.Equal(t, f.now, r.NextAttemptAt.UTC(), "due at once")
		assert.Equal(t, o.Event, r.Event)
	}
	sort.Strings(replayed)
	assert.Equal(t, []string{"d_burst0", "d_burst1", "d_burst2", "d_burst3", "d_burst4", "d_burst5", "d_burst6", "d_cancel", "d_failed1"}, replayed)
	assert.Empty(t, f.replays(t, globex))

	done, err := f.jobs.Get(f.ctx, acme, job.ID)
	require.NoError(t, err)
	assert.Equal(t, store.RecoveryCompleted, done.Status)
	assert.Equal(t, 12, done.Scanned)
	assert.Equal(t, 9, done.Scheduled)
	assert.False(t, done.LimitReached)
	assert.Equal(t, f.now, done.CompletedAt.UTC())
	_, err = f.jobs.Get(f.ctx, globex, job.ID)
	require.ErrorIs(t, err, store.ErrRecoveryNotFound, "another partner never sees it")

	again := f.start(t, acme, "we_a", since, t0.Add(-time.Hour))
	assert.NotEqual(t, job.ID, again.ID, "a finished recovery frees its endpoint")
}

func TestOneRunningRecoveryPerEndpoint(t *testing.T) {
	f := newFixture(t)
	job := f.start(t, acme, "we_a", t0.Add(-time.Hour), t0)
	f.now = f.now.Add(time.Millisecond)
	err := f.jobs.Create(f.ctx, store.Recovery{ID: "rcv_second", EndpointID: "we_a", Tenant: acme.Tenant, Environment: acme.Environment,
		PartnerID: acme.PartnerID, Since: t0.Add(-time.Hour), Until: t0, Status: store.RecoveryRunning, CreatedAt: f.now})
	var running *store.InProgressError
	require.ErrorAs(t, err, &running)
	assert.Equal(t, job.ID, running.ID)
	f.start(t, acme, "we_b", t0.Add(-time.Hour), t0) // another endpoint is free
}

// A worker that dies after scheduling part of a batch leaves its lease to
// lapse; the next worker redoes the batch and schedules nothing twice.
func TestACrashedWorkersJobIsFinishedByAnotherWithoutDuplicates(t *testing.T) {
	f := newFixture(t)
	since := t0.Add(-time.Hour)
	for i := range 6 {
		f.seed(t, acme, "we_a", fmt.Sprintf("d_%d", i), since.Add(time.Duration(i)*time.Minute), store.StatusFailed)
	}
	job := f.start(t, acme, "we_a", since, t0)
	cfg := recovery.DefaultConfig()
	cfg.Batch = 4

	// The dead worker: claims the job and schedules two replays, then
	// nothing more (its process is gone before it saves the batch).
	dead, ok, err := f.jobs.Claim(f.ctx, f.now, cfg.Lease, "dead-token")
	require.NoError(t, err)
	require.True(t, ok)
	for _, id := range []string{"d_0", "d_1"} {
		orig, err := f.dlv.Get(f.ctx, acme, id)
		require.NoError(t, err)
		_, err = f.dlv.Create(f.ctx, store.Delivery{ID: recovery.ReplayID(dead.ID, id), EventID: orig.EventID, EndpointID: "we_a", Tenant: acme.Tenant,
			Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerRecovery,
			ReplayOf: id, RecoveryID: dead.ID, CreatedAt: f.now, NextAttemptAt: f.now, Event: orig.Event})
		require.NoError(t, err)
	}

	w := f.worker(cfg)
	worked, err := w.Step(f.ctx)
	require.NoError(t, err)
	assert.False(t, worked, "the job is leased to the dead worker")

	f.now = f.now.Add(cfg.Lease + time.Millisecond)
	f.drain(t, w)
	assert.Len(t, f.replays(t, acme), 6, "one replay per failed delivery, the dead worker's two included once")
	done, err := f.jobs.Get(f.ctx, acme, job.ID)
	require.NoError(t, err)
	assert.Equal(t, store.RecoveryCompleted, done.Status)
	assert.Equal(t, 6, done.Scheduled)
	require.ErrorIs(t, f.jobs.Save(f.ctx, "dead-token", dead, f.now), store.ErrLeaseLost, "the dead worker cannot overwrite the job")
}

func TestRecoveryStopsAtItsReplayLimit(t *testing.T) {
	f := newFixture(t)
	since := t0.Add(-time.Hour)
	for i := range 5 {
		f.seed(t, acme, "we_a", fmt.Sprintf("d_%d", i), since.Add(time.Duration(i)*time.Minute), store.StatusFailed)
	}
	job := f.start(t, acme, "we_a", since, t0)
	cfg := recovery.DefaultConfig()
	cfg.MaxReplays = 3
	f.drain(t, f.worker(cfg))
	done, err := f.jobs.Get(f.ctx, acme, job.ID)
	require.NoError(t, err)
	assert.Equal(t, store.RecoveryCompleted, done.Status)
	assert.Equal(t, 3, done.Scheduled)
	assert.True(t, done.LimitReached)
	assert.Equal(t, since.Add(3*time.Minute), done.NextSince.UTC(), "a new recovery from here takes the rest")
	assert.Len(t, f.replays(t, acme), 3)
}

func TestRecoveryOfADisabledEndpointIsCancelled(t *testing.T) {
	f := newFixture(t)
	f.seed(t, acme, "we_a", "d_0", t0.Add(-time.Minute), store.StatusFailed)
	job := f.start(t, acme, "we_a", t0.Add(-time.Hour), t0)
	_, err := f.eps.Modify(f.ctx, acme, "we_a", func(e endpoints.Endpoint) (endpoints.Endpoint, error) { return endpoints.Disable(e, t0), nil })
	require.NoError(t, err)
	f.drain(t, f.worker(recovery.DefaultConfig()))
	done, err := f.jobs.Get(f.ctx, acme, job.ID)
	require.NoError(t, err)
	assert.Equal(t, store.RecoveryCancelled, done.Status)
	assert.Equal(t, "endpoint_disabled", done.CancelReason)
	assert.Empty(t, f.replays(t, acme))
}
