package procedure

import (
	"slices"
	"time"
)

// EventType is the type of a case event (the case-event-v2 "type").
type EventType string

// The case event types.
const (
	EventOpened                      EventType = "opened"
	EventRespondentInvited           EventType = "respondent_invited"
	EventRespondentJoined            EventType = "respondent_joined"
	EventStageOpened                 EventType = "stage_opened"
	EventAnswerFiled                 EventType = "answer_filed"
	EventMessagePosted               EventType = "message_posted"
	EventSubmissionFiled             EventType = "submission_filed"
	EventSubmissionAmended           EventType = "submission_amended"
	EventRecordConfirmationRequested EventType = "record_confirmation_requested"
	EventRecordConfirmationGiven     EventType = "record_confirmation_given"
	EventRecordConfirmed             EventType = "record_confirmed"
	EventRecordCorrected             EventType = "record_corrected"
	EventTerminationRequested        EventType = "termination_requested"
	EventTerminationLapsed           EventType = "termination_lapsed"
	EventTerminated                  EventType = "terminated"
	EventDeadlineApproaching         EventType = "deadline_approaching"
	EventDeadlineMissed              EventType = "deadline_missed"
	EventRepresentativeAppointed     EventType = "representative_appointed"
	EventRepresentativeChanged       EventType = "representative_changed"
	EventRepresentativeRemoved       EventType = "representative_removed"
	EventRespondentLinkReissued      EventType = "respondent_link_reissued"
	EventEvidenceExportReady         EventType = "evidence_export_ready"
)

// Audience says which sides' partners receive an event.
type Audience string

// The audiences.
const (
	// ToBoth: every partner of the case.
	ToBoth Audience = "both"
	// ToClaimant: the claimant side's partners.
	ToClaimant Audience = "claimant"
	// ToOther: the partners of the side that did not act.
	ToOther Audience = "other side"
	// ToStageActors: the sides expected to act in the stage now open.
	ToStageActors Audience = "sides acting in the stage"
	// ToPending: the sides that still have to act before the deadline.
	ToPending Audience = "sides still to act"
	// ToExportSide: the partners of the side whose evidence the event's
	// export holds (one event per side: see exportEvents).
	ToExportSide Audience = "the exported side"
)

// DeadlineSource says which deadline an event's deadlineAt carries.
type DeadlineSource string

// The deadline sources.
const (
	NoDeadline DeadlineSource = ""
	// StageDeadline: the deadline of the stage open after the act.
	StageDeadline DeadlineSource = "stage"
	// JoinDeadline: the stage deadline while the case awaits its respondent.
	JoinDeadline DeadlineSource = "respondent join, while awaited"
	// TerminationDeadline: the pending termination request's deadline.
	TerminationDeadline DeadlineSource = "termination confirmation"
)

// EventSpec is one row of the event table.
type EventSpec struct {
	Type           EventType
	When           string
	Audience       Audience
	ActionRequired bool
	Deadline       DeadlineSource
}

// EventSpecs is the event table.
var EventSpecs = []EventSpec{
	{EventOpened, "the case-opened event is applied", ToBoth, false, StageDeadline},
	{EventRespondentInvited, "the claimant invites the respondent (the invitation secret rotates)", ToClaimant, false, JoinDeadline},
	{EventRespondentJoined, "a respondent joins", ToBoth, false, NoDeadline},
	{EventStageOpened, "an answer, evidence or rebuttal stage opens", ToStageActors, true, StageDeadline},
	{EventAnswerFiled, "the respondent files its answer", ToClaimant, false, NoDeadline},
	{EventMessagePosted, "a side posts a message", ToOther, false, NoDeadline},
	{EventSubmissionFiled, "a side files a submission", ToOther, false, NoDeadline},
	{EventSubmissionAmended, "a side amends one of its submissions in the open stage", ToOther, false, NoDeadline},
	{EventRecordConfirmationRequested, "the last round closed: the sides confirm the record", ToStageActors, true, StageDeadline},
	{EventRecordConfirmationGiven, "one side confirmed the record; the other still has to", ToOther, true, StageDeadline},
	{EventRecordConfirmed, "every joined side confirmed the record, or its deadline passed", ToBoth, false, NoDeadline},
	{EventRecordCorrected, "a side corrected one of its record entries: the summary changed, and a confirmation given before is withdrawn", ToBoth, true, StageDeadline},
	{EventTerminationRequested, "a side asks to end the case", ToOther, true, TerminationDeadline},
	{EventTerminationLapsed, "the termination request was not confirmed in time, or the award was issued or the sides settled while it was pending", ToBoth, false, NoDeadline},
	{EventTerminated, "the other side confirmed termination, or the claimant withdrew before any respondent joined", ToBoth, false, NoDeadline},
	{EventDeadlineApproaching, "Warning before a stage deadline, while a side still has to act", ToPending, true, StageDeadline},
	{EventDeadlineMissed, "the join, answer or record-confirmation deadline passed without the act", ToBoth, false, NoDeadline},
	{EventRepresentativeAppointed, "a side appoints a representative", ToBoth, false, NoDeadline},
	{EventRepresentativeChanged, "a side changes a representative's label", ToBoth, false, NoDeadline},
	{EventRepresentativeRemoved, "a side removes a representative, whose authority ends at once", ToBoth, false, NoDeadline},
	{EventRespondentLinkReissued, "the claimant's partner reissues the hosted respondent's sign-in link (the old link stops working; open sessions stay)", ToClaimant, false, NoDeadline},
	{EventEvidenceExportReady, "the record closed: the export of each side's evidence is ready (one event per side, in the same step as record_confirmed)", ToExportSide, false, NoDeadline},
}

// Spec returns the table row of an event type.
func (t EventType) Spec() (EventSpec, bool) {
	i := slices.IndexFunc(EventSpecs, func(s EventSpec) bool { return s.Type == t })
	if i < 0 {
		return EventSpec{}, false
	}
	return EventSpecs[i], true
}

// Event is a case event an accepted act emits. Its id and sequence are
// assigned when the store records it.
type Event struct {
	Type           EventType
	OccurredAt     time.Time
	DeadlineAt     time.Time // zero: none
	ActionRequired bool
	// Recipients are the partners to notify, deduplicated, in side order.
	Recipients []Partner
	// ExportSide is the side whose evidence an evidence_export_ready
	// event announces; empty for every other type. The store indexes the
	// notification per recipient under it (store.ExportNote).
	ExportSide Side
}

// emit builds the event of type t after an act by side actor (empty for the
// scheduler) that left the case as c.
func emit(t EventType, c Case, actor Side, now time.Time) Event {
	spec, ok := t.Spec()
	if !ok {
		panic("procedure: event type without a spec: " + string(t))
	}
	ev := Event{Type: t, OccurredAt: now, ActionRequired: spec.ActionRequired}
	switch spec.Deadline {
	case StageDeadline:
		if c.Closed == "" {
			ev.DeadlineAt = c.Stage.DeadlineAt
		}
	case JoinDeadline:
		if c.Closed == "" && c.Stage.Kind == StageRespondentJoining {
			ev.DeadlineAt = c.Stage.DeadlineAt
		}
	case TerminationDeadline:
		if c.Termination != nil {
			ev.DeadlineAt = c.Termination.DeadlineAt
		}
	}
	var sides []Side
	switch spec.Audience {
	case ToBoth:
		sides = []Side{Claimant, Respondent}
	case ToClaimant:
		sides = []Side{Claimant}
	case ToOther:
		sides = []Side{actor.Other()}
	case ToStageActors:
		sides = stageActors(c)
	case ToPending:
		sides = pendingSides(c)
	}
	ev.Recipients = recipients(c, sides)
	return ev
}

// exportEvents are the evidence_export_ready events of a record that
// closed at now: one per side, to that side's partners only, since each
// side's export is its own evidence and the notification's signed event
// id is what the partner's receipt deduplicates on (spec, Events rule 5).
// A side nobody is called back for (a hosted respondent) gets none.
func exportEvents(c Case, now time.Time) []Event {
	var out []Event
	for _, s := range bothSides {
		r := recipients(c, []Side{s})
		if len(r) == 0 {
			continue
		}
		out = append(out, Event{Type: EventEvidenceExportReady, OccurredAt: now, Recipients: r, ExportSide: s})
	}
	return out
}

// recipients lists the partners of the given sides, each once.
func recipients(c Case, sides []Side) []Partner {
	var out []Partner
	for _, s := range sides {
		for _, p := range c.Recipients[s] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
