package policy_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

func TestOverlayPrefersTheResourceAndNeverTakesAway(t *testing.T) {
	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	b1 := policy.Span{Start: at, End: at.Add(time.Hour)}
	b2 := policy.Span{Start: at.Add(24 * time.Hour), End: at.Add(25 * time.Hour)}
	const cr = "CompatibilityFamily pcourt/v2-cases"
	tests := []struct {
		name      string
		resources map[inventory.Family]policy.Settings
		durable   map[inventory.Family]policy.Settings
		want      map[inventory.Family]policy.Settings
	}{
		{"neither", nil, nil, map[inventory.Family]policy.Settings{}},
		{"the store alone", nil,
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15")}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15")}}},
		{"the resource's date and stage win",
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-02-01"), Stage: policy.Brownout, Source: cr}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15"), Stage: policy.Retired}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-02-01"), Stage: policy.Brownout, Source: cr}}},
		{"unset fields fall back to the store",
			map[inventory.Family]policy.Settings{inventory.V2Cases: {Source: cr}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15"), Stage: policy.Retired}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15"), Stage: policy.Retired}}},
		{"brownouts of both, the later extension of each integration",
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15"), Source: cr, Brownouts: []policy.Span{b1},
				Extensions: map[string]policy.Date{"cred_a": date(t, "2026-09-01"), "cred_b": date(t, "2026-08-01")}}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {Brownouts: []policy.Span{b2},
				Extensions: map[string]policy.Date{"cred_a": date(t, "2026-08-15"), "cred_b": date(t, "2026-10-01"), "partner-x": date(t, "2026-11-01")}}},
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15"), Source: cr, Brownouts: []policy.Span{b1, b2},
				Extensions: map[string]policy.Date{"cred_a": date(t, "2026-09-01"), "cred_b": date(t, "2026-10-01"), "partner-x": date(t, "2026-11-01")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, policy.Overlay(tc.resources, tc.durable))
		})
	}
}

func TestCurrentPutsTheResourcesOverTheAdminLayer(t *testing.T) {
	ctx := context.Background()
	layers := policy.Layers{Admin: map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-01-15")}}}
	c := policy.NewCurrent(policy.Env{CanonicalRoutes: "true"}, func(context.Context) (policy.Layers, error) {
		return layers, nil
	}, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, "store", c.Policy().Window(inventory.V2Cases).Source)

	layers.Resources = map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-03-01"), Source: "CompatibilityFamily pcourt/cases"}}
	require.NoError(t, c.Refresh(ctx))
	w := c.Policy().Window(inventory.V2Cases)
	require.Equal(t, "2026-03-01", w.GA.String())
	require.Equal(t, "CompatibilityFamily pcourt/cases", w.Source)

	layers.Admin[inventory.V2Cases] = policy.Settings{GA: date(t, "2026-02-01")}
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, "2026-03-01", c.Policy().Window(inventory.V2Cases).GA.String(), "an admin change keeps the resource on top")

	layers.Resources = nil
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, "2026-02-01", c.Policy().Window(inventory.V2Cases).GA.String(), "the resource deleted: the admin layer again")
}

func TestMilestones(t *testing.T) {
	ga := date(t, "2026-01-15")
	end := ga.Time().Add(policy.BaseWindow) // 2026-07-14
	day := 24 * time.Hour
	ext := date(t, "2026-10-01")
	window := func(stage policy.Stage) *policy.Window {
		p := policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{inventory.V2Cases: {
			GA: ga, Stage: stage, Extensions: map[string]policy.Date{"cred_ext": ext},
		}})
		return p.Window(inventory.V2Cases)
	}
	require.Equal(t, []policy.Due{
		{policy.WindowStart, ga.Time()}, {policy.Days90, end.Add(-90 * day)}, {policy.Days30, end.Add(-30 * day)}, {policy.Days7, end.Add(-7 * day)},
	}, window(policy.Warn).Schedule(nil, nil), "no retirement notice unless the family is retired")
	require.Equal(t, policy.Due{Milestone: policy.Retirement, At: end}, window(policy.Retired).Schedule(nil, nil)[4])
	require.Equal(t, ext.Time().Add(-7*day), window(policy.Warn).Schedule(nil, []string{"cred_ext"})[3].At, "an extension moves the countdown")
	require.Empty(t, policy.Resolve(policy.Env{}, nil).Window(inventory.V2Cases).Schedule(nil, nil), "no date, no milestones")

	// A route that joined the family on 2026-03-01 counts its own window
	// from that day; one listed since before general availability has the
	// family's.
	later := &inventory.Route{Pattern: "/api/v2/cases/{caseId}/later", Family: inventory.V2Cases, Since: "2026-03-01"}
	since := date(t, "2026-03-01").Time()
	require.Equal(t, []policy.Due{
		{policy.WindowStart, since}, {policy.Days90, since.Add(policy.BaseWindow - 90*day)},
		{policy.Days30, since.Add(policy.BaseWindow - 30*day)}, {policy.Days7, since.Add(policy.BaseWindow - 7*day)},
	}, window(policy.Warn).Schedule(later, nil))
	require.Equal(t, policy.Due{Milestone: policy.Retirement, At: since.Add(policy.BaseWindow)}, window(policy.Retired).Schedule(later, nil)[4])
	cur, _ := window(policy.Warn).CurrentMilestone(later, nil, end.Add(-90*day))
	require.Equal(t, policy.WindowStart, cur.Milestone, "the family's 90 days left is still the later route's start")
	earlier := &inventory.Route{Pattern: "/api/v2/cases/{caseId}/earlier", Family: inventory.V2Cases, Since: "2025-12-01"}
	require.Equal(t, window(policy.Warn).Schedule(nil, nil), window(policy.Warn).Schedule(earlier, nil))

	tests := []struct {
		name      string
		stage     policy.Stage
		now       time.Time
		current   policy.Milestone // "" none
		nextAfter policy.Milestone // "" none
	}{
		{"before the window", policy.Warn, ga.Time().Add(-time.Second), "", policy.WindowStart},
		{"at the start", policy.Warn, ga.Time(), policy.WindowStart, policy.Days90},
		{"between start and 90 days left", policy.Warn, end.Add(-91 * day), policy.WindowStart, policy.Days90},
		{"90 days left", policy.Warn, end.Add(-90 * day), policy.Days90, policy.Days30},
		{"a long outage later: 30 days left, not 90", policy.Warn, end.Add(-29 * day), policy.Days30, policy.Days7},
		{"7 days left", policy.Warn, end.Add(-7 * day), policy.Days7, ""},
		{"after the end in warn", policy.Warn, end.Add(day), policy.Days7, ""},
		{"retired: the retirement at the end", policy.Retired, end, policy.Retirement, ""},
		{"retired, just before the end", policy.Retired, end.Add(-time.Second), policy.Days7, policy.Retirement},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := window(tc.stage)
			cur, ok := w.CurrentMilestone(nil, nil, tc.now)
			require.Equal(t, tc.current != "", ok)
			require.Equal(t, tc.current, cur.Milestone)
			next, ok := w.NextMilestone(nil, nil, tc.now)
			require.Equal(t, tc.nextAfter != "", ok)
			require.Equal(t, tc.nextAfter, next.Milestone)
		})
	}
}
