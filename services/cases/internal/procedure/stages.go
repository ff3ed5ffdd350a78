package procedure

import "time"

// StageKind is a kind of stage of the procedure.
type StageKind string

// The stage kinds, in procedural order.
const (
	StageRespondentJoining  StageKind = "respondent_joining"
	StageAnswer             StageKind = "answer"
	StageEvidence           StageKind = "evidence"
	StageRebuttal           StageKind = "rebuttal"
	StageRecordConfirmation StageKind = "record_confirmation"
)

// StageSpec is one row of the stage table: what entering a stage means.
type StageSpec struct {
	Kind   StageKind
	Status Status
	// Window is the stage's deadline window, measured from its opening.
	Window func(Windows) time.Duration
	// WindowName names Window for the documentation.
	WindowName string
	// Entry is the event entering the stage emits ("" for none: the case
	// awaits its respondent from the opening, which emits opened).
	Entry EventType
	// Rounds is how many of this stage the plan asks for.
	Rounds func(Plan) int
}

// Stages is the stage table, in procedural order. A case passes through
// each stage the plan asks for, in this order.
var Stages = []StageSpec{
	{StageRespondentJoining, StatusAwaitingRespondent, func(w Windows) time.Duration { return w.RespondentJoin }, "RespondentJoin", "",
		func(Plan) int { return 1 }},
	{StageAnswer, StatusAwaitingAnswer, func(w Windows) time.Duration { return w.Answer }, "Answer", EventStageOpened,
		func(p Plan) int { return boolInt(p.AnswerRequired) }},
	{StageEvidence, StatusEvidence, func(w Windows) time.Duration { return w.EvidenceRound }, "EvidenceRound", EventStageOpened,
		func(p Plan) int { return p.EvidenceRounds }},
	{StageRebuttal, StatusRebuttal, func(w Windows) time.Duration { return w.RebuttalRound }, "RebuttalRound", EventStageOpened,
		func(p Plan) int { return p.RebuttalRounds }},
	{StageRecordConfirmation, StatusAwaitingRecordConfirmation, func(w Windows) time.Duration { return w.RecordConfirmation }, "RecordConfirmation", EventRecordConfirmationRequested,
		func(p Plan) int { return boolInt(p.RecordConfirmationRequired) }},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lookupStage(k StageKind) (StageSpec, bool) {
	for _, s := range Stages {
		if s.Kind == k {
			return s, true
		}
	}
	return StageSpec{}, false
}

func stageSpec(k StageKind) StageSpec {
	s, ok := lookupStage(k)
	if !ok {
		panic("procedure: unknown stage " + string(k))
	}
	return s
}

// nextStage returns the stage after (kind, round) in c's plan, and false
// when the procedure has no more stages. The respondent-joining stage is
// only ever the first; leaving it goes to the answer (when the plan
// requires one and a respondent joined: a case in default has nobody to
// answer) or the first evidence round.
func nextStage(c Case, kind StageKind, round int) (StageKind, int, bool) {
	after := false
	for _, s := range Stages {
		if s.Kind == StageRespondentJoining {
			if kind == s.Kind {
				after = true
			}
			continue
		}
		n := s.Rounds(c.Plan)
		if s.Kind == StageAnswer && !c.RespondentJoined() {
			n = 0
		}
		for r := 1; r <= n; r++ {
			if after {
				return s.Kind, roundOf(s.Kind, r), true
			}
			if s.Kind == kind && roundOf(s.Kind, r) == round {
				after = true
			}
		}
	}
	return "", 0, false
}

// roundOf is the Round a stage carries: its number for rounds, 0 otherwise.
func roundOf(k StageKind, r int) int {
	if k == StageEvidence || k == StageRebuttal {
		return r
	}
	return 0
}

// enter opens the stage (kind, round) at now, closing the open one.
func (c *Case) enter(kind StageKind, round int, now time.Time) {
	c.leave(now)
	spec := stageSpec(kind)
	c.Stage = Stage{Kind: kind, Round: round, OpenedAt: now, DeadlineAt: now.Add(spec.Window(c.Windows))}
	if c.Windows.Warning*2 > spec.Window(c.Windows) {
		c.Stage.Warned = true // too short to warn in
	}
}

// stageActors are the sides expected to act in c's current stage.
func stageActors(c Case) []Side {
	if !c.running() {
		return nil
	}
	switch c.Stage.Kind {
	case StageRespondentJoining, StageAnswer:
		return []Side{Respondent}
	default:
		return c.presentSides()
	}
}

// pendingSides are the sides that still have to act in c's current stage.
func pendingSides(c Case) []Side {
	if !c.running() {
		return nil
	}
	var out []Side
	for _, s := range stageActors(c) {
		switch c.Stage.Kind {
		case StageRespondentJoining:
			if !c.RespondentJoined() {
				out = append(out, s)
			}
		case StageAnswer:
			if c.Answer == nil {
				out = append(out, s)
			}
		case StageEvidence, StageRebuttal:
			if c.filed(s) == 0 {
				out = append(out, s)
			}
		case StageRecordConfirmation:
			if _, ok := c.RecordConfirms[s]; !ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// leave records the open stage, if any, as past: closed at now.
func (c *Case) leave(now time.Time) {
	if c.Stage.Kind == "" {
		return
	}
	c.PastStages = append(c.PastStages, PastStage{Kind: c.Stage.Kind, Round: c.Stage.Round,
		OpenedAt: c.Stage.OpenedAt, DeadlineAt: c.Stage.DeadlineAt, ClosedAt: now})
}
