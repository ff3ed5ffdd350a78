package notice_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/mail/mailtest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/notice"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

const (
	answer   = "/api/v2/cases/{caseId}/answer"
	draft    = "/api/v2/case-drafts/{draftId}"
	guideURL = "https://api.pcourt.dev/docs/migration"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func date(t testing.TB, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}

type fixture struct {
	st     *store.Store
	smtp   *mailtest.Server
	sched  *notice.Scheduler
	now    time.Time
	policy *policy.Policy
}

// newFixture: a real Redis, a real SMTP server in the process, v2-cases
// announced from 2026-01-15 (window end 2026-07-14) and retired, with
// cred_ext holding an extension to 2026-09-30; v2-filings has no date.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{st: store.New(redistest.NewClient(t)), smtp: mailtest.Start(t)}
	f.policy = policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{inventory.V2Cases: {
		GA: date(t, "2026-01-15"), Stage: policy.Retired, Extensions: map[string]policy.Date{"cred_ext": date(t, "2026-09-30")},
	}})
	creds := map[string]notice.Credential{
		"cred_a": {Partner: "partner-a", Active: true}, "cred_ext": {Partner: "partner-b", Active: true},
		"cred_nocontact": {Partner: "partner-c", Active: true}, "cred_revoked": {Partner: "partner-a", Active: false},
	}
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	var uses []store.Use
	for _, c := range []string{"cred_a", "cred_ext", "cred_nocontact", "cred_revoked"} {
		uses = append(uses, store.Use{Subject: c, Route: answer, First: t0, Last: t0, Count: 1})
	}
	uses = append(uses,
		store.Use{Subject: "cred_a", Route: draft, First: t0, Last: t0, Count: 1},                             // v2-filings: no date, no mail
		store.Use{Subject: "cred_filings", Route: draft, First: t0, Last: t0, Count: 1},                       // only that family
		store.Use{Subject: store.Anonymous, Route: answer, First: t0, Last: t0, Count: 1},                     // no address
		store.Use{Subject: "cred_a", Route: "/api/v2/fees/processor/checkout", First: t0, Last: t0, Count: 1}, // not eligible
	)
	require.NoError(t, f.st.AddUses(ctx, uses))
	require.NoError(t, f.st.SetContact(ctx, "partner-a", "ops@a.example"))
	require.NoError(t, f.st.SetContact(ctx, "partner-b", "api@b.example"))
	cfg := mail.DefaultConfig()
	cfg.Host, cfg.Port, cfg.TLS, cfg.From = f.smtp.Host(), f.smtp.Port(), mail.TLSOff, "compatibility@pcourt.dev"
	f.sched = &notice.Scheduler{
		Policy: func() *policy.Policy { return f.policy },
		Store:  f.st,
		Credentials: func(_ context.Context, id string) (notice.Credential, error) {
			c, ok := creds[id]
			if !ok {
				return notice.Credential{}, notice.ErrUnknownCredential
			}
			return c, nil
		},
		Sender:   mail.New(cfg, func() time.Time { return f.now }),
		Now:      func() time.Time { return f.now },
		GuideURL: guideURL,
		Interval: time.Minute,
		Logger:   quiet,
	}
	return f
}

// received returns, per recipient, the X-PC-Notice of every message.
func received(t *testing.T, s *mailtest.Server) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range s.Messages() {
		require.Len(t, m.To, 1)
		out[m.To[0]] = append(out[m.To[0]], m.Parse(t).Header.Get("X-PC-Notice"))
	}
	return out
}

// The acceptance test: a simulated clock across the whole window (and the
// extension beyond it), two passes a day, with the scheduler down from day
// 80 to day 160. Each credential gets each due milestone once; the 90-day
// notice that fell in the outage is not replayed; the 30-day one, due when
// the scheduler came back, is sent.
func TestMilestonesAcrossAWindowWithAnOutage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ga := date(t, "2026-01-15").Time()
	down, up := ga.Add(80*24*time.Hour), ga.Add(160*24*time.Hour)
	for f.now = ga.Add(-2 * 24 * time.Hour); f.now.Before(time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC)); f.now = f.now.Add(12 * time.Hour) {
		if !f.now.Before(down) && f.now.Before(up) {
			continue // the scheduler is down
		}
		_, err := f.sched.Tick(ctx)
		require.NoError(t, err, "at %s", f.now)
	}

	got := received(t, f.smtp)
	require.Equal(t, map[string][]string{
		// 90 days left (2026-04-15) fell in the outage: not replayed.
		"ops@a.example": {"v2-cases/cred_a/window-start", "v2-cases/cred_a/30-days-left", "v2-cases/cred_a/7-days-left", "v2-cases/cred_a/retired"},
		// The extension moves the countdown past the outage.
		"api@b.example": {"v2-cases/cred_ext/window-start", "v2-cases/cred_ext/90-days-left", "v2-cases/cred_ext/30-days-left",
			"v2-cases/cred_ext/7-days-left", "v2-cases/cred_ext/retired"},
	}, got)

	notices, err := f.st.Notices(ctx, inventory.V2Cases)
	require.NoError(t, err)
	states := map[string]store.NoticeState{}
	for _, n := range notices {
		states[n.Credential+"/"+n.Milestone] = n.State
		require.Equal(t, 1, n.Attempts, "%s/%s sent once", n.Credential, n.Milestone)
	}
	require.Equal(t, store.NoticeUndeliverable, states["cred_nocontact/window-start"], "no contact: recorded, reported, not mailed")
	require.Equal(t, store.NoticeSent, states["cred_a/retired"])
	require.NotContains(t, states, "cred_a/90-days-left", "a missed milestone leaves no record")
	require.NotContains(t, states, "cred_revoked/window-start", "a revoked credential gets nothing")
	for k := range states {
		require.False(t, strings.HasPrefix(k, store.Anonymous), "anonymous has no address")
	}
	filings, err := f.st.Notices(ctx, inventory.V2Filings)
	require.NoError(t, err)
	require.Empty(t, filings, "a family without a date sends nothing")
}

// A route that joined its family after general availability (its
// since-date) has a window of its own, and its notices count from that
// day: the credential that uses it and an original route gets both
// countdowns, each milestone once, each naming its own Sunset.
func TestARouteAddedLaterGetsItsOwnMilestones(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	const late = "/api/v2/cases/{caseId}/late-answer"
	routes := slices.Clone(inventory.Routes)
	i := slices.IndexFunc(routes, func(r inventory.Route) bool { return r.Pattern == answer && r.Eligible })
	require.GreaterOrEqual(t, i, 0)
	added := routes[i]
	added.Pattern, added.Since = late, "2026-03-01"
	f.sched.Inventory = append(routes, added)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	require.NoError(t, f.st.AddUses(ctx, []store.Use{{Subject: "cred_a", Route: late, First: t0, Last: t0, Count: 1}}))

	for f.now = date(t, "2026-01-14").Time(); f.now.Before(date(t, "2026-09-10").Time()); f.now = f.now.Add(12 * time.Hour) {
		_, err := f.sched.Tick(ctx)
		require.NoError(t, err, "at %s", f.now)
	}

	sunsets := map[string]string{}
	var ids []string
	for _, m := range f.smtp.Messages() {
		if m.To[0] != "ops@a.example" {
			continue
		}
		h := m.Parse(t).Header
		ids = append(ids, h.Get("X-PC-Notice"))
		sunsets[h.Get("X-PC-Notice")] = h.Get("Sunset")
	}
	require.Equal(t, []string{
		"v2-cases/cred_a/window-start",            // 2026-01-15
		"v2-cases@2026-03-01/cred_a/window-start", // 2026-03-01
		"v2-cases/cred_a/90-days-left",            // 2026-04-15
		"v2-cases@2026-03-01/cred_a/90-days-left", // 2026-05-30
		"v2-cases/cred_a/30-days-left",            // 2026-06-14
		"v2-cases/cred_a/7-days-left",             // 2026-07-07
		"v2-cases/cred_a/retired",                 // 2026-07-14
		"v2-cases@2026-03-01/cred_a/30-days-left", // 2026-07-29
		"v2-cases@2026-03-01/cred_a/7-days-left",  // 2026-08-21
		"v2-cases@2026-03-01/cred_a/retired",      // 2026-08-28
	}, ids)
	require.Equal(t, "Tue, 14 Jul 2026 00:00:00 GMT", sunsets["v2-cases/cred_a/window-start"])
	require.Equal(t, "Fri, 28 Aug 2026 00:00:00 GMT", sunsets["v2-cases@2026-03-01/cred_a/window-start"])

	notices, err := f.st.Notices(ctx, inventory.V2Cases)
	require.NoError(t, err)
	for _, n := range notices {
		require.Equal(t, 1, n.Attempts, "%s/%s@%s sent once", n.Credential, n.Milestone, n.Since)
	}
}

// The message names the alias, its successor, the Sunset and the guide.
func TestTheNoticeMessage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.now = date(t, "2026-07-08").Time() // 6 days left on the base window
	rep, err := f.sched.Tick(ctx)
	require.NoError(t, err)
	require.Equal(t, notice.Report{Sent: 2, Undeliverable: 1}, rep)

	var msg *mailtest.Received
	for _, m := range f.smtp.Messages() {
		if m.To[0] == "ops@a.example" {
			msg = &m
		}
	}
	require.NotNil(t, msg)
	require.Equal(t, "compatibility@pcourt.dev", msg.From)
	m := msg.Parse(t)
	require.Equal(t, "compatibility@pcourt.dev", m.Header.Get("From"))
	require.Equal(t, "ops@a.example", m.Header.Get("To"))
	require.Equal(t, "pcourt v2-cases: 7 days left on earlier API routes you use (Sunset 2026-07-14)", m.Header.Get("Subject"))
	require.Equal(t, "Tue, 14 Jul 2026 00:00:00 GMT", m.Header.Get("Sunset"))
	require.NotEmpty(t, m.Header.Get("Message-ID"))
	sent, err := m.Header.Date()
	require.NoError(t, err)
	require.True(t, sent.Equal(f.now))
	body, err := io.ReadAll(m.Body)
	require.NoError(t, err)
	for _, want := range []string{"cred_a", "partner-a", "POST /api/v2/cases/{caseId}/answer", "POST /api/cases/{id}/answer",
		"Sunset: Tue, 14 Jul 2026 00:00:00 GMT", "Migration guide: " + guideURL} {
		require.Contains(t, string(body), want)
	}
	require.NotContains(t, string(body), draft, "a family without a date is not in the notice")
	require.NotContains(t, string(body), "checkout", "a route that is not announced is not in the notice")

	rep, err = f.sched.Tick(ctx)
	require.NoError(t, err)
	require.Equal(t, notice.Report{}, rep, "the next pass sends nothing again")
}

// A message the server refuses is retried at the next pass and then sent
// once; a notice left claimed by a crash is never sent again (it may have
// gone out); nothing is mailed while announcements are off.
func TestRefusedCrashedAndSwitchedOff(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.now = date(t, "2026-01-20").Time()

	// A crash after claiming cred_ext's notice, before recording it.
	_, ok, err := f.st.ClaimNotice(ctx, store.Notice{Family: inventory.V2Cases, Credential: "cred_ext", Milestone: "window-start", At: f.now})
	require.NoError(t, err)
	require.True(t, ok)

	f.smtp.RefuseNext(1)
	rep, err := f.sched.Tick(ctx)
	require.NoError(t, err)
	require.Equal(t, notice.Report{Failed: 1, Undeliverable: 1}, rep)
	require.Empty(t, f.smtp.Messages())

	rep, err = f.sched.Tick(ctx)
	require.NoError(t, err)
	require.Equal(t, notice.Report{Sent: 1}, rep, "the refused one goes out at the next pass")
	require.Equal(t, map[string][]string{"ops@a.example": {"v2-cases/cred_a/window-start"}}, received(t, f.smtp))

	notices, err := f.st.Notices(ctx, inventory.V2Cases)
	require.NoError(t, err)
	byCred := map[string]store.Notice{}
	for _, n := range notices {
		byCred[n.Credential] = n
	}
	require.Equal(t, store.NoticeSent, byCred["cred_a"].State)
	require.Equal(t, 2, byCred["cred_a"].Attempts)
	require.Equal(t, store.NoticeSending, byCred["cred_ext"].State, "possibly sent before the crash: reported, never resent")

	f.policy = policy.Resolve(policy.Env{}, nil)
	f.now = date(t, "2026-07-10").Time()
	rep, err = f.sched.Tick(ctx)
	require.NoError(t, err)
	require.Equal(t, notice.Report{}, rep, "announcements off: no mail")
}

func TestComposeSubjects(t *testing.T) {
	w := policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{inventory.WebsiteCases: {GA: date(t, "2026-01-15")}}).Window(inventory.WebsiteCases)
	var routes []*inventory.Route
	for i := range inventory.Routes {
		if inventory.Routes[i].Pattern == "/api/disputes/{id}/answer" {
			routes = append(routes, &inventory.Routes[i])
		}
	}
	require.NotEmpty(t, routes)
	var subjects []string
	for _, m := range policy.Milestones {
		msg := notice.Compose(w, nil, policy.Due{Milestone: m}, "cred_a", "partner-a", routes, guideURL)
		subjects = append(subjects, msg.Subject)
		require.Equal(t, w.End(nil).UTC().Format(http.TimeFormat), msg.Headers["Sunset"])
	}
	sort.Strings(subjects)
	require.Equal(t, []string{
		"pcourt website-cases: 30 days left on earlier API routes you use (Sunset 2026-07-14)",
		"pcourt website-cases: 7 days left on earlier API routes you use (Sunset 2026-07-14)",
		"pcourt website-cases: 90 days left on earlier API routes you use (Sunset 2026-07-14)",
		"pcourt website-cases: earlier API routes you use are deprecated; Sunset 2026-07-14",
		"pcourt website-cases: earlier API routes you use are retired as of 2026-07-14",
	}, subjects)
}
