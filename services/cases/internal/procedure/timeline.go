package procedure

import "time"

// PastStage is a stage the case has left: when it opened, the deadline it
// had then (the one its entry event carried), and when it closed, at the
// act or tick that moved the case on (early, or at the deadline).
type PastStage struct {
	Kind       StageKind
	Round      int
	OpenedAt   time.Time
	DeadlineAt time.Time
	ClosedAt   time.Time
}

// TimelineState says where a stage of a case's timeline stands.
type TimelineState string

// The timeline states.
const (
	// TimelinePast: the case left the stage (PastStages), or the sides'
	// settlement stopped it.
	TimelinePast TimelineState = "past"
	// TimelineOpen: the stage is open now; its deadline is the case's.
	TimelineOpen TimelineState = "open"
	// TimelineToCome: a stage the plan still has; its dates are projected.
	TimelineToCome TimelineState = "to_come"
)

// TimelineStage is one stage of a case's timeline.
type TimelineStage struct {
	Kind  StageKind
	Round int
	State TimelineState
	// OpenedAt and DeadlineAt are the stage's own for a past or open
	// stage. For one to come they are projected: when it would open and
	// end if every stage before it ran its whole window, from the open
	// stage's deadline on (a stage closes early once every side has
	// acted, so it may come sooner).
	OpenedAt, DeadlineAt time.Time
	// ClosedAt is when a past stage closed.
	ClosedAt time.Time
	// Window is the stage's deadline window, the pinned rules'.
	Window time.Duration
	// IfJoined marks a stage to come only if a respondent joins before the
	// joining deadline: the answer, while the case awaits its respondent.
	IfJoined bool
}

// Timeline is c's stages in order: those it has left, as recorded; the
// one open now; and those its plan still has, projected from the open
// stage's deadline. A settled case's stage is past, stopped at the
// agreement; a closed case (record confirmed, terminated) has none open
// and none to come.
func (c Case) Timeline() []TimelineStage {
	out := make([]TimelineStage, 0, len(c.PastStages)+len(Stages))
	for _, s := range c.PastStages {
		out = append(out, TimelineStage{Kind: s.Kind, Round: s.Round, State: TimelinePast,
			OpenedAt: s.OpenedAt, DeadlineAt: s.DeadlineAt, ClosedAt: s.ClosedAt, Window: stageSpec(s.Kind).Window(c.Windows)})
	}
	if c.Closed != "" || c.Stage.Kind == "" {
		return out
	}
	open := TimelineStage{Kind: c.Stage.Kind, Round: c.Stage.Round, State: TimelineOpen,
		OpenedAt: c.Stage.OpenedAt, DeadlineAt: c.Stage.DeadlineAt, Window: stageSpec(c.Stage.Kind).Window(c.Windows)}
	if c.Settlement.Agreed() {
		open.State, open.ClosedAt = TimelinePast, c.Settlement.AgreedAt
		return append(out, open)
	}
	out = append(out, open)
	at := c.Stage.DeadlineAt
	for _, s := range c.stagesAfter(c.Stage.Kind, c.Stage.Round) {
		s.OpenedAt = at
		s.DeadlineAt = at.Add(s.Window)
		at = s.DeadlineAt
		out = append(out, s)
	}
	return out
}

// stagesAfter are the stages c's plan still has after (kind, round), in
// order, as nextStage walks them, except that while the case awaits its
// respondent the answer is among them, marked IfJoined: it comes only if
// the respondent joins in time.
func (c Case) stagesAfter(kind StageKind, round int) []TimelineStage {
	var out []TimelineStage
	after := kind == StageRespondentJoining
	for _, s := range Stages {
		if s.Kind == StageRespondentJoining {
			continue
		}
		n := s.Rounds(c.Plan)
		ifJoined := s.Kind == StageAnswer && !c.RespondentJoined()
		if ifJoined && kind != StageRespondentJoining {
			n = 0 // the case went on in default: no answer stage opens
		}
		for r := 1; r <= n; r++ {
			if after {
				out = append(out, TimelineStage{Kind: s.Kind, Round: roundOf(s.Kind, r), State: TimelineToCome,
					Window: s.Window(c.Windows), IfJoined: ifJoined})
			}
			if s.Kind == kind && roundOf(s.Kind, r) == round {
				after = true
			}
		}
	}
	return out
}
