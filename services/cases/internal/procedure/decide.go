package procedure

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Outcome is the result of an accepted act: the case after it and the
// events to record, in order.
type Outcome struct {
	Case   Case
	Events []Event
	// Quiet says the case changed without an event (a decision act that
	// nobody is called back about, such as the reviewer's attestation).
	Quiet bool
}

// Changed reports whether the act changed anything worth storing.
func (o Outcome) Changed() bool { return len(o.Events) > 0 || o.Quiet }

// ErrInvalidOpening means a case-opened fact cannot open a case: it breaks
// an invariant (ids, plan, participants) or its rules version is unknown
// (also wrapping ErrUnknownRules).
var ErrInvalidOpening = errors.New("invalid case opening")

// Opening is what the case-opened fact says about a new case.
type Opening struct {
	EventID     string
	CaseID      string
	ExternalID  string
	Tenant      string
	Environment string
	PartnerID   string
	OpenedAt    time.Time
	Rules       Rules
	Plan        Plan
	FeeID       string
	FeeStatus   string
	// Mode is the case mode ("" reads as proceeding); Claim and
	// Evaluation are pinned as the draft had them.
	Mode       Mode
	Claim      Claim
	Evaluation *EvaluationDefinition
	// Participants have JoinedAt set for those that take part from the
	// opening: every claimant, and each respondent that confirmed the draft.
	// A claimant that names no partner acts through the filing partner; a
	// respondent that names none is hosted (Participant.Unbound).
	Participants []Participant
	// Recipients are the partners of each side. A side without an entry
	// gets the partners its participants act through.
	Recipients   map[Side][]Partner
	Capabilities map[string]string
	// Origin is the agent-commerce origin, when the draft had one.
	Origin *Origin
}

// filedByAccount reports whether an account takes part as a claimant: a
// case filed by an account has no filing partner.
func filedByAccount(ps []Participant) bool {
	return slices.ContainsFunc(ps, func(p Participant) bool { return p.Side == Claimant && p.AccountID != "" })
}

// Open opens a case at in.OpenedAt: the case awaits its respondent, or,
// when a respondent confirmed the draft, starts the first stage after
// joining. It emits opened and the first stage's entry event.
func Open(in Opening) (Outcome, error) {
	bad := func(format string, args ...any) (Outcome, error) {
		return Outcome{}, fmt.Errorf("%w %s: %s", ErrInvalidOpening, in.CaseID, fmt.Sprintf(format, args...))
	}
	windows, err := WindowsFor(in.Rules.Version, in.Plan.Profile)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w %s: %w", ErrInvalidOpening, in.CaseID, err)
	}
	if in.OpenedAt.IsZero() || in.Tenant == "" || in.Environment == "" || !validToken(in.EventID, 160) {
		return bad("event id, tenant, environment and opening time are required")
	}
	if in.PartnerID == "" && !filedByAccount(in.Participants) {
		// Only an account files through no partner: it is then a
		// claimant of the case.
		return bad("the filing partner is required unless an account filed the case")
	}
	now := in.OpenedAt.UTC().Truncate(time.Millisecond)
	c := Case{
		ID: in.CaseID, ExternalID: in.ExternalID, Tenant: in.Tenant, Environment: in.Environment, PartnerID: in.PartnerID,
		OpenedAt: now, OpenedEventID: in.EventID, Rules: in.Rules, Plan: in.Plan, Windows: windows,
		FeeID: in.FeeID, FeeStatus: in.FeeStatus, Mode: in.Mode, Claim: in.Claim,
		Participants: slices.Clone(in.Participants), Recipients: map[Side][]Partner{},
		Capabilities: map[string]string{}, RecordConfirms: map[Side]time.Time{}, MessagesRead: map[Side]int{},
		Origin: in.Origin.clone(),
	}
	for k, v := range in.Capabilities {
		c.Capabilities[k] = v
	}
	if c.Mode == "" {
		c.Mode = ModeProceeding
	}
	if e := in.Evaluation; e != nil {
		def := *e
		def.Criteria, def.AllowedOutcomes = slices.Clone(e.Criteria), slices.Clone(e.AllowedOutcomes)
		c.Evaluation = &def
	}
	for i, p := range c.Participants {
		if p.PartnerID == "" && p.AccountID == "" && p.Side == Claimant {
			// A claimant acts through a partner: the filing partner
			// when it names none. A respondent that names none is
			// hosted: nobody acts for it until it joins. An account's
			// participant acts through no partner.
			c.Participants[i].PartnerID = in.PartnerID
		}
		if p.Joined() {
			c.Participants[i].JoinedAt = now
		}
	}
	for _, s := range bothSides {
		if r, ok := in.Recipients[s]; ok {
			c.Recipients[s] = slices.Clone(r)
			continue
		}
		for _, p := range c.Participants {
			partner := Partner{Tenant: in.Tenant, Environment: in.Environment, PartnerID: p.PartnerID}
			if p.Side == s && p.PartnerID != "" && !slices.Contains(c.Recipients[s], partner) {
				c.Recipients[s] = append(c.Recipients[s], partner)
			}
		}
	}
	c.enter(StageRespondentJoining, 0, now)
	if c.RespondentJoined() {
		// A respondent that confirmed the draft joined at the opening:
		// its joining stage never ran, and is not one the case left.
		kind, round, _ := nextStage(c, StageRespondentJoining, 0)
		c.Stage = Stage{}
		c.enter(kind, round, now)
	}
	if err := c.Validate(); err != nil {
		return bad("%v", err)
	}
	events := []Event{emit(EventOpened, c, "", now)}
	if entry := stageSpec(c.Stage.Kind).Entry; entry != "" {
		events = append(events, emit(entry, c, "", now))
	}
	return Outcome{Case: c, Events: events}, nil
}

// deadlineBound are the acts refused once the deadline they race is reached.
var deadlineBound = []ActKind{ActFileAnswer, ActFileSubmission, ActAmendSubmission, ActConfirmRecord, ActCorrectRecord}

// Decide applies a participant's act at now, checking in this order (the
// first failure is returned, with c unchanged in the outcome):
//
//  1. invalid_act: unknown act, or a field it needs is missing or malformed;
//  2. not_a_participant: no participant has the act's participantId, or it
//     has not joined and the act is not respondent_joins;
//  3. case_closed: the case is terminated;
//  4. wrong_side: no row lets the participant's side take this act;
//  5. stage_closed: no row takes this act in the case's status;
//  6. deadline_passed: the stage deadline (answer, submissions, record
//     confirmation) or the termination request's deadline is reached, even
//     if the scheduler has not yet moved the case on;
//  7. the act's own preconditions: already_joined, invitation_mismatch,
//     filing_limit_reached, submission_not_found, stage_closed (amending a
//     submission of an earlier stage), message_not_found (marking read a
//     message the case does not have), entry_not_found (correcting an
//     entry the record does not have, or the other side's),
//     record_already_confirmed (confirming again, or correcting after
//     confirming), record_summary_digest_mismatch (confirming a summary
//     digest that is not the record's), termination_pending,
//     termination_request_not_found, wrong_side (confirming one's own
//     termination request), respondent_not_hosted (reissuing the sign-in
//     link of a case whose respondent a partner acts for),
//     login_reissue_limited (the link was reissued MaxLoginReissues times
//     within LoginReissueWindow); for the representatives: invalid_act (a
//     representative id already used), representative_exists (the subject
//     already represents a side), representative_limit_reached,
//     representative_not_found (unknown or removed), wrong_side (another
//     side's representative).
//
// Then the first row of [Table] that matches is applied; a row's condition
// reads the case with the act recorded.
func Decide(c Case, a Act, now time.Time) (Outcome, error) {
	unchanged := Outcome{Case: c}
	now = now.UTC().Truncate(time.Millisecond)
	if err := a.validate(); err != nil {
		return unchanged, err
	}
	p, ok := c.Participant(a.ParticipantID)
	if !ok {
		return unchanged, refuse(CodeNotAParticipant, "case %s has no participant %s", c.ID, a.ParticipantID)
	}
	if !p.Joined() && a.Kind != ActJoin {
		return unchanged, refuse(CodeNotAParticipant, "participant %s has not joined case %s", p.ID, c.ID)
	}
	if c.Closed == StatusTerminated {
		return unchanged, refuse(CodeCaseClosed, "case %s was terminated", c.ID)
	}
	rows := rowsFor(a.Kind)
	if !slices.ContainsFunc(rows, func(r Row) bool { return slices.Contains(r.Sides, p.Side) }) {
		return unchanged, refuse(CodeWrongSide, "the %s side may not %s", p.Side, a.Kind)
	}
	status := c.Status()
	if !slices.ContainsFunc(rows, func(r Row) bool { return slices.Contains(r.From, status) }) {
		return unchanged, refuse(CodeStageClosed, "case %s is %s; %s is not open", c.ID, status, a.Kind)
	}
	if slices.Contains(deadlineBound, a.Kind) && !now.Before(c.Stage.DeadlineAt) {
		return unchanged, refuse(CodeDeadlinePassed, "the %s deadline passed at %s", c.Stage.Kind, Timestamp(c.Stage.DeadlineAt))
	}
	if a.Kind == ActConfirmTermination && c.Termination != nil && !now.Before(c.Termination.DeadlineAt) {
		return unchanged, refuse(CodeDeadlinePassed, "termination request %s lapsed at %s", c.Termination.ID, Timestamp(c.Termination.DeadlineAt))
	}
	if err := c.precondition(a, p, now); err != nil {
		return unchanged, err
	}
	for _, r := range rows {
		if !slices.Contains(r.From, status) || !slices.Contains(r.Sides, p.Side) {
			continue
		}
		// An act's condition reads the case with the act recorded: "this
		// filing completes the quota", "this confirmation completes the record".
		next := c.clone()
		r.Do(&next, a, p, now)
		if r.When.Holds(next, a, p.Side, now) {
			return next.apply(r, p.Side, now), nil
		}
	}
	return unchanged, refuse(CodeStageClosed, "case %s is %s; %s is not open", c.ID, status, a.Kind)
}

// Tick applies the scheduler's deadline_elapsed at now: every due row, in
// table order, until none is due; a row's condition reads the case before
// the row applies. An outcome without events means nothing
// was due.
func Tick(c Case, now time.Time) Outcome {
	now = now.UTC().Truncate(time.Millisecond)
	out := Outcome{Case: c}
	rows := rowsFor(ActDeadlineElapsed)
	for range 2 * len(rows) { // each row disables itself; the bound is a guard
		i := slices.IndexFunc(rows, func(r Row) bool {
			return slices.Contains(r.From, out.Case.Status()) && r.When.Holds(out.Case, Act{}, "", now)
		})
		if i < 0 {
			break
		}
		next := out.Case.clone()
		rows[i].Do(&next, Act{}, Participant{}, now)
		step := next.apply(rows[i], "", now)
		out.Case = step.Case
		out.Events = append(out.Events, step.Events...)
	}
	return out
}

// NextDeadline returns the next instant at which Tick has something to do
// for c, and false when nothing is scheduled (a closed case without a
// pending termination request).
func NextDeadline(c Case) (time.Time, bool) {
	var at []time.Time
	if c.Termination != nil && c.Closed != StatusTerminated {
		at = append(at, c.Termination.DeadlineAt)
	}
	if c.running() {
		at = append(at, c.Stage.DeadlineAt)
	}
	if w, ok := warnAt(c); ok {
		at = append(at, w)
	}
	if t, ok := tribunal.NextDeadline(c.Tribunal, c.TribunalFacts()); ok {
		at = append(at, t)
	}
	if t, ok := afteraward.NextDeadline(c.AfterAward, c.AfterAwardFacts()); ok {
		at = append(at, t)
	}
	if len(at) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(at, func(a, b time.Time) int { return a.Compare(b) }), true
}

// apply moves c (the act already recorded) as r says and emits its events.
func (c Case) apply(r Row, actor Side, now time.Time) Outcome {
	var entry EventType
	switch r.Next {
	case NextStage:
		if kind, round, ok := nextStage(c, c.Stage.Kind, c.Stage.Round); ok {
			c.enter(kind, round, now)
			entry = stageSpec(kind).Entry
		}
	case RecordClosed:
		c.leave(now)
		c.Closed, c.ClosedAt = StatusRecordConfirmed, now
	case Ended:
		c.leave(now)
		c.Closed, c.ClosedAt, c.Termination = StatusTerminated, now, nil
	}
	var events []Event
	for _, t := range r.Emits {
		if t == EventEvidenceExportReady {
			events = append(events, exportEvents(c, now)...)
			continue
		}
		events = append(events, emit(t, c, actor, now))
	}
	if entry != "" {
		events = append(events, emit(entry, c, actor, now))
	}
	return Outcome{Case: c, Events: events}
}

func rowsFor(k ActKind) []Row {
	var out []Row
	for _, r := range Table {
		if r.Act == k {
			out = append(out, r)
		}
	}
	return out
}

// precondition checks step 7 of Decide.
func (c Case) precondition(a Act, p Participant, now time.Time) error {
	switch a.Kind {
	case ActInviteRespondent:
		if c.RespondentJoined() {
			return refuse(CodeAlreadyJoined, "a respondent already joined case %s", c.ID)
		}
	case ActReissueLogin:
		if !c.HostedRespondent() {
			return refuse(CodeRespondentNotHosted, "the respondent of case %s is acted for by its partner, not on the hosted page: it has no sign-in link", c.ID)
		}
		if ok, until := c.LoginReissueAllowed(now); !ok {
			return refuse(CodeLoginReissueLimited, "the sign-in link of case %s was reissued %d times within %s; the next may be asked for from %s", c.ID, MaxLoginReissues, LoginReissueWindow, Timestamp(until))
		}
	case ActJoin:
		if p.Joined() {
			return refuse(CodeAlreadyJoined, "participant %s joined at %s", p.ID, Timestamp(p.JoinedAt))
		}
		if a.InvitationHash != "" && a.InvitationHash != c.Capabilities[CapabilityRespondentInvite] {
			return refuse(CodeInvitationMismatch, "the invitation is not the current one of case %s", c.ID)
		}
		if a.BindAccountID != "" && !p.Unbound() {
			return refuse(CodeInvalidAct, "participant %s is acted for by its partner or its account already: only an invited respondent's join links an account", p.ID)
		}
	case ActPostMessage:
		if slices.ContainsFunc(c.Messages, func(m Message) bool { return m.ID == a.MessageID }) {
			return refuse(CodeInvalidAct, "message %s already exists", a.MessageID)
		}
	case ActMarkMessagesRead:
		if !slices.ContainsFunc(c.Messages, func(m Message) bool { return m.ID == a.MessageID }) {
			return refuse(CodeMessageNotFound, "case %s has no message %s", c.ID, a.MessageID)
		}
	case ActFileSubmission:
		if slices.ContainsFunc(c.Submissions, func(s Submission) bool { return s.ID == a.SubmissionID }) {
			return refuse(CodeInvalidAct, "submission %s already exists", a.SubmissionID)
		}
		if n := c.filed(p.Side); n >= c.Plan.FilingsPerSidePerStage {
			return refuse(CodeFilingLimitReached, "the %s side filed %d of %d submissions in %s round %d", p.Side, n, c.Plan.FilingsPerSidePerStage, c.Stage.Kind, c.Stage.Round)
		}
	case ActAmendSubmission:
		i := slices.IndexFunc(c.Submissions, func(s Submission) bool { return s.ID == a.SubmissionID && s.Side == p.Side })
		if i < 0 {
			return refuse(CodeSubmissionNotFound, "the %s side has no submission %s", p.Side, a.SubmissionID)
		}
		if s := c.Submissions[i]; s.Stage != c.Stage.Kind || s.Round != c.Stage.Round {
			return refuse(CodeStageClosed, "submission %s belongs to %s round %d, which closed", s.ID, s.Stage, s.Round)
		}
	case ActConfirmRecord:
		if at, ok := c.RecordConfirms[p.Side]; ok {
			return refuse(CodeRecordAlreadyConfirmed, "the %s side confirmed the record at %s", p.Side, Timestamp(at))
		}
		if d := c.RecordDigest(); a.SummaryDigest != "" && a.SummaryDigest != d {
			return refuse(CodeRecordDigestMismatch, "the record summary digest is %s, not %s: read the summary again", d, a.SummaryDigest)
		}
	case ActCorrectRecord:
		// The other side's entries are answered as absent: a side
		// corrects only what it filed.
		if side, ok := c.entrySide(a.EntryID); !ok || side != p.Side {
			return refuse(CodeEntryNotFound, "the %s side has no record entry %s", p.Side, a.EntryID)
		}
		if slices.ContainsFunc(c.Corrections, func(k RecordCorrection) bool { return k.ID == a.CorrectionID }) {
			return refuse(CodeInvalidAct, "correction %s already exists", a.CorrectionID)
		}
		if at, ok := c.RecordConfirms[p.Side]; ok {
			return refuse(CodeRecordAlreadyConfirmed, "the %s side confirmed the record at %s; it corrects no more", p.Side, Timestamp(at))
		}
	case ActRequestTermination:
		if c.Termination != nil {
			return refuse(CodeTerminationPending, "termination request %s awaits confirmation", c.Termination.ID)
		}
	case ActAppointRepresentative, ActChangeRepresentative, ActRemoveRepresentative:
		return c.representativePrecondition(a, p)
	case ActConfirmTermination:
		if c.Termination == nil || c.Termination.ID != a.TerminationID {
			return refuse(CodeTerminationRequestUnknown, "case %s has no pending termination request %s", c.ID, a.TerminationID)
		}
		if c.Termination.Side == p.Side {
			return refuse(CodeWrongSide, "the %s side made termination request %s; the other side confirms it", p.Side, a.TerminationID)
		}
	}
	return nil
}

// validate checks the act's own shape (step 1).
func (a Act) validate() error {
	need := func(name, v string, ok func(string) bool) error {
		if !ok(v) {
			return refuse(CodeInvalidAct, "%s: %s is missing or malformed", a.Kind, name)
		}
		return nil
	}
	id := func(s string) bool { return validToken(s, 64) }
	var errs []error
	switch a.Kind {
	case ActInviteRespondent:
		errs = append(errs, need("invitationHash", a.InvitationHash, isHex64))
	case ActReissueLogin:
		errs = append(errs, need("loginHash", a.LoginHash, isHex64))
	case ActJoin:
		errs = append(errs, need("invitationHash", a.InvitationHash, func(s string) bool { return s == "" || isHex64(s) }),
			need("bindAccountId", a.BindAccountID, func(s string) bool { return s == "" || (validToken(s, 160) && a.BindPartnerID == "") }))
	case ActFileAnswer:
		errs = append(errs, need("digest", a.Digest, isHex64))
	case ActPostMessage:
		errs = append(errs, need("messageId", a.MessageID, id), need("digest", a.Digest, isHex64))
	case ActMarkMessagesRead:
		errs = append(errs, need("messageId", a.MessageID, id))
	case ActFileSubmission, ActAmendSubmission:
		errs = append(errs, need("submissionId", a.SubmissionID, id), need("digest", a.Digest, isHex64))
	case ActConfirmRecord:
		errs = append(errs, need("summaryDigest", a.SummaryDigest, func(s string) bool { return s == "" || isHex64(s) }))
	case ActCorrectRecord:
		errs = append(errs, need("entryId", a.EntryID, id), need("correctionId", a.CorrectionID, id), need("digest", a.Digest, isHex64))
	case ActRequestTermination, ActConfirmTermination:
		errs = append(errs, need("terminationId", a.TerminationID, id))
	case ActAppointRepresentative:
		errs = append(errs, need("representativeId", a.RepresentativeID, id), need("subject", a.Subject, ValidSubject), need("label", a.Label, ValidRepresentativeLabel))
	case ActChangeRepresentative:
		errs = append(errs, need("representativeId", a.RepresentativeID, id), need("label", a.Label, ValidRepresentativeLabel))
	case ActRemoveRepresentative:
		errs = append(errs, need("representativeId", a.RepresentativeID, id))
	default:
		return refuse(CodeInvalidAct, "unknown act %q", a.Kind)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// Timestamp writes t as the case-event-v2 format: UTC, exactly three
// fractional digits, Z.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
