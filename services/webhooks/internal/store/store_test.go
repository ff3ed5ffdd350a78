package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

var (
	t0    = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	acme  = endpoints.Scope{Tenant: "t1", Environment: "live", PartnerID: "acme"}
	other = endpoints.Scope{Tenant: "t1", Environment: "live", PartnerID: "globex"}
)

func TestEndpointsAreScopedVersionedAndBounded(t *testing.T) {
	ctx := context.Background()
	s := store.NewEndpoints(redistest.NewClient(t))
	e := endpoints.New("we_1", acme, endpoints.Registration{URL: "https://h.example/", EventTypes: []string{"case.opened"}}, t0)
	require.NoError(t, s.Create(ctx, e))

	got, err := s.Get(ctx, acme, "we_1")
	require.NoError(t, err)
	assert.Equal(t, e.URL, got.URL)
	assert.Equal(t, []string{"case.opened"}, got.EventTypes)
	assert.True(t, got.CreatedAt.Equal(t0))

	_, err = s.Get(ctx, other, "we_1")
	assert.ErrorIs(t, err, endpoints.ErrNotFound, "another partner does not see it")
	assert.ErrorIs(t, s.Delete(ctx, other, "we_1"), endpoints.ErrNotFound)

	stale := got
	got.Description = "first"
	saved, err := s.Update(ctx, got)
	require.NoError(t, err)
	assert.Equal(t, int64(1), saved.Version)
	stale.Description = "second"
	_, err = s.Update(ctx, stale)
	assert.ErrorIs(t, err, endpoints.ErrConflict)

	mod, err := s.Modify(ctx, acme, "we_1", func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		return endpoints.Disable(e, t0), nil
	})
	require.NoError(t, err)
	assert.Equal(t, endpoints.DisabledByPartner, mod.Status)

	for i := 2; i <= endpoints.MaxPerPartner; i++ {
		require.NoError(t, s.Create(ctx, endpoints.New(fmt.Sprintf("we_%d", i), acme, endpoints.Registration{URL: "https://h.example/"}, t0.Add(time.Duration(i)*time.Second))))
	}
	assert.ErrorIs(t, s.Create(ctx, endpoints.New("we_x", acme, endpoints.Registration{URL: "https://h.example/"}, t0)), endpoints.ErrTooMany)
	list, err := s.List(ctx, acme)
	require.NoError(t, err)
	require.Len(t, list, endpoints.MaxPerPartner)
	assert.Equal(t, "we_1", list[0].ID)

	require.NoError(t, s.Delete(ctx, acme, "we_1"))
	_, err = s.Get(ctx, acme, "we_1")
	assert.ErrorIs(t, err, endpoints.ErrNotFound)
	list, err = s.List(ctx, other)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func newDelivery(id, endpoint, status string, created time.Time) store.Delivery {
	return store.Delivery{ID: id, EventID: "evt_" + id, EventType: "case.opened", EndpointID: endpoint,
		Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: status,
		Trigger: store.TriggerScheduled, CreatedAt: created, NextAttemptAt: created, Event: delivery.Event{EventID: "x"}}
}

func TestDeliveryScheduleLeasesAndCompletion(t *testing.T) {
	ctx := context.Background()
	s := store.NewDeliveries(redistest.NewClient(t), store.DeliveriesConfig{Shards: 1, Retention: time.Hour})
	d := newDelivery("dlv_a", "we_1", store.StatusScheduled, t0)
	created, err := s.Create(ctx, d)
	require.NoError(t, err)
	require.True(t, created)
	created, err = s.Create(ctx, d)
	require.NoError(t, err)
	assert.False(t, created, "idempotent by id")

	got, err := s.Claim(ctx, 0, t0.Add(-time.Second), time.Minute, 10, "tok1")
	require.NoError(t, err)
	assert.Empty(t, got, "not due yet")

	got, err = s.Claim(ctx, 0, t0, time.Minute, 10, "tok1")
	require.NoError(t, err)
	require.Len(t, got, 1)
	got, err = s.Claim(ctx, 0, t0.Add(30*time.Second), time.Minute, 10, "tok2")
	require.NoError(t, err)
	assert.Empty(t, got, "leased to tok1")

	// tok1's sender dies; the lease lapses and tok2 takes over.
	got, err = s.Claim(ctx, 0, t0.Add(time.Minute), time.Minute, 10, "tok2")
	require.NoError(t, err)
	require.Len(t, got, 1)

	d = got[0]
	d.Attempts, d.NextAttemptAt = 1, t0.Add(2*time.Minute)
	assert.ErrorIs(t, s.Complete(ctx, "tok1", d, &store.Attempt{Number: 1}), store.ErrLeaseLost)
	require.NoError(t, s.Complete(ctx, "tok2", d, &store.Attempt{Number: 1, Status: 500, Outcome: "failure"}))

	got, err = s.Claim(ctx, 0, t0.Add(119*time.Second), time.Minute, 10, "tok3")
	require.NoError(t, err)
	assert.Empty(t, got, "rescheduled for the next attempt")
	got, err = s.Claim(ctx, 0, t0.Add(2*time.Minute), time.Minute, 10, "tok3")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 1, got[0].Attempts)

	d = got[0]
	d.Attempts, d.Status = 2, store.StatusDelivered
	require.NoError(t, s.Complete(ctx, "tok3", d, &store.Attempt{Number: 2, Status: 204, Outcome: "success"}))
	got, err = s.Claim(ctx, 0, t0.Add(time.Hour), time.Minute, 10, "tok4")
	require.NoError(t, err)
	assert.Empty(t, got, "finished deliveries leave the schedule")

	atts, err := s.Attempts(ctx, "dlv_a")
	require.NoError(t, err)
	require.Len(t, atts, 2)
	assert.Equal(t, 500, atts[0].Status)
	assert.Equal(t, 204, atts[1].Status)

	read, err := s.Get(ctx, acme, "dlv_a")
	require.NoError(t, err)
	assert.Equal(t, store.StatusDelivered, read.Status)
	_, err = s.Get(ctx, other, "dlv_a")
	assert.ErrorIs(t, err, store.ErrDeliveryNotFound)
}

func TestDeliveryListFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	s := store.NewDeliveries(redistest.NewClient(t), store.DefaultDeliveriesConfig())
	for i := range 7 {
		status := store.StatusScheduled
		if i%2 == 0 {
			status = store.StatusDelivered
		}
		d := newDelivery(fmt.Sprintf("dlv_%d", i), fmt.Sprintf("we_%d", i%3), status, t0.Add(time.Duration(i)*time.Minute))
		_, err := s.Create(ctx, d)
		require.NoError(t, err)
	}
	// Two in the same millisecond still page correctly.
	_, err := s.Create(ctx, newDelivery("dlv_7", "we_0", store.StatusScheduled, t0.Add(6*time.Minute)))
	require.NoError(t, err)

	var ids []string
	var cur *store.Cursor
	for {
		page, next, err := s.List(ctx, acme, store.Filter{}, cur, 3)
		require.NoError(t, err)
		for _, d := range page {
			ids = append(ids, d.ID)
		}
		if next == nil {
			break
		}
		cur = next
	}
	assert.Equal(t, []string{"dlv_7", "dlv_6", "dlv_5", "dlv_4", "dlv_3", "dlv_2", "dlv_1", "dlv_0"}, ids)

	page, _, err := s.List(ctx, acme, store.Filter{Status: store.StatusDelivered, EndpointID: "we_0"}, nil, 10)
	require.NoError(t, err)
	require.Len(t, page, 2) // 0 and 6
	page, _, err = s.List(ctx, acme, store.Filter{Since: t0.Add(2 * time.Minute), Until: t0.Add(4 * time.Minute)}, nil, 10)
	require.NoError(t, err)
	assert.Len(t, page, 2) // 2 and 3
	page, _, err = s.List(ctx, acme, store.Filter{EventID: "evt_dlv_5"}, nil, 10)
	require.NoError(t, err)
	assert.Len(t, page, 1)
	page, _, err = s.List(ctx, other, store.Filter{}, nil, 10)
	require.NoError(t, err)
	assert.Empty(t, page)
}

// CompleteAll writes a group of completions in one round trip, each under
// its own lease: one whose lease was taken changes nothing, the others are
// recorded. A server that lost its scripts (a restart) is answered too.
func TestCompleteAllChecksEachLeaseAndSurvivesAScriptFlush(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.NewDeliveries(rdb, store.DeliveriesConfig{Shards: 1, Retention: time.Hour})
	for _, id := range []string{"dlv_a", "dlv_b", "dlv_c"} {
		_, err := s.Create(ctx, newDelivery(id, "we_1", store.StatusScheduled, t0))
		require.NoError(t, err)
	}
	mine, err := s.Claim(ctx, 0, t0, time.Minute, 2, "mine")
	require.NoError(t, err)
	require.Len(t, mine, 2)
	theirs, err := s.Claim(ctx, 0, t0, time.Minute, 1, "theirs")
	require.NoError(t, err)
	require.Len(t, theirs, 1)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())

	done, retry, taken := mine[0], mine[1], theirs[0]
	done.Attempts, done.Status = 1, store.StatusDelivered
	retry.Attempts, retry.NextAttemptAt = 1, t0.Add(2*time.Minute)
	taken.Attempts, taken.Status = 1, store.StatusDelivered
	errs := s.CompleteAll(ctx, "mine", []store.Completion{
		{Delivery: done, Attempt: &store.Attempt{Number: 1, Status: 204, Outcome: "success"}},
		{Delivery: taken, Attempt: &store.Attempt{Number: 1, Status: 204, Outcome: "success"}},
		{Delivery: retry, Attempt: &store.Attempt{Number: 1, Status: 503, Outcome: "failure"}},
	})
	require.Len(t, errs, 3)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], store.ErrLeaseLost)
	assert.NoError(t, errs[2])

	for id, want := range map[string]struct {
		status   string
		attempts int
	}{done.ID: {store.StatusDelivered, 1}, retry.ID: {store.StatusScheduled, 1}, taken.ID: {store.StatusScheduled, 0}} {
		d, err := s.Get(ctx, acme, id)
		require.NoError(t, err)
		assert.Equal(t, want.status, d.Status, id)
		atts, err := s.Attempts(ctx, id)
		require.NoError(t, err)
		assert.Len(t, atts, want.attempts, id)
	}
	got, err := s.Claim(ctx, 0, t0.Add(2*time.Minute), time.Minute, 10, "later")
	require.NoError(t, err)
	ids := []string{}
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	assert.ElementsMatch(t, []string{retry.ID, taken.ID}, ids, "the retry comes due; the delivered one left the schedule; the other sender's lease lapsed")
}

// CreateAll stores and schedules a record's deliveries in one round trip,
// idempotently by id, indexed for the partner, and after a script flush.
func TestCreateAllIsIdempotentAndIndexes(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.NewDeliveries(rdb, store.DeliveriesConfig{Shards: 4, Retention: time.Hour})
	_, err := s.Create(ctx, newDelivery("dlv_b", "we_2", store.StatusScheduled, t0))
	require.NoError(t, err)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())

	created, err := s.CreateAll(ctx, []store.Delivery{
		newDelivery("dlv_a", "we_1", store.StatusScheduled, t0),
		newDelivery("dlv_b", "we_2", store.StatusScheduled, t0),
		newDelivery("dlv_c", "we_3", store.StatusScheduled, t0.Add(time.Millisecond)),
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, created)

	listed, _, err := s.List(ctx, acme, store.Filter{}, nil, 10)
	require.NoError(t, err)
	ids := []string{}
	for _, d := range listed {
		ids = append(ids, d.ID)
	}
	assert.ElementsMatch(t, []string{"dlv_a", "dlv_b", "dlv_c"}, ids)
	due := 0
	for n := range s.Shards() {
		got, err := s.Claim(ctx, n, t0.Add(time.Second), time.Minute, 10, "tok")
		require.NoError(t, err)
		due += len(got)
	}
	assert.Equal(t, 3, due, "each scheduled once")
}

// A partner's deliveries by outcome, hour by hour, are the deliveries the
// listing finds for the same hour and status: every creation counts once
// (a second Create of the same id does not), every change of status moves
// the count, and a completion whose lease was lost, or that only
// reschedules, changes nothing. Another partner's deliveries are not in
// them, and a delivery older than the counts' life starts no stray hash.
func TestOutcomesAreTheListingsCountsHourByHour(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.NewDeliveries(rdb, store.DefaultDeliveriesConfig())
	now := time.Now().UTC()
	hour := now.Truncate(time.Hour)
	// Nine deliveries over the current hour and the two before it, and
	// one of another partner.
	var ids []string
	for i := range 9 {
		d := newDelivery(fmt.Sprintf("dlv_o%d", i), "we_1", store.StatusScheduled, hour.Add(-time.Duration(i%3)*time.Hour).Add(time.Duration(i)*time.Second))
		d.NextAttemptAt = now.Add(-time.Minute)
		created, err := s.Create(ctx, d)
		require.NoError(t, err)
		require.True(t, created)
		ids = append(ids, d.ID)
	}
	again := newDelivery("dlv_o0", "we_1", store.StatusScheduled, hour)
	created, err := s.Create(ctx, again)
	require.NoError(t, err)
	require.False(t, created, "the same delivery again counts nothing")
	theirs := newDelivery("dlv_theirs", "we_9", store.StatusScheduled, hour)
	theirs.Tenant, theirs.Environment, theirs.PartnerID = other.Tenant, other.Environment, other.PartnerID
	_, err = s.Create(ctx, theirs)
	require.NoError(t, err)

	claimed := map[string]store.Delivery{}
	for n := range s.Shards() {
		got, err := s.Claim(ctx, n, now, time.Minute, 100, "tok")
		require.NoError(t, err)
		for _, d := range got {
			claimed[d.ID] = d
		}
	}
	require.Len(t, claimed, 10)
	// Their outcomes: delivered, failed, cancelled, retried (still
	// scheduled), held back without an attempt (still scheduled).
	outcome := map[int]string{0: store.StatusDelivered, 1: store.StatusDelivered, 2: store.StatusFailed,
		3: store.StatusCancelled, 4: store.StatusScheduled, 5: store.StatusDelivered, 6: store.StatusFailed}
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	for i, status := range outcome {
		d := claimed[ids[i]]
		d.Status = status
		var a *store.Attempt
		if status != store.StatusCancelled {
			d.Attempts = 1
			a = &store.Attempt{Number: 1, Outcome: "failure"}
		}
		if status == store.StatusScheduled {
			d.NextAttemptAt = now.Add(time.Hour)
		}
		require.NoError(t, s.Complete(ctx, "tok", d, a))
	}
	held := claimed[ids[7]]
	held.NextAttemptAt = now.Add(time.Second)
	require.NoError(t, s.Complete(ctx, "tok", held, nil))
	lost := claimed[ids[8]]
	lost.Status = store.StatusDelivered
	require.ErrorIs(t, s.Complete(ctx, "not-the-lease", lost, &store.Attempt{Number: 1}), store.ErrLeaseLost)
	// Completing a delivered one again under a spent lease changes nothing either.
	done := claimed[ids[0]]
	done.Status = store.StatusFailed
	require.ErrorIs(t, s.Complete(ctx, "tok", done, nil), store.ErrLeaseLost)

	hours, err := s.Outcomes(ctx, acme, now, 24)
	require.NoError(t, err)
	require.Len(t, hours, 24)
	assert.Equal(t, hour.Add(-23*time.Hour), hours[0].Start)
	assert.Equal(t, hour, hours[23].Start, "the current clock hour last")
	var total int64
	for _, h := range hours {
		total += h.Total()
		for _, status := range []string{store.StatusScheduled, store.StatusDelivered, store.StatusFailed, store.StatusCancelled} {
			listed, _, err := s.List(ctx, acme, store.Filter{Status: status, Since: h.Start, Until: h.Start.Add(time.Hour)}, nil, 100)
			require.NoError(t, err)
			counted := map[string]int64{store.StatusScheduled: h.Scheduled, store.StatusDelivered: h.Delivered,
				store.StatusFailed: h.Failed, store.StatusCancelled: h.Cancelled}[status]
			assert.EqualValues(t, len(listed), counted, "%s %s", h.Start, status)
		}
	}
	assert.EqualValues(t, 9, total, "acme's nine, once each")
	assert.Equal(t, store.OutcomeHour{Start: hour, OutcomeCounts: store.OutcomeCounts{Delivered: 1, Failed: 1, Cancelled: 1}}, hours[23], "0, 3 and 6 were created this hour")

	week, err := s.Outcomes(ctx, acme, now, store.HistoryHours)
	require.NoError(t, err)
	require.Len(t, week, store.HistoryHours)
	assert.Equal(t, hours, week[store.HistoryHours-24:], "the last day of the week is the day")
	mine, err := s.Outcomes(ctx, other, now, 24)
	require.NoError(t, err)
	assert.Equal(t, store.OutcomeHour{Start: hour, OutcomeCounts: store.OutcomeCounts{Scheduled: 1}}, mine[23], "globex's own one")
	_, err = s.Outcomes(ctx, acme, now, store.HistoryHours+1)
	assert.Error(t, err)

	// A delivery created nine days ago is past the counts' life: counting
	// it leaves nothing behind.
	old := newDelivery("dlv_old", "we_1", store.StatusScheduled, now.Add(-9*24*time.Hour))
	_, err = s.Create(ctx, old)
	require.NoError(t, err)
	keys, err := rdb.Keys(ctx, "pc:wh:*:outcomes:*").Result()
	require.NoError(t, err)
	day := now.Add(-9*24*time.Hour).Unix() / 86400
	for _, k := range keys {
		assert.NotContains(t, k, fmt.Sprintf(":%d", day), "no hash for a day past its life")
	}
}

// A recovery's replays are counted by the status each has now: a replay's
// creation counts it once (a second Create of the same id does not), each
// change of status moves it, a completion under a lost lease changes
// nothing, and deliveries that are no replay of it are not in its counts.
// A replay stored before the counts existed (no 'rc' mark) moves nothing.
func TestRecoveryReplaysAreCountedByOutcome(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.NewDeliveries(rdb, store.DefaultDeliveriesConfig())
	now := time.Now().UTC()
	replay := func(id, recovery string) store.Delivery {
		d := newDelivery(id, "we_1", store.StatusScheduled, now.Add(-time.Minute))
		d.Trigger, d.ReplayOf, d.RecoveryID = store.TriggerRecovery, "dlv_orig_"+id, recovery
		return d
	}
	for i := range 5 {
		_, err := s.Create(ctx, replay(fmt.Sprintf("dlv_rp%d", i), "rcv_a"))
		require.NoError(t, err)
	}
	created, err := s.Create(ctx, replay("dlv_rp0", "rcv_a"))
	require.NoError(t, err)
	require.False(t, created)
	_, err = s.Create(ctx, replay("dlv_rpb", "rcv_b"))
	require.NoError(t, err)
	_, err = s.Create(ctx, newDelivery("dlv_plain", "we_1", store.StatusScheduled, now.Add(-time.Minute)))
	require.NoError(t, err)

	got, err := s.RecoveryReplays(ctx, "rcv_a")
	require.NoError(t, err)
	assert.Equal(t, store.OutcomeCounts{Scheduled: 5}, got)

	claimed := map[string]store.Delivery{}
	for n := range s.Shards() {
		ds, err := s.Claim(ctx, n, now, time.Minute, 100, "tok")
		require.NoError(t, err)
		for _, d := range ds {
			claimed[d.ID] = d
		}
	}
	require.Len(t, claimed, 7)
	for id, status := range map[string]string{"dlv_rp0": store.StatusDelivered, "dlv_rp1": store.StatusDelivered,
		"dlv_rp2": store.StatusFailed, "dlv_rp3": store.StatusScheduled, "dlv_rpb": store.StatusDelivered, "dlv_plain": store.StatusDelivered} {
		d := claimed[id]
		d.Status, d.Attempts = status, 1
		if status == store.StatusScheduled {
			d.NextAttemptAt = now.Add(time.Hour)
		}
		require.NoError(t, s.Complete(ctx, "tok", d, &store.Attempt{Number: 1, Outcome: "failure"}))
	}
	lost := claimed["dlv_rp4"]
	lost.Status = store.StatusDelivered
	require.ErrorIs(t, s.Complete(ctx, "not-the-lease", lost, nil), store.ErrLeaseLost)

	got, err = s.RecoveryReplays(ctx, "rcv_a")
	require.NoError(t, err)
	assert.Equal(t, store.OutcomeCounts{Scheduled: 2, Delivered: 2, Failed: 1}, got, "rp3 retrying and rp4 still pending")
	got, err = s.RecoveryReplays(ctx, "rcv_b")
	require.NoError(t, err)
	assert.Equal(t, store.OutcomeCounts{Delivered: 1}, got)
	got, err = s.RecoveryReplays(ctx, "rcv_none")
	require.NoError(t, err)
	assert.Zero(t, got)

	// A replay without the mark (as one stored before the counts existed,
	// and so never counted) moves nothing when it changes status.
	old := claimed["dlv_rp4"]
	for n := range s.Shards() {
		keys, err := rdb.Keys(ctx, fmt.Sprintf("pc:wh:{d:%d}:dlv:dlv_rp4", n)).Result()
		require.NoError(t, err)
		for _, k := range keys {
			require.NoError(t, rdb.HDel(ctx, k, "rc").Err())
		}
	}
	old.Status = store.StatusCancelled
	require.NoError(t, s.Complete(ctx, "tok", old, nil))
	got, err = s.RecoveryReplays(ctx, "rcv_a")
	require.NoError(t, err)
	assert.Equal(t, store.OutcomeCounts{Scheduled: 2, Delivered: 2, Failed: 1}, got, "nothing moved for the unmarked replay")
}
