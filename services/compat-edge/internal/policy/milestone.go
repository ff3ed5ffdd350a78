package policy

import (
	"time"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
)

// Milestone is one e-mail notice of a window, sent once per credential.
type Milestone string

// The milestones, in the order they fall due.
const (
	// WindowStart is due at the general availability date.
	WindowStart Milestone = "window-start"
	// Days90, Days30 and Days7 are due that many days before the
	// integration's window ends.
	Days90 Milestone = "90-days-left"
	Days30 Milestone = "30-days-left"
	Days7  Milestone = "7-days-left"
	// Retirement is due at the window's end, only when the family's stage
	// is retired: the alias then answers 410 for good. A family left in
	// warn or brownout is not permanently retired, so it is not announced
	// as such.
	Retirement Milestone = "retired"
)

// Milestones lists every milestone, in order.
var Milestones = []Milestone{WindowStart, Days90, Days30, Days7, Retirement}

// Valid reports a known milestone.
func (m Milestone) Valid() bool {
	for _, k := range Milestones {
		if k == m {
			return true
		}
	}
	return false
}

// Due is a milestone and the moment it falls due.
type Due struct {
	Milestone Milestone
	At        time.Time
}

// Schedule returns, in order, the milestones of route's window for an
// integration known by ids; none without a date. route nil is the family's
// window, the one of the routes present at general availability; a route
// that joined the family later (its since-date) counts from that day, to
// its own end (Start, RouteEnd), so its notices do not announce a window
// it never had. A milestone that would fall before the window starts (an
// extension cannot make that happen, the base window being 180 days) is
// left out.
func (w *Window) Schedule(route *inventory.Route, ids []string) []Due {
	if w == nil || w.GA.IsZero() {
		return nil
	}
	start, end := w.Start(route), w.RouteEnd(route, ids)
	out := []Due{{WindowStart, start}}
	for _, m := range []struct {
		m    Milestone
		days int
	}{{Days90, 90}, {Days30, 30}, {Days7, 7}} {
		at := end.Add(-time.Duration(m.days) * 24 * time.Hour)
		if at.After(start) {
			out = append(out, Due{m.m, at})
		}
	}
	if w.Stage == Retired {
		out = append(out, Due{Retirement, end})
	}
	return out
}

// CurrentMilestone is the milestone of route's window (nil: the family's)
// due at now: the latest one whose moment has come. A scheduler that was
// down sends this one only; the ones it missed are not replayed.
func (w *Window) CurrentMilestone(route *inventory.Route, ids []string, now time.Time) (Due, bool) {
	var cur Due
	found := false
	for _, d := range w.Schedule(route, ids) {
		if d.At.After(now) {
			break
		}
		cur, found = d, true
	}
	return cur, found
}

// NextMilestone is the first milestone of route's window (nil: the
// family's) still to come after now.
func (w *Window) NextMilestone(route *inventory.Route, ids []string, now time.Time) (Due, bool) {
	for _, d := range w.Schedule(route, ids) {
		if d.At.After(now) {
			return d, true
		}
	}
	return Due{}, false
}
