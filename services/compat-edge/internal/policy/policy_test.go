package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

func date(t *testing.T, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}

func TestParseDateIsStrict(t *testing.T) {
	d, err := policy.ParseDate("2026-01-15")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), d.Time())
	require.Equal(t, "2026-01-15", d.String())
	for _, bad := range []string{"", "2026-1-15", "2026-01-5", "2026-02-30", "2026-13-01", "15-01-2026",
		"2026-01-15T00:00:00Z", " 2026-01-15", "2026-01-15 ", "2026/01/15", "+2026-01-15"} {
		_, err := policy.ParseDate(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestResolvePrecedence(t *testing.T) {
	env := func(kv ...string) policy.Env {
		m := map[string]string{policy.EnvCanonicalRoutes: "true"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return policy.EnvFrom(func(k string) string { return m[k] })
	}
	tests := []struct {
		name       string
		env        policy.Env
		durable    map[inventory.Family]policy.Settings
		want       string // the v2-cases date, "" for none
		wantSource string
		invalid    string
	}{
		{"nothing set", env(), nil, "", "", ""},
		{"the shared cohort", env("SERVICE_API_COMPATIBILITY_START", "2026-03-01"), nil, "2026-03-01", "SERVICE_API_COMPATIBILITY_START", ""},
		{"the family's variable over the cohort", env("SERVICE_API_COMPATIBILITY_START", "2026-03-01", "SERVICE_API_V2_CASES_GA", "2026-01-15"), nil,
			"2026-01-15", "SERVICE_API_V2_CASES_GA", ""},
		{"the store over both", env("SERVICE_API_COMPATIBILITY_START", "2026-03-01", "SERVICE_API_V2_CASES_GA", "2026-01-15"),
			map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-05-01")}}, "2026-05-01", "store", ""},
		{"a store without a date leaves it to the environment", env("SERVICE_API_V2_CASES_GA", "2026-01-15"),
			map[inventory.Family]policy.Settings{inventory.V2Cases: {Stage: policy.Retired}}, "2026-01-15", "SERVICE_API_V2_CASES_GA", ""},
		{"an invalid family date does not fall through to the cohort", env("SERVICE_API_COMPATIBILITY_START", "2026-03-01", "SERVICE_API_V2_CASES_GA", "2026-1-15"), nil,
			"", "SERVICE_API_V2_CASES_GA", "2026-1-15"},
		{"an invalid cohort date", env("SERVICE_API_COMPATIBILITY_START", "March"), nil, "", "SERVICE_API_COMPATIBILITY_START", "March"},
		{"another family's variable is not this one's", env("SERVICE_API_V2_FILINGS_GA", "2026-01-15"), nil, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := policy.Resolve(tc.env, tc.durable).Window(inventory.V2Cases)
			require.Equal(t, tc.want, w.GA.String())
			require.Equal(t, tc.wantSource, w.Source)
			require.Equal(t, tc.invalid, w.Invalid)
		})
	}
}

func TestEnabledOnlyByExactlyTrue(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "": false, "TRUE": false, "True": false, "1": false, "yes": false, " true": false} {
		p := policy.Resolve(policy.Env{CanonicalRoutes: value}, nil)
		require.Equal(t, want, p.Enabled, "%q", value)
	}
}

func TestDecide(t *testing.T) {
	ga := date(t, "2026-01-15")
	base := ga.Time().Add(policy.BaseWindow) // 2026-07-14
	ext := date(t, "2026-10-01")
	route := func(pattern string) *inventory.Route {
		for i := range inventory.Routes {
			if inventory.Routes[i].Pattern == pattern {
				return &inventory.Routes[i]
			}
		}
		t.Fatalf("no row %s", pattern)
		return nil
	}
	answer := route("/api/v2/cases/{caseId}/answer")
	brownout := policy.Span{Start: base.Add(48 * time.Hour), End: base.Add(49 * time.Hour)}
	early := policy.Span{Start: ga.Time().Add(24 * time.Hour), End: ga.Time().Add(25 * time.Hour)}
	straddling := policy.Span{Start: base.Add(-time.Hour), End: base.Add(time.Hour)}
	settings := func(stage policy.Stage, spans ...policy.Span) map[inventory.Family]policy.Settings {
		return map[inventory.Family]policy.Settings{inventory.V2Cases: {
			GA: ga, Stage: stage, Brownouts: spans, Extensions: map[string]policy.Date{"cred_ext": ext},
		}}
	}
	on := policy.Env{CanonicalRoutes: "true"}
	tests := []struct {
		name     string
		env      policy.Env
		durable  map[inventory.Family]policy.Settings
		route    *inventory.Route
		now      time.Time
		ids      []string
		want     policy.Decision
		askedIDs bool
	}{
		{"switched off", policy.Env{}, settings(policy.Retired), answer, base.Add(time.Hour), nil, policy.Decision{}, false},
		{"no date", on, nil, answer, base, nil, policy.Decision{}, false},
		{"not eligible", on, settings(policy.Retired), route("/api/v2/fees/processor/checkout"), base.Add(time.Hour), nil, policy.Decision{}, false},
		{"another family has no date", on, settings(policy.Retired), route("/api/disputes/{id}/answer"), base.Add(time.Hour), nil, policy.Decision{}, false},
		{"before the date: announced ahead", on, settings(policy.Warn), answer, ga.Time().Add(-time.Hour), nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"inside the window, retired stage waits for its end", on, settings(policy.Retired), answer, base.Add(-time.Second), nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"after the window, warn still serves", on, settings(policy.Warn), answer, base.Add(time.Hour), nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"after the window, retired", on, settings(policy.Retired), answer, base, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base, Refuse: true}, true},
		{"an extension moves Sunset and the retirement", on, settings(policy.Retired), answer, base.Add(time.Hour), []string{"partner-x", "cred_ext"},
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: ext.Time()}, true},
		{"the extended integration retires at its deadline", on, settings(policy.Retired), answer, ext.Time(), []string{"cred_ext"},
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: ext.Time(), Refuse: true}, true},
		{"in a brownout after the window", on, settings(policy.Brownout, brownout), answer, brownout.Start, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base, Refuse: true, Brownout: true}, true},
		{"after the brownout", on, settings(policy.Brownout, brownout), answer, brownout.End, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"a brownout inside the window does not act", on, settings(policy.Brownout, early), answer, early.Start, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"a brownout across the end acts from the end only", on, settings(policy.Brownout, straddling), answer, base.Add(-time.Minute), nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
		{"a brownout across the end, after it", on, settings(policy.Brownout, straddling), answer, base, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base, Refuse: true, Brownout: true}, true},
		{"a brownout honours the extension", on, settings(policy.Brownout, brownout), answer, brownout.Start, []string{"cred_ext"},
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: ext.Time()}, true},
		{"brownouts are not acted on in stage warn", on, settings(policy.Warn, brownout), answer, brownout.Start, nil,
			policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			got := policy.Resolve(tc.env, tc.durable).Decide(tc.route, tc.now, func() ([]string, error) { asked = true; return tc.ids, nil })
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.askedIDs, asked, "the integration is looked up only when an extension could apply")
			if got.Announce {
				require.False(t, got.Sunset.Before(got.Deprecation), "Sunset is never earlier than Deprecation")
			}
		})
	}
}

// A credential that cannot be read may hold an extension: it is announced
// with the base window and never refused.
func TestDecideNeverRefusesAnIntegrationItCannotRead(t *testing.T) {
	ga := date(t, "2026-01-15")
	base := ga.Time().Add(policy.BaseWindow)
	var answer *inventory.Route
	for i := range inventory.Routes {
		if inventory.Routes[i].Pattern == "/api/v2/cases/{caseId}/answer" {
			answer = &inventory.Routes[i]
		}
	}
	p := policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{inventory.V2Cases: {
		GA: ga, Stage: policy.Retired, Extensions: map[string]policy.Date{"cred_ext": date(t, "2026-10-01")},
	}})
	got := p.Decide(answer, base.Add(time.Hour), func() ([]string, error) { return nil, errors.New("redis down") })
	require.Equal(t, policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: base}, got)
	got = p.Decide(answer, base.Add(time.Hour), func() ([]string, error) { return []string{"cred_other"}, nil })
	require.True(t, got.Refuse, "an integration read and without extension is refused")
}

// A capability added to the inventory after its family's window began does
// not inherit the elapsed part: its window starts on its own since-date and
// lasts the whole 180 days; it is neither browned out nor retired with the
// routes present at general availability.
func TestARouteAddedLaterGetsAWholeWindowOfItsOwn(t *testing.T) {
	ga := date(t, "2026-01-15")
	familyEnd := ga.Time().Add(policy.BaseWindow) // 2026-07-14
	since := ga.Time().AddDate(0, 0, 100)         // 2026-04-25
	ownEnd := since.Add(policy.BaseWindow)        // 2026-10-22
	rows := []inventory.Route{
		{Pattern: "/api/v2/cases/{caseId}", Methods: []string{"GET"}, Family: inventory.V2Cases,
			Successor: "/api/cases/{id}", Eligible: true, Owner: routing.Cases},
		{Pattern: "/api/v2/cases/{caseId}/timeline", Methods: []string{"GET"}, Family: inventory.V2Cases,
			Successor: "/api/cases/{id}/events", Eligible: true, Owner: routing.Cases, Since: since.Format(time.DateOnly)},
		{Pattern: "/api/v2/cases/{caseId}/history", Methods: []string{"GET"}, Family: inventory.V2Cases,
			Successor: "/api/cases/{id}/events", Eligible: true, Owner: routing.Cases, Since: "2025-12-01"},
	}
	_, err := inventory.NewIndex(rows)
	require.NoError(t, err)
	original, added, older := &rows[0], &rows[1], &rows[2]
	brownout := policy.Span{Start: familyEnd.Add(24 * time.Hour), End: familyEnd.Add(25 * time.Hour)}
	resolve := func(stage policy.Stage, spans ...policy.Span) *policy.Policy {
		return policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{inventory.V2Cases: {
			GA: ga, Stage: stage, Brownouts: spans, Extensions: map[string]policy.Date{"cred_ext": date(t, "2026-08-01")},
		}})
	}
	noIDs := func() ([]string, error) { return nil, nil }

	got := resolve(policy.Warn).Decide(added, since, noIDs)
	require.Equal(t, policy.Decision{Announce: true, Deprecation: since, Sunset: ownEnd}, got,
		"announced with Sunset = since + 180 days, not GA + 180 days")
	require.Equal(t, policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: familyEnd}, resolve(policy.Warn).Decide(original, since, noIDs))
	require.Equal(t, policy.Decision{Announce: true, Deprecation: ga.Time(), Sunset: familyEnd}, resolve(policy.Warn).Decide(older, since, noIDs),
		"a since-date before GA changes nothing")

	retired := resolve(policy.Retired)
	require.True(t, retired.Decide(original, familyEnd, noIDs).Refuse, "the family's routes retire at GA + 180 days")
	require.Equal(t, policy.Decision{Announce: true, Deprecation: since, Sunset: ownEnd}, retired.Decide(added, familyEnd, noIDs),
		"the route added later is not retired with them")
	require.Equal(t, policy.Decision{Announce: true, Deprecation: since, Sunset: ownEnd, Refuse: true}, retired.Decide(added, ownEnd, noIDs),
		"it retires at the end of its own window")

	browning := resolve(policy.Brownout, brownout)
	require.True(t, browning.Decide(original, brownout.Start, noIDs).Refuse)
	require.False(t, browning.Decide(added, brownout.Start, noIDs).Refuse, "a brownout after the family's window is inside the added route's")

	withExt := func() ([]string, error) { return []string{"cred_ext"}, nil }
	require.Equal(t, ownEnd, retired.Decide(added, since, withExt).Sunset, "an extension earlier than the route's own end extends nothing")

	w := retired.Window(inventory.V2Cases)
	require.Equal(t, since, w.Start(added))
	require.Equal(t, ga.Time(), w.Start(original))
	require.Equal(t, ownEnd, w.RouteEnd(added, nil))
	require.Equal(t, familyEnd, w.End(nil), "the family's own end is unchanged")
}

func TestSettingsValidate(t *testing.T) {
	now := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	require.NoError(t, policy.Settings{}.Validate())
	require.NoError(t, policy.Settings{Stage: policy.Brownout, Brownouts: []policy.Span{{Start: now, End: now.Add(time.Hour)}}}.Validate())
	for name, s := range map[string]policy.Settings{
		"an unknown stage":         {Stage: "paused"},
		"a brownout ending first":  {Brownouts: []policy.Span{{Start: now, End: now}}},
		"a brownout of two days":   {Brownouts: []policy.Span{{Start: now, End: now.Add(48 * time.Hour)}}},
		"an extension without day": {Extensions: map[string]policy.Date{"cred_1": {}}},
		"an unnamed integration":   {Extensions: map[string]policy.Date{"": date(t, "2026-10-01")}},
	} {
		require.Error(t, s.Validate(), name)
	}
}
