package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

func date(t *testing.T, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}

func TestFamilySettingsRoundTrip(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)

	got, err := s.Load(ctx, inventory.V2Cases)
	require.NoError(t, err)
	require.Equal(t, policy.Settings{}, got, "nothing saved: the spec's default")

	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	want := policy.Settings{
		GA:         date(t, "2026-01-15"),
		Stage:      policy.Brownout,
		Brownouts:  []policy.Span{{Start: at, End: at.Add(30 * time.Minute)}},
		Extensions: map[string]policy.Date{"cred_abc": date(t, "2026-09-30"), "partner-x": date(t, "2026-10-31")},
	}
	require.NoError(t, s.Save(ctx, inventory.V2Cases, want))
	got, err = s.Load(ctx, inventory.V2Cases)
	require.NoError(t, err)
	require.Equal(t, want, got)

	all, err := s.LoadAll(ctx)
	require.NoError(t, err)
	require.Equal(t, want, all[inventory.V2Cases])
	require.Equal(t, policy.Settings{}, all[inventory.V2Filings], "families are apart")

	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		require.Regexp(t, `^pc:edge:`, k, "the edge writes under its own prefix")
	}
}

func TestExtensionsCanBeLengthenedNeverShortened(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)
	f := inventory.V2Filings
	require.NoError(t, s.Save(ctx, f, policy.Settings{GA: date(t, "2026-01-15")}))
	require.NoError(t, s.ApproveExtension(ctx, f, "cred_abc", date(t, "2026-09-30")))
	require.NoError(t, s.ApproveExtension(ctx, f, "cred_abc", date(t, "2026-10-31")), "lengthened")
	require.NoError(t, s.ApproveExtension(ctx, f, "cred_abc", date(t, "2026-10-31")), "the same date again")

	before, err := s.Load(ctx, f)
	require.NoError(t, err)
	tests := []struct {
		name   string
		change func() error
		want   store.ShortenedError
	}{
		{"an earlier date", func() error { return s.ApproveExtension(ctx, f, "cred_abc", date(t, "2026-10-30")) },
			store.ShortenedError{Family: f, Integration: "cred_abc", Current: date(t, "2026-10-31"), Requested: date(t, "2026-10-30")}},
		{"settings without it", func() error { return s.Save(ctx, f, policy.Settings{GA: date(t, "2026-01-15"), Stage: policy.Retired}) },
			store.ShortenedError{Family: f, Integration: "cred_abc", Current: date(t, "2026-10-31")}},
		{"settings with it earlier", func() error {
			return s.Save(ctx, f, policy.Settings{Stage: policy.Retired, Extensions: map[string]policy.Date{"cred_abc": date(t, "2026-08-01")}})
		}, store.ShortenedError{Family: f, Integration: "cred_abc", Current: date(t, "2026-10-31"), Requested: date(t, "2026-08-01")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.change()
			require.ErrorIs(t, err, store.ErrShortened)
			var se *store.ShortenedError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.want, *se)
			after, err := s.Load(ctx, f)
			require.NoError(t, err)
			require.Equal(t, before, after, "a refused change changes nothing")
		})
	}
}

func TestSaveRefusesInvalidSettings(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	require.Error(t, s.Save(ctx, inventory.V2Cases, policy.Settings{Stage: "paused"}))
	require.Error(t, s.Save(ctx, "v3-cases", policy.Settings{}))
	got, err := s.Load(ctx, inventory.V2Cases)
	require.NoError(t, err)
	require.Equal(t, policy.Settings{}, got)
}

func TestLedgerMergesBatchesInAnyOrder(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	t0 := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	answer, read := "/api/v2/cases/{caseId}/answer", "/api/v2/cases/{caseId}"

	// A later batch arrives first (another replica flushed sooner).
	require.NoError(t, s.AddUses(ctx, []store.Use{
		{Subject: "cred_a", Route: answer, First: t0.Add(time.Hour), Last: t0.Add(2 * time.Hour), Count: 3},
		{Subject: store.Anonymous, Route: read, First: t0, Last: t0, Count: 1},
	}))
	require.NoError(t, s.AddUses(ctx, []store.Use{
		{Subject: "cred_a", Route: answer, First: t0, Last: t0.Add(time.Minute), Count: 2},
		{Subject: "cred_a", Route: read, First: t0.Add(3 * time.Hour), Last: t0.Add(3 * time.Hour), Count: 1},
	}))
	require.NoError(t, s.AddUses(ctx, nil))

	uses, err := s.Uses(ctx, "cred_a")
	require.NoError(t, err)
	for i := range uses {
		require.Len(t, uses[i].Days, 30, "the last 30 days, read back")
		uses[i].Days = nil
	}
	require.Equal(t, []store.Use{
		{Subject: "cred_a", Route: read, First: t0.Add(3 * time.Hour), Last: t0.Add(3 * time.Hour), Count: 1},
		{Subject: "cred_a", Route: answer, First: t0, Last: t0.Add(2 * time.Hour), Count: 5},
	}, uses)
	subjects, err := s.Subjects(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{store.Anonymous, "cred_a"}, subjects)
	none, err := s.Uses(ctx, "cred_nobody")
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestLedgerReportsAnUnreachableRedis(t *testing.T) {
	srv := redistest.Start(t)
	s := store.New(srv.Client(t))
	srv.Stop()
	err := s.AddUses(context.Background(), []store.Use{{Subject: "cred_a", Route: "/api/v2/rules/current", First: time.Now(), Last: time.Now(), Count: 1}})
	require.Error(t, err)
}

// The ledger counts the calls of the last 24 hours and 30 days, and keeps
// the request id of the latest call as a sample, whichever batch arrives
// first.
func TestLedgerCountsRecentCallsAndKeepsASample(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	now := time.Now().UTC()
	hour := func(d time.Duration) int64 { return now.Add(-d).Unix() / 3600 }
	read := "/api/v2/cases/{caseId}"
	require.NoError(t, s.AddUses(ctx, []store.Use{{Subject: "cred_a", Route: read, First: now.Add(-time.Hour), Last: now, Count: 4, Sample: "req_latest",
		Hours: map[int64]int64{hour(0): 3, hour(time.Hour): 1}}}))
	require.NoError(t, s.AddUses(ctx, []store.Use{{Subject: "cred_a", Route: read, First: now.Add(-72 * time.Hour), Last: now.Add(-26 * time.Hour), Count: 7, Sample: "req_older",
		Hours: map[int64]int64{hour(26 * time.Hour): 2, hour(72 * time.Hour): 5}}}))

	uses, err := s.UsesAt(ctx, "cred_a", now)
	require.NoError(t, err)
	require.Len(t, uses, 1)
	require.Equal(t, int64(11), uses[0].Count)
	require.Equal(t, int64(4), uses[0].Last24h)
	require.Equal(t, int64(11), uses[0].Last30d)
	require.Equal(t, "req_latest", uses[0].Sample, "the older batch, written later, does not replace the latest call's id")
	days := uses[0].Days
	require.Len(t, days, 30)
	require.Equal(t, now.Truncate(24*time.Hour), days[29].Day, "today last")
	require.Equal(t, now.Truncate(24*time.Hour).Add(-29*24*time.Hour), days[0].Day)
	want := map[time.Time]int64{}
	for ago, n := range map[time.Duration]int64{0: 3, time.Hour: 1, 26 * time.Hour: 2, 72 * time.Hour: 5} {
		want[now.Add(-ago).Truncate(time.Hour).Truncate(24*time.Hour)] += n
	}
	for _, d := range days {
		require.Equal(t, want[d.Day], d.Calls, "the calls of %s", d.Day)
	}

	later, err := s.UsesAt(ctx, "cred_a", now.Add(40*24*time.Hour))
	require.NoError(t, err)
	require.Zero(t, later[0].Last24h)
	require.Zero(t, later[0].Last30d, "nothing in the 30 days before")
}

// A reader never sees a batch half merged: while replicas flush, every
// read finds the recent counts equal to the total, as it would after the
// last flush. (The console showed a route with 0 calls in the last 24
// hours when it read between a batch's record and its hour counts.)
func TestLedgerReadsNeverSeeAHalfMergedBatch(t *testing.T) {
	ctx := context.Background()
	s := store.New(redistest.NewClient(t))
	now := time.Now().UTC()
	route := "/api/v2/webhooks/deliveries"
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 300; i++ {
			err := s.AddUses(ctx, []store.Use{{Subject: "cred_a", Route: route, First: now, Last: now, Count: 1, Hours: map[int64]int64{now.Unix() / 3600: 1}}})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			require.NoError(t, err)
			return
		default:
		}
		uses, err := s.UsesAt(ctx, "cred_a", now)
		require.NoError(t, err)
		for _, u := range uses {
			require.Equal(t, u.Count, u.Last24h, "the last 24 hours hold every call")
			require.Equal(t, u.Count, u.Last30d, "the last 30 days hold every call")
		}
	}
}
