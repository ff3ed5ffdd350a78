package procedure

import (
	"slices"
	"time"
)

// ActKind is a kind of act on a case.
type ActKind string

// The acts.
const (
	ActInviteRespondent   ActKind = "invite_respondent"
	ActJoin               ActKind = "respondent_joins"
	ActFileAnswer         ActKind = "file_answer"
	ActPostMessage        ActKind = "post_message"
	ActMarkMessagesRead   ActKind = "mark_messages_read"
	ActFileSubmission     ActKind = "file_submission"
	ActAmendSubmission    ActKind = "amend_submission"
	ActConfirmRecord      ActKind = "confirm_record"
	ActCorrectRecord      ActKind = "correct_record"
	ActRequestTermination ActKind = "request_termination"
	ActConfirmTermination ActKind = "confirm_termination"
	// The representatives' acts (representatives.go).
	ActAppointRepresentative ActKind = "appoint_representative"
	ActChangeRepresentative  ActKind = "change_representative"
	ActRemoveRepresentative  ActKind = "remove_representative"
	// ActReissueLogin replaces the hosted respondent's one-time sign-in
	// link (the respondent_login capability).
	ActReissueLogin ActKind = "reissue_login"
	// ActDeadlineElapsed is the scheduler's act; [Tick] applies it.
	ActDeadlineElapsed ActKind = "deadline_elapsed"
)

// Act is one act of a participant. Ids are minted by the caller, so the
// same act decided twice gives the same case.
type Act struct {
	Kind          ActKind
	ParticipantID string
	// InvitationHash: for invite_respondent, the SHA-256 of the new
	// invitation secret (required); for respondent_joins, the SHA-256 of
	// the secret presented, or "" when the caller authorized the join by a
	// membership instead.
	InvitationHash string
	// LoginHash: for reissue_login, the SHA-256 of the new one-time
	// sign-in token of the hosted page (required).
	LoginHash string
	// SubmissionID names the submission filed or amended.
	SubmissionID string
	// Digest identifies the content of an answer, submission, amendment or
	// message (64 lowercase hex, SHA-256); the content is stored elsewhere.
	Digest string
	// TerminationID names the termination request made or confirmed.
	TerminationID string
	// MessageID names the message posted, or, for mark_messages_read, the
	// last message the side has read.
	MessageID string
	// EntryID names the record entry corrected (correct_record): "answer",
	// a submission id or a disclosed exhibit id; CorrectionID names the
	// correction, and Digest its text.
	EntryID      string
	CorrectionID string
	// SummaryDigest, for confirm_record, is the summary digest the side
	// read ([Case.RecordDigest]); "" confirms whatever the record is.
	SummaryDigest string
	// BindPartnerID: for respondent_joins of an unbound (hosted)
	// respondent, the partner whose agent joins with the invitation, which
	// from then on is the only partner that acts for it; "" when the
	// person signed in on the hosted page joins, who then is the only one.
	BindPartnerID string
	// BindAccountID: for respondent_joins of an unbound (hosted)
	// respondent by a person signed in on the hosted page who links the
	// invitation to their platform account: the account that from then on
	// is the only one that acts for it, through its sessions and tokens,
	// with no link needed again. Never set with BindPartnerID.
	BindAccountID string
	// RepresentativeID names the representative appointed, changed or
	// removed; Subject (appointment) is who represents, as a membership
	// subject, and Label (appointment, change) how the sides show it.
	RepresentativeID string
	Subject          string
	Label            string
}

// Next is where an accepted row moves the case.
type Next string

// The moves.
const (
	// Same: the case stays in its stage.
	Same Next = "same"
	// NextStage: the next stage of the plan opens at the act's instant,
	// with a fresh deadline, emitting its entry event after the row's.
	NextStage Next = "next stage"
	// RecordClosed: the case moves to record_confirmed.
	RecordClosed Next = "record_confirmed"
	// Ended: the case moves to terminated.
	Ended Next = "terminated"
)

// Condition is a named predicate of a row.
type Condition struct {
	Name  string
	Holds func(c Case, a Act, actor Side, now time.Time) bool
}

// Row is one row of the state table.
type Row struct {
	From  []Status
	Act   ActKind
	Sides []Side // nil for the scheduler
	When  Condition
	// Records names what the row writes into the case; Do writes it.
	Records string
	Do      func(c *Case, a Act, p Participant, now time.Time)
	Next    Next
	Emits   []EventType
}

var (
	running         = []Status{StatusAwaitingRespondent, StatusAwaitingAnswer, StatusEvidence, StatusRebuttal, StatusAwaitingRecordConfirmation}
	afterJoinStages = []Status{StatusAwaitingAnswer, StatusEvidence, StatusRebuttal, StatusAwaitingRecordConfirmation}
	rounds          = []Status{StatusEvidence, StatusRebuttal}
	notTerminated   = append(slices.Clone(running), StatusRecordConfirmed)
	bothSides       = []Side{Claimant, Respondent}
)

// represented: a side keeps its representatives until the case ends,
// after the award or the settlement too (what follows it is acted on for
// the sides).
var represented = append(slices.Clone(notTerminated), StatusAwarded, StatusSettled)

var (
	always = Condition{"—", func(Case, Act, Side, time.Time) bool { return true }}

	completesQuota = Condition{"every joined side has now filed its limit", func(c Case, _ Act, _ Side, _ time.Time) bool {
		for _, s := range c.presentSides() {
			if c.filed(s) < c.Plan.FilingsPerSidePerStage {
				return false
			}
		}
		return true
	}}
	completesRecord = Condition{"every joined side has now confirmed", func(c Case, _ Act, _ Side, _ time.Time) bool {
		for _, s := range c.presentSides() {
			if _, ok := c.RecordConfirms[s]; !ok {
				return false
			}
		}
		return true
	}}
	claimantAlone = Condition{"the claimant asks and no respondent has joined (withdrawal)", func(c Case, _ Act, actor Side, _ time.Time) bool {
		return actor == Claimant && !c.RespondentJoined()
	}}
	terminationDue = Condition{"a termination request reached its deadline", func(c Case, _ Act, _ Side, now time.Time) bool {
		return c.Termination != nil && !now.Before(c.Termination.DeadlineAt)
	}}
	stageDue = Condition{"the stage deadline is reached", func(c Case, _ Act, _ Side, now time.Time) bool {
		return c.running() && !now.Before(c.Stage.DeadlineAt)
	}}
	warningDue = Condition{"Warning before the stage deadline, a side still to act, not yet warned", func(c Case, _ Act, _ Side, now time.Time) bool {
		at, ok := warnAt(c)
		return ok && !now.Before(at)
	}}
)

// warnAt is when c's stage warning is due, if one is still to come.
func warnAt(c Case) (time.Time, bool) {
	if !c.running() || c.Stage.Warned || len(pendingSides(c)) == 0 {
		return time.Time{}, false
	}
	return c.Stage.DeadlineAt.Add(-c.Windows.Warning), true
}

// The row effects.
var (
	doNothing = func(*Case, Act, Participant, time.Time) {}
	doInvite  = func(c *Case, a Act, _ Participant, _ time.Time) {
		c.Capabilities[CapabilityRespondentInvite] = a.InvitationHash
	}
	doReissueLogin = func(c *Case, a Act, _ Participant, now time.Time) {
		c.Capabilities[CapabilityRespondentLogin] = a.LoginHash
		c.LoginReissues = append(recentReissues(*c, now), now)
	}
	doJoin = func(c *Case, a Act, p Participant, now time.Time) {
		for i := range c.Participants {
			if c.Participants[i].ID != p.ID {
				continue
			}
			c.Participants[i].JoinedAt = now
			if p.Unbound() {
				// The join binds a hosted respondent to whoever joined.
				c.Participants[i].PartnerID = a.BindPartnerID
				c.Participants[i].AccountID = a.BindAccountID
				c.Participants[i].Hosted = a.BindPartnerID == "" && a.BindAccountID == ""
				p = c.Participants[i]
			}
		}
		partner := Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: p.PartnerID}
		if p.PartnerID != "" && !slices.Contains(c.Recipients[Respondent], partner) {
			c.Recipients[Respondent] = append(c.Recipients[Respondent], partner)
		}
	}
	doAnswer = func(c *Case, a Act, p Participant, now time.Time) {
		c.Answer = &Answer{ParticipantID: p.ID, Digest: a.Digest, FiledAt: now}
	}
	doMessage = func(c *Case, a Act, p Participant, now time.Time) {
		c.Messages = append(c.Messages, Message{ID: a.MessageID, ParticipantID: p.ID, Side: p.Side, Digest: a.Digest, PostedAt: now})
	}
	doMarkRead = func(c *Case, a Act, p Participant, _ time.Time) {
		// Reading is monotonic: marking an earlier message read again
		// does not unread the later ones.
		n := slices.IndexFunc(c.Messages, func(m Message) bool { return m.ID == a.MessageID }) + 1
		c.MessagesRead[p.Side] = max(c.MessagesRead[p.Side], n)
	}
	doFile = func(c *Case, a Act, p Participant, now time.Time) {
		c.Submissions = append(c.Submissions, Submission{
			ID: a.SubmissionID, ParticipantID: p.ID, Side: p.Side, Stage: c.Stage.Kind, Round: c.Stage.Round, Digest: a.Digest, FiledAt: now,
		})
	}
	doAmend = func(c *Case, a Act, _ Participant, now time.Time) {
		for i := range c.Submissions {
			if c.Submissions[i].ID == a.SubmissionID {
				c.Submissions[i].Digest = a.Digest
				c.Submissions[i].AmendedAt = now
				c.Submissions[i].Amendments++
			}
		}
	}
	doConfirmRecord      = func(c *Case, _ Act, p Participant, now time.Time) { c.RecordConfirms[p.Side] = now }
	doRequestTermination = func(c *Case, a Act, p Participant, now time.Time) {
		c.Termination = &Termination{ID: a.TerminationID, Side: p.Side, ParticipantID: p.ID, RequestedAt: now, DeadlineAt: now.Add(c.Windows.TerminationConfirmation)}
	}
	doDropTermination = func(c *Case, _ Act, _ Participant, _ time.Time) { c.Termination = nil }
	doMissAnswer      = func(c *Case, _ Act, _ Participant, _ time.Time) { c.AnswerMissed = true }
	doDeemRecord      = func(c *Case, _ Act, _ Participant, _ time.Time) { c.RecordDeemed = true }
	doWarn            = func(c *Case, _ Act, _ Participant, _ time.Time) { c.Stage.Warned = true }
)

// Table is the state table. For an act, the first row whose From holds
// the case's status, whose Sides hold the actor's side and whose condition
// holds is applied. For the scheduler's deadline_elapsed, rows are applied
// one after the other, first match each time, until none holds.
var Table = []Row{
	{running, ActInviteRespondent, []Side{Claimant}, always, "the new invitation hash (the old secret stops working)", doInvite, Same, []EventType{EventRespondentInvited}},
	{[]Status{StatusAwaitingRespondent}, ActJoin, []Side{Respondent}, always, "the participant joined", doJoin, NextStage, []EventType{EventRespondentJoined}},
	{afterJoinStages, ActJoin, []Side{Respondent}, always, "the participant joined (the case went on in default; no stage reopens)", doJoin, Same, []EventType{EventRespondentJoined}},
	{[]Status{StatusAwaitingAnswer}, ActFileAnswer, []Side{Respondent}, always, "the answer", doAnswer, NextStage, []EventType{EventAnswerFiled}},
	{notTerminated, ActPostMessage, bothSides, always, "the message", doMessage, Same, []EventType{EventMessagePosted}},
	{notTerminated, ActMarkMessagesRead, bothSides, always, "the side's read position (no event: nobody is called back about it)", doMarkRead, Same, nil},
	{rounds, ActFileSubmission, bothSides, completesQuota, "the submission", doFile, NextStage, []EventType{EventSubmissionFiled}},
	{rounds, ActFileSubmission, bothSides, always, "the submission", doFile, Same, []EventType{EventSubmissionFiled}},
	{rounds, ActAmendSubmission, bothSides, always, "the new digest, amendment count", doAmend, Same, []EventType{EventSubmissionAmended}},
	{[]Status{StatusAwaitingRecordConfirmation}, ActConfirmRecord, bothSides, completesRecord, "the side's confirmation", doConfirmRecord, RecordClosed, []EventType{EventRecordConfirmed, EventEvidenceExportReady}},
	{[]Status{StatusAwaitingRecordConfirmation}, ActConfirmRecord, bothSides, always, "the side's confirmation", doConfirmRecord, Same, []EventType{EventRecordConfirmationGiven}},
	{[]Status{StatusAwaitingRecordConfirmation}, ActCorrectRecord, bothSides, always, "the correction; the other side's confirmation is withdrawn", doCorrect, Same, []EventType{EventRecordCorrected}},
	{notTerminated, ActRequestTermination, bothSides, claimantAlone, "—", doNothing, Ended, []EventType{EventTerminated}},
	{notTerminated, ActRequestTermination, bothSides, always, "the pending request, its deadline", doRequestTermination, Same, []EventType{EventTerminationRequested}},
	{notTerminated, ActConfirmTermination, bothSides, always, "—", doDropTermination, Ended, []EventType{EventTerminated}},
	{represented, ActReissueLogin, []Side{Claimant}, always, "the new respondent_login hash and the reissue's instant (the old link stops working; open sessions stay)", doReissueLogin, Same, []EventType{EventRespondentLinkReissued}},
	{represented, ActAppointRepresentative, bothSides, always, "the representative: its subject, label, side and who appointed it", doAppoint, Same, []EventType{EventRepresentativeAppointed}},
	{represented, ActChangeRepresentative, bothSides, always, "the representative's new label", doChangeRepresentative, Same, []EventType{EventRepresentativeChanged}},
	{represented, ActRemoveRepresentative, bothSides, always, "the representative's removal (its authority ends at once)", doRemoveRepresentative, Same, []EventType{EventRepresentativeRemoved}},

	{notTerminated, ActDeadlineElapsed, nil, terminationDue, "the request is dropped", doDropTermination, Same, []EventType{EventTerminationLapsed}},
	{[]Status{StatusAwaitingRespondent}, ActDeadlineElapsed, nil, stageDue, "— (the case goes on in default of the respondent)", doNothing, NextStage, []EventType{EventDeadlineMissed}},
	{[]Status{StatusAwaitingAnswer}, ActDeadlineElapsed, nil, stageDue, "the answer is missed", doMissAnswer, NextStage, []EventType{EventDeadlineMissed}},
	{rounds, ActDeadlineElapsed, nil, stageDue, "— (the round closes)", doNothing, NextStage, nil},
	{[]Status{StatusAwaitingRecordConfirmation}, ActDeadlineElapsed, nil, stageDue, "the record is deemed confirmed", doDeemRecord, RecordClosed, []EventType{EventDeadlineMissed, EventRecordConfirmed, EventEvidenceExportReady}},
	{running, ActDeadlineElapsed, nil, warningDue, "the stage is warned", doWarn, Same, []EventType{EventDeadlineApproaching}},
}

// CapabilityRespondentInvite is the capability purpose of the respondent's
// invitation secret; invite_respondent rotates it.
const CapabilityRespondentInvite = "respondent_invite"

// CapabilityRespondentLogin is the capability purpose of the hosted
// respondent's one-time sign-in token; reissue_login replaces it.
const CapabilityRespondentLogin = "respondent_login"

// The sign-in link's reissues: at most MaxLoginReissues within any
// LoginReissueWindow, counted from the case's own record of them, so the
// limit holds across restarts and replicas and needs no counter of its own.
const (
	MaxLoginReissues   = 3
	LoginReissueWindow = time.Hour
)

// recentReissues are the case's reissues within the window before now: the
// only ones the limit counts, and the only ones the case keeps.
func recentReissues(c Case, now time.Time) []time.Time {
	var out []time.Time
	for _, at := range c.LoginReissues {
		if now.Sub(at) < LoginReissueWindow {
			out = append(out, at)
		}
	}
	return out
}

// HostedRespondent reports whether the case has a respondent the hosted
// page serves: one that joined there, or one that has not joined and
// names no partner (it may still join there). Only such a respondent has a
// sign-in link to reissue; a respondent its partner acts for signs in
// with that partner.
func (c Case) HostedRespondent() bool {
	return slices.ContainsFunc(c.Participants, func(p Participant) bool {
		return p.Side == Respondent && (p.Hosted || p.Unbound())
	})
}

// LoginReissueAllowed reports whether one more reissue of the sign-in
// link fits the limit at now, and when the oldest counted one leaves the
// window otherwise. The hosted page's request for a new link counts
// against the same limit.
func (c Case) LoginReissueAllowed(now time.Time) (bool, time.Time) {
	recent := recentReissues(c, now)
	if len(recent) < MaxLoginReissues {
		return true, time.Time{}
	}
	return false, recent[0].Add(LoginReissueWindow)
}
