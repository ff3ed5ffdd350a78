// Package notice sends the window's e-mail milestones to the credentials
// that use earlier routes: at the window's start, at 90, 30 and 7 days
// left, and at the permanent retirement. Each credential gets each
// milestone once; a scheduler that was down sends only the milestone due
// now, never the ones it missed.
//
// Who gets mail: every credential the legacy-use ledger has seen on an
// eligible alias of the family (website sessions, recorded as anonymous,
// have no address). The address is the credential's partner's contact,
// set through the admin API; without one the notice is recorded as
// undeliverable, and reported there.
package notice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// Store is the state the scheduler reads and records.
type Store interface {
	Subjects(ctx context.Context) ([]string, error)
	Uses(ctx context.Context, subject string) ([]store.Use, error)
	Contact(ctx context.Context, partner string) (string, error)
	ClaimNotice(ctx context.Context, n store.Notice) (store.Notice, bool, error)
	FinishNotice(ctx context.Context, n store.Notice) error
}

// Credential is what the scheduler needs of a credential.
type Credential struct {
	Partner string
	Active  bool
}

// ErrUnknownCredential is Credentials' answer for an id no credential has.
var ErrUnknownCredential = errors.New("no such credential")

// Sender sends one message.
type Sender interface {
	Send(ctx context.Context, m mail.Message) error
}

// Scheduler decides and sends the notices.
type Scheduler struct {
	Policy      func() *policy.Policy
	Store       Store
	Credentials func(ctx context.Context, publicID string) (Credential, error)
	Sender      Sender
	Now         func() time.Time
	// GuideURL is the migration guide's address as partners reach it.
	GuideURL string
	Interval time.Duration
	Logger   *slog.Logger
	// Inventory is the route inventory; nil is inventory.Routes.
	Inventory []inventory.Route
}

// Report counts what one pass did.
type Report struct {
	Sent, Undeliverable, Failed int
}

// eligibleRoutes maps an inventory pattern to its eligible row (rows of
// one pattern share a family, a successor pattern and a since-date).
func eligibleRoutes(routes []inventory.Route) map[string]*inventory.Route {
	m := map[string]*inventory.Route{}
	for i := range routes {
		r := &routes[i]
		if r.Eligible && r.Successor != "" {
			if _, ok := m[r.Pattern]; !ok {
				m[r.Pattern] = r
			}
		}
	}
	return m
}

// Run passes every Interval until ctx ends; a failed pass is logged and
// the next one tries again.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		if r, err := s.Tick(ctx); err != nil {
			s.Logger.Warn("compatibility notices: pass failed; the next one retries", "err", err)
		} else if r != (Report{}) {
			s.Logger.Info("compatibility notices sent", "sent", r.Sent, "undeliverable", r.Undeliverable, "failed", r.Failed)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick sends every notice due now that was not sent before.
func (s *Scheduler) Tick(ctx context.Context) (Report, error) {
	var rep Report
	pol := s.Policy()
	if !pol.Enabled {
		return rep, nil // nothing is announced, so nothing is mailed
	}
	now := s.Now()
	subjects, err := s.Store.Subjects(ctx)
	if err != nil {
		return rep, err
	}
	routes := s.Inventory
	if routes == nil {
		routes = inventory.Routes
	}
	eligible := eligibleRoutes(routes)
	var errs []error
	for _, subject := range subjects {
		if subject == store.Anonymous {
			continue
		}
		if err := s.credential(ctx, pol, eligible, subject, now, &rep); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// window is one window a credential's routes are in: a family's, or a
// route's own when it joined the family later.
type window struct {
	family inventory.Family
	since  string // the route's since-date; "" for the family's window
}

func (s *Scheduler) credential(ctx context.Context, pol *policy.Policy, eligible map[string]*inventory.Route, cred string, now time.Time, rep *Report) error {
	uses, err := s.Store.Uses(ctx, cred)
	if err != nil {
		return err
	}
	byWindow := map[window][]*inventory.Route{}
	for _, u := range uses {
		r := eligible[u.Route]
		if r == nil {
			continue
		}
		win := window{family: r.Family}
		if w := pol.Window(r.Family); w != nil && !w.GA.IsZero() && w.Start(r).After(w.GA.Time()) {
			win.since = r.Since
		}
		byWindow[win] = append(byWindow[win], r)
	}
	if len(byWindow) == 0 {
		return nil
	}
	c, err := s.Credentials(ctx, cred)
	if errors.Is(err, ErrUnknownCredential) || (err == nil && !c.Active) {
		return nil // revoked or gone: nobody left to tell
	}
	if err != nil {
		return fmt.Errorf("credential %s: %w", cred, err)
	}
	ids := []string{cred, c.Partner}
	wins := make([]window, 0, len(byWindow))
	for win := range byWindow {
		wins = append(wins, win)
	}
	sort.Slice(wins, func(i, j int) bool {
		if wins[i].family != wins[j].family {
			return wins[i].family < wins[j].family
		}
		return wins[i].since < wins[j].since
	})
	for _, win := range wins {
		routes := byWindow[win]
		w := pol.Window(win.family)
		if w == nil || w.GA.IsZero() {
			continue
		}
		// Every route of a window has the same start, so any of them
		// stands for it.
		due, ok := w.CurrentMilestone(routes[0], ids, now)
		if !ok {
			continue
		}
		if err := s.send(ctx, w, win.since, ids, due, cred, c.Partner, routes, now, rep); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scheduler) send(ctx context.Context, w *policy.Window, since string, ids []string, due policy.Due, cred, partner string, routes []*inventory.Route, now time.Time, rep *Report) error {
	n, ok, err := s.Store.ClaimNotice(ctx, store.Notice{
		Family: w.Family, Since: since, Credential: cred, Milestone: string(due.Milestone), Partner: partner, At: now,
	})
	if err != nil || !ok {
		return err
	}
	to, err := s.Store.Contact(ctx, partner)
	if err != nil {
		n.State, n.Detail = store.NoticeFailed, "contact unreadable"
		return errors.Join(err, s.Store.FinishNotice(ctx, n))
	}
	if to == "" {
		n.State, n.Detail = store.NoticeUndeliverable, "no contact for partner "+partner
		rep.Undeliverable++
		s.Logger.Warn("compatibility notice undeliverable: the partner has no contact", "family", w.Family,
			"credential", cred, "partner", partner, "milestone", due.Milestone)
		return s.Store.FinishNotice(ctx, n)
	}
	n.To = to
	msg := Compose(w, ids, due, cred, partner, routes, s.GuideURL)
	msg.To = to
	if err := s.Sender.Send(ctx, msg); err != nil {
		n.State, n.Detail = store.NoticeFailed, err.Error()
		rep.Failed++
		s.Logger.Warn("compatibility notice not accepted by the mail server; retried at the next pass", "family", w.Family,
			"credential", cred, "milestone", due.Milestone, "attempts", n.Attempts, "err", err)
		return s.Store.FinishNotice(ctx, n)
	}
	n.State = store.NoticeSent
	rep.Sent++
	return s.Store.FinishNotice(ctx, n)
}

// Compose writes the notice about one window (routes share it): which
// earlier routes the credential used, the canonical route replacing each,
// the deadline (the Sunset the edge announces on them) and the migration
// guide.
func Compose(w *policy.Window, ids []string, due policy.Due, cred, partner string, routes []*inventory.Route, guideURL string) mail.Message {
	var route *inventory.Route // the family's window
	if len(routes) > 0 {
		route = routes[0]
	}
	start, end := w.Start(route), w.RouteEnd(route, ids)
	sunset := end.UTC().Format(http.TimeFormat)
	var subject string
	switch due.Milestone {
	case policy.WindowStart:
		subject = fmt.Sprintf("pcourt %s: earlier API routes you use are deprecated; Sunset %s", w.Family, end.Format(time.DateOnly))
	case policy.Retirement:
		subject = fmt.Sprintf("pcourt %s: earlier API routes you use are retired as of %s", w.Family, end.Format(time.DateOnly))
	default:
		days := strings.TrimSuffix(string(due.Milestone), "-days-left")
		subject = fmt.Sprintf("pcourt %s: %s days left on earlier API routes you use (Sunset %s)", w.Family, days, end.Format(time.DateOnly))
	}
	seen := map[string]bool{}
	var lines []string
	for _, r := range routes {
		if seen[r.Pattern] {
			continue
		}
		seen[r.Pattern] = true
		lines = append(lines, fmt.Sprintf("  %s %s\n    -> %s %s", strings.Join(r.Methods, ","), r.Pattern, strings.Join(r.Methods, ","), r.Successor))
	}
	sort.Strings(lines)
	var b strings.Builder
	fmt.Fprintf(&b, "Credential %s (partner %s) has called earlier routes of the %s family.\n\n", cred, partner, w.Family)
	if due.Milestone == policy.Retirement {
		fmt.Fprintf(&b, "These routes are now retired: since %s they answer 410 alias_retired. Use the canonical routes:\n\n", sunset)
	} else {
		fmt.Fprintf(&b, "These routes are deprecated since %s and keep working until their Sunset, %s. Move to the canonical routes:\n\n",
			start.UTC().Format(http.TimeFormat), sunset)
	}
	b.WriteString(strings.Join(lines, "\n"))
	fmt.Fprintf(&b, "\n\nSunset: %s\nMigration guide: %s\n\n", sunset, guideURL)
	b.WriteString("Every response of these routes carries the same Deprecation, Sunset and Link (rel=\"successor-version\") headers.\n" +
		"You get each of these notices once: at the window's start, at 90, 30 and 7 days left, and at retirement.\n")
	return mail.Message{
		Subject: subject,
		Body:    b.String(),
		Headers: map[string]string{
			"Sunset":      sunset,
			"Link":        "<" + guideURL + `>; rel="deprecation"; type="text/html"`,
			"X-PC-Notice": noticeID(w, start, cred, due),
		},
	}
}

// noticeID names the notice in its X-PC-Notice header: family, credential
// and milestone, with the window's start day when it is a route's own.
func noticeID(w *policy.Window, start time.Time, cred string, due policy.Due) string {
	family := string(w.Family)
	if start.After(w.GA.Time()) {
		family += "@" + start.Format(time.DateOnly)
	}
	return family + "/" + cred + "/" + string(due.Milestone)
}
