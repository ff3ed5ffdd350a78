// The case's timeline on its page: its stages as the procedure records
// and plans them (procedure.Case.Timeline), its milestones, and today,
// drawn as SVG on the server. No script is needed to see it, the page's
// CSP allows it (no inline style: the colours are classes of pcourt.css),
// and everything drawn is in the page's text too, in the table under it.
// Each lane and mark carries its instants as data attributes, which the
// tests compare with the case's own deadlines.

package respond

import (
	"fmt"
	"strings"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// The timeline's geometry, in SVG user units (pixels at scale 1).
const (
	timelineWidth = 320.0
	timelinePad   = 3.0  // left and right of the first and last instant
	marksHeight   = 12.0 // the row of milestones above the lanes
	laneHeight    = 14.0
	barHeight     = 8.0
)

// timelineView is the timeline: a lane per stage from its opening to its
// deadline, the part that has run filled, a to-come stage dashed at its
// projected dates; the milestones above; today as a line across.
type timelineView struct {
	Width, Height float64
	Lanes         []timelineLane
	Marks         []timelineMark
	Today         time.Time
	TodayX        float64
	Summary       string
}

// timelineLane is one stage.
type timelineLane struct {
	procedure.TimelineStage
	Name string
	// Y is the top of the bar; X1 and X2 its opening and deadline, Fill
	// where its filled part ends (its closing, or today for the open
	// stage; X1 for one to come).
	Y, X1, X2, Fill float64
	// Standing says where the stage stands, in words.
	Standing   string
	Describing string
}

// timelineMark is a milestone of the case: its opening, the record
// closing, an award, a settlement, a termination or its request's
// deadline.
type timelineMark struct {
	Key, What string
	At        time.Time
	X         float64
	// Deadline marks a deadline still to come (a termination request's).
	Deadline bool
}

// stageName names a stage for people.
func stageName(k procedure.StageKind, round int) string {
	switch k {
	case procedure.StageRespondentJoining:
		return "Joining the case"
	case procedure.StageAnswer:
		return "The answer"
	case procedure.StageEvidence:
		return fmt.Sprintf("Evidence, round %d", round)
	case procedure.StageRebuttal:
		return fmt.Sprintf("Rebuttal, round %d", round)
	case procedure.StageRecordConfirmation:
		return "Confirming the record"
	}
	return string(k)
}

// caseMarks are c's milestones, in the order they happen.
func caseMarks(c procedure.Case) []timelineMark {
	marks := []timelineMark{{Key: "opened", What: "The case opened", At: c.OpenedAt}}
	if t := c.Termination; t != nil && c.Closed == "" && !c.Settlement.Agreed() {
		marks = append(marks, timelineMark{Key: "termination_deadline", What: "A termination request awaits confirmation until", At: t.DeadlineAt, Deadline: true})
	}
	switch c.Closed {
	case procedure.StatusRecordConfirmed:
		marks = append(marks, timelineMark{Key: "record_closed", What: "The record closed; the tribunal decides", At: c.ClosedAt})
	case procedure.StatusTerminated:
		marks = append(marks, timelineMark{Key: "terminated", What: "The case was terminated", At: c.ClosedAt})
	}
	if c.Settlement.Agreed() {
		marks = append(marks, timelineMark{Key: "settled", What: "The sides agreed a settlement", At: c.Settlement.AgreedAt})
	}
	if a := c.Tribunal.Award; a != nil {
		marks = append(marks, timelineMark{Key: "award_issued", What: "The award was issued", At: a.IssuedAt})
	}
	return marks
}

// newTimeline lays out c's timeline as it stands at now.
func newTimeline(c procedure.Case, now time.Time) *timelineView {
	stages := c.Timeline()
	marks := caseMarks(c)
	from, to := c.OpenedAt, now
	for _, s := range stages {
		from = minTime(from, s.OpenedAt)
		to = maxTime(maxTime(to, s.DeadlineAt), s.ClosedAt)
	}
	for _, m := range marks {
		to = maxTime(to, m.At)
	}
	if !to.After(from) {
		to = from.Add(24 * time.Hour)
	}
	x := func(t time.Time) float64 {
		return timelinePad + (timelineWidth-2*timelinePad)*float64(t.Sub(from))/float64(to.Sub(from))
	}
	v := &timelineView{Width: timelineWidth, Height: marksHeight + laneHeight*float64(len(stages)) + 2, Today: now, TodayX: x(now)}
	var done, coming int
	var open string
	for i, s := range stages {
		l := timelineLane{TimelineStage: s, Name: stageName(s.Kind, s.Round), Y: marksHeight + laneHeight*float64(i) + (laneHeight-barHeight)/2,
			X1: x(s.OpenedAt), X2: x(s.DeadlineAt)}
		switch s.State {
		case procedure.TimelinePast:
			done++
			l.Fill = x(s.ClosedAt)
			l.Standing = "done " + when(s.ClosedAt)
			if c.Settlement.Agreed() && s.ClosedAt.Equal(c.Settlement.AgreedAt) {
				l.Standing = "stopped by the settlement " + when(s.ClosedAt)
			}
		case procedure.TimelineOpen:
			l.Fill = x(minTime(maxTime(now, s.OpenedAt), s.DeadlineAt))
			l.Standing = "open now, until " + when(s.DeadlineAt)
			if !now.Before(s.DeadlineAt) {
				l.Standing = "its deadline passed " + when(s.DeadlineAt) + "; the case moves on in a moment"
			}
			open = fmt.Sprintf("%s is open until %s", strings.ToLower(l.Name[:1])+l.Name[1:], when(s.DeadlineAt))
		case procedure.TimelineToCome:
			coming++
			l.Fill = l.X1
			l.Standing = "to come, for " + duration(s.Window) + " (the dates if each stage before it runs its whole window)"
			if s.IfJoined {
				l.Standing = "to come only if the respondent joins by the joining deadline, for " + duration(s.Window)
			}
		}
		l.Describing = fmt.Sprintf("%s: from %s, deadline %s; %s", l.Name, when(s.OpenedAt), when(s.DeadlineAt), l.Standing)
		v.Lanes = append(v.Lanes, l)
	}
	for _, m := range marks {
		m.X = x(m.At)
		v.Marks = append(v.Marks, m)
	}
	v.Summary = fmt.Sprintf("The case's stages from %s: %d done", when(c.OpenedAt), done)
	if open != "" {
		v.Summary += ", " + open
	}
	v.Summary += fmt.Sprintf(", %d to come. Today is %s.", coming, when(now))
	return v
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
