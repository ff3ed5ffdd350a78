package tribunal

import (
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
)

// ActKind is a kind of decision act.
type ActKind string

// The decision acts. The route of each is in docs/tribunal.md.
const (
	ActRequestRun        ActKind = "request_adjudication"    // reviewer: a fresh run in place of the open one
	ActFileProposal      ActKind = "file_proposal"           // adjudicator
	ActAskHumanAttention ActKind = "ask_human_attention"     // adjudicator
	ActResume            ActKind = "resume"                  // reviewer, after human attention
	ActGiveOpinion       ActKind = "give_opinion"            // reviewer: agree or revise
	ActObject            ActKind = "object"                  // reviewer: back to the adjudicator
	ActOverride          ActKind = "override"                // reviewer: its own outcome
	ActAttest            ActKind = "attest"                  // reviewer
	ActOpenPreAward      ActKind = "open_pre_award_review"   // reviewer
	ActAnswerPreAward    ActKind = "answer_pre_award_review" // a side
	ActSignOff           ActKind = "sign_off"                // reviewer
	ActRecuse            ActKind = "recuse"                  // either member
	ActIssueRuling       ActKind = "issue_ruling"            // reviewer
	ActChallenge         ActKind = "challenge_configuration" // a side
	ActResolveChallenge  ActKind = "resolve_challenge"       // reviewer
	ActAcceptEvaluation  ActKind = "accept_evaluation"       // a side
)

// actor is who may take an act: a role, or a side ("").
var actor = map[ActKind]Role{
	ActRequestRun: Reviewer, ActFileProposal: Adjudicator, ActAskHumanAttention: Adjudicator, ActResume: Reviewer,
	ActGiveOpinion: Reviewer, ActObject: Reviewer, ActOverride: Reviewer, ActAttest: Reviewer, ActOpenPreAward: Reviewer,
	ActAnswerPreAward: "", ActSignOff: Reviewer, ActRecuse: "any", ActIssueRuling: Reviewer, ActChallenge: "",
	ActResolveChallenge: Reviewer, ActAcceptEvaluation: "",
}

// openIn are the stages in which each act may be taken.
var openIn = map[ActKind][]Stage{
	ActRequestRun:        {StageAdjudication},
	ActFileProposal:      {StageAdjudication},
	ActAskHumanAttention: {StageAdjudication},
	ActResume:            {StageHumanAttention},
	ActGiveOpinion:       {StageReview},
	ActObject:            {StageReview},
	ActOverride:          {StageReview},
	ActAttest:            {StageReview, StagePreAwardReview},
	ActOpenPreAward:      {StageReview},
	ActAnswerPreAward:    {StagePreAwardReview},
	ActSignOff:           {StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview},
	ActRecuse:            {StageAwaitingRecord, StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview},
	ActIssueRuling:       {StageAwaitingRecord, StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview, StageEvaluationIssued},
	ActChallenge:         {StageAwaitingRecord, StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview},
	ActResolveChallenge:  {StageAwaitingRecord, StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview},
	ActAcceptEvaluation:  {StageEvaluationIssued},
}

// Acts lists every act, for docs and tests.
var Acts = []ActKind{
	ActRequestRun, ActFileProposal, ActAskHumanAttention, ActResume, ActGiveOpinion, ActObject, ActOverride, ActAttest,
	ActOpenPreAward, ActAnswerPreAward, ActSignOff, ActRecuse, ActIssueRuling, ActChallenge, ActResolveChallenge, ActAcceptEvaluation,
}

// The limits of what an act carries.
const (
	MaxTextRunes     = 20000 // reasons, a ruling
	MaxShortRunes    = 4000  // instructions, grounds, a human-attention reason
	MaxRemedies      = 10
	MaxCitations     = 50
	MaxPinpointRunes = 500
	MaxClerical      = 10
	MaxClericalRunes = 2000
	MaxRuns          = 8
)

// Act is one decision act.
type Act struct {
	Kind ActKind
	// MemberID is the credential id of the tribunal member who acts.
	MemberID string
	// Side and ParticipantID say who acts for a side's act.
	Side          string
	ParticipantID string
	// RunID and InputDigest name the run a proposal or a human-attention
	// request answers and the record it read.
	RunID       string
	InputDigest string
	// Proposal is the adjudicator's proposal or the reviewer's override.
	Proposal *award.Proposal
	// Text is the act's text: reasons (opinion, resolution), instructions
	// (objection, resume, request), grounds (challenge), the ruling, the
	// reason for human attention or recusal.
	Text        string
	Opinion     Opinion
	ChallengeID string
	Uphold      bool
	// Errors are the clerical errors a side points out (may be empty).
	Errors []string
	// Candidates is the tribunal pool as it was read, for the acts that
	// may replace a member (recusal, an upheld challenge).
	Candidates []Candidate
}

// Outcome is an accepted act: the next state and the events to record.
type Outcome struct {
	State State
	Notes []Note
	// Award is the award issued by this act, if it issued one; its
	// canonical bytes are the json artifact (State.Award.AwardHash is
	// their digest).
	Award *award.Document
	// Quiet says the state changed without an event (an assignment put
	// off because the pool had nobody eligible).
	Quiet bool
}

// Decide applies act at now, checking in this order (the first failure is
// returned with s unchanged):
//
//  1. invalid_tribunal_act: unknown act; a field it needs missing, too long
//     or malformed (a proposal's shape, an opinion, a side);
//  2. not_tribunal_member: a member's act by a credential that is not an
//     assigned member of the case;
//  3. wrong_tribunal_role: by the other member (an adjudicator signing off);
//  4. case_closed: the case was terminated;
//  5. award_already_issued: the award is issued (a second sign-off);
//  6. decision_stage_closed: the act is not open in the stage (a proposal
//     while the reviewer reviews, an override before any proposal);
//  7. the act's own checks, in the order docs/tribunal.md lists them.
func Decide(s State, f Facts, a Act, now time.Time) (Outcome, error) {
	unchanged := Outcome{State: s}
	now = now.UTC().Truncate(time.Millisecond)
	if err := a.validate(f); err != nil {
		return unchanged, err
	}
	role := actor[a.Kind]
	if role != "" {
		m, ok := s.Member(a.MemberID)
		if !ok {
			return unchanged, refuse(CodeNotTribunal, "credential %s is not a tribunal member of case %s", a.MemberID, f.CaseID)
		}
		if role != "any" && m.Role != role {
			return unchanged, refuse(CodeWrongRole, "the %s may not %s; the %s does", m.Role, a.Kind, role)
		}
	}
	if f.Terminated {
		return unchanged, refuse(CodeCaseClosed, "case %s was terminated", f.CaseID)
	}
	if s.Awarded() {
		return unchanged, refuse(CodeAwardIssued, "the award %s of case %s is issued", s.Award.AwardID, f.CaseID)
	}
	if !slices.Contains(openIn[a.Kind], s.Stage) {
		return unchanged, refuse(CodeDecisionStage, "the decision of case %s is at %s; %s is not open", f.CaseID, stageName(s.Stage), a.Kind)
	}
	next := s.Clone()
	out, err := apply(&next, f, a, now)
	if err != nil {
		return unchanged, err
	}
	out.State = next
	return out, nil
}

func stageName(s Stage) string {
	if s == StageUnassigned {
		return "unassigned"
	}
	return string(s)
}

// apply runs step 7 and the act's effect on s.
func apply(s *State, f Facts, a Act, now time.Time) (Outcome, error) {
	switch a.Kind {
	case ActRequestRun:
		if err := s.supersedeAndOpen(f, a.Text, now); err != nil {
			return Outcome{}, err
		}
		return Outcome{Notes: []Note{note(EventAdjudicationRequested, ToAdjudicator)}}, nil

	case ActFileProposal:
		run, err := s.openRun(a.RunID)
		if err != nil {
			return Outcome{}, err
		}
		if a.InputDigest != run.InputDigest {
			return Outcome{}, refuse(CodeInputDigestMismatch, "run %s reads the confirmed record with digest %s, not %s", run.ID, run.InputDigest, a.InputDigest)
		}
		if err := checkProposal(*a.Proposal, f, now); err != nil {
			return Outcome{}, err
		}
		p := normalized(*a.Proposal)
		b, err := award.Canonical(p)
		if err != nil {
			return Outcome{}, refuse(CodeInvalidAct, "the proposal cannot be written canonically: %v", err)
		}
		r := &s.Runs[len(s.Runs)-1]
		r.Status, r.Proposal, r.OutputDigest, r.FiledAt = RunProposed, &p, award.Hash(b), now
		s.Stage = StageReview
		return Outcome{Notes: []Note{note(EventProposalFiled, ToReviewer)}}, nil

	case ActAskHumanAttention:
		if _, err := s.openRun(a.RunID); err != nil {
			return Outcome{}, err
		}
		r := &s.Runs[len(s.Runs)-1]
		r.Status, r.AttentionReason, r.FiledAt = RunHumanAttention, a.Text, now
		s.Stage = StageHumanAttention
		return Outcome{Notes: []Note{note(EventHumanAttentionNeeded, ToReviewer)}}, nil

	case ActResume:
		if err := s.openNextRun(f, a.Text, now); err != nil {
			return Outcome{}, err
		}
		return Outcome{Notes: []Note{note(EventHumanAttentionResumed, ToTribunal), note(EventAdjudicationRequested, ToAdjudicator)}}, nil

	case ActGiveOpinion:
		s.Review.Opinion, s.Review.OpinionAt, s.Review.Override = a.Opinion, now, nil
		s.Review.Reasons = ""
		if a.Opinion == OpinionRevise {
			s.Review.Reasons = a.Text
		}
		return Outcome{Quiet: true}, nil

	case ActObject:
		s.Runs[len(s.Runs)-1].Status = RunSuperseded
		if err := s.openNextRun(f, a.Text, now); err != nil {
			return Outcome{}, err
		}
		return Outcome{Notes: []Note{note(EventAdjudicationRequested, ToAdjudicator)}}, nil

	case ActOverride:
		if err := checkProposal(*a.Proposal, f, now); err != nil {
			return Outcome{}, err
		}
		p := normalized(*a.Proposal)
		s.Review.Override, s.Review.Opinion, s.Review.Reasons, s.Review.OpinionAt = &p, OpinionRevise, p.Reasons, now
		return Outcome{Quiet: true}, nil

	case ActAttest:
		s.Review.AttestedAt = now
		return Outcome{Quiet: true}, nil

	case ActOpenPreAward:
		d, ok := s.Dispositive()
		if !ok {
			return Outcome{}, refuse(CodeNoProposal, "case %s has no proposal to show", f.CaseID)
		}
		if s.Review.Opinion == "" {
			return Outcome{}, refuse(CodeOpinionRequired, "give the reviewer opinion (or override) before showing the sides the dispositive part")
		}
		s.PreAward = &PreAwardReview{OpenedAt: now, DeadlineAt: now.Add(f.Windows.PreAwardReview), DispositiveDigest: DispositiveDigest(d)}
		s.Stage = StagePreAwardReview
		n := note(EventPreAwardReviewOpened, ToSides)
		n.DeadlineAt = s.PreAward.DeadlineAt
		return Outcome{Notes: []Note{n}}, nil

	case ActAnswerPreAward:
		if slices.ContainsFunc(s.PreAward.Notes, func(n ClericalNote) bool { return n.Side == a.Side }) {
			return Outcome{}, refuse(CodeAlreadyAnswered, "the %s side answered the pre-award review", a.Side)
		}
		s.PreAward.Notes = append(s.PreAward.Notes, ClericalNote{Side: a.Side, Errors: nonNil(a.Errors), AnsweredAt: now})
		for _, side := range f.joinedSides() {
			if !slices.ContainsFunc(s.PreAward.Notes, func(n ClericalNote) bool { return n.Side == side }) {
				return Outcome{Quiet: true}, nil
			}
		}
		s.closePreAward(now)
		return Outcome{Notes: []Note{note(EventPreAwardReviewClosed, ToTribunal)}}, nil

	case ActSignOff:
		return s.signOff(f, now)

	case ActRecuse:
		m, _ := s.Member(a.MemberID)
		if err := s.replace(f, m.Role, a.Candidates, now, ""); err != nil {
			return Outcome{}, err
		}
		notes := []Note{note(EventTribunalAssigned, ToSides)}
		if m.Role == Adjudicator && (s.Stage == StageAdjudication || s.Stage == StageHumanAttention || s.Stage == StageReview || s.Stage == StagePreAwardReview) {
			s.restartRun(f, "", now)
			notes = append(notes, note(EventAdjudicationRequested, ToAdjudicator))
		}
		return Outcome{Notes: notes}, nil

	case ActIssueRuling:
		s.Rulings = append(s.Rulings, Ruling{ID: "ruling-" + strconv.Itoa(len(s.Rulings)+1), Text: a.Text, IssuedAt: now})
		return Outcome{Notes: []Note{note(EventProceduralRuling, ToSides)}}, nil

	case ActChallenge:
		if !now.Before(s.ChallengeDeadline) {
			return Outcome{}, refuse(CodeChallengeWindowClosed, "the window to challenge the adjudicator's configuration closed at %s", ts(s.ChallengeDeadline))
		}
		if slices.ContainsFunc(s.Challenges, func(c Challenge) bool { return c.Status == ChallengePending && c.Side == a.Side }) {
			return Outcome{}, refuse(CodeChallengePending, "a challenge of the %s side awaits the reviewer", a.Side)
		}
		s.Challenges = append(s.Challenges, Challenge{
			ID: "challenge-" + strconv.Itoa(len(s.Challenges)+1), Side: a.Side, ParticipantID: a.ParticipantID, Grounds: a.Text,
			FiledAt: now, Status: ChallengePending, ConfigurationDigest: s.Adjudicator.ConfigurationDigest,
		})
		n := note(EventConfigurationChallenged, ToOtherSide)
		n.Actor = a.Side
		return Outcome{Notes: []Note{n}}, nil

	case ActResolveChallenge:
		i := slices.IndexFunc(s.Challenges, func(c Challenge) bool { return c.ID == a.ChallengeID })
		if i < 0 || s.Challenges[i].Status != ChallengePending {
			return Outcome{}, refuse(CodeChallengeNotFound, "case %s has no pending challenge %s", f.CaseID, a.ChallengeID)
		}
		s.Challenges[i].Reasons, s.Challenges[i].ResolvedAt, s.Challenges[i].Status = a.Text, now, ChallengeDismissed
		notes := []Note{note(EventConfigurationChallengeDone, ToSides)}
		if a.Uphold {
			s.Challenges[i].Status = ChallengeUpheld
			if s.Challenges[i].ConfigurationDigest != s.Adjudicator.ConfigurationDigest {
				// The challenged configuration is gone already (a recusal
				// replaced it): upholding changes nothing more.
				return Outcome{Notes: notes}, nil
			}
			if err := s.replace(f, Adjudicator, a.Candidates, now, s.Challenges[i].ConfigurationDigest); err != nil {
				return Outcome{}, err
			}
			notes = append(notes, note(EventTribunalAssigned, ToSides))
			if s.Stage != StageAwaitingRecord {
				s.restartRun(f, "", now)
				notes = append(notes, note(EventAdjudicationRequested, ToAdjudicator))
			}
		}
		return Outcome{Notes: notes}, nil

	case ActAcceptEvaluation:
		if slices.ContainsFunc(s.Evaluation.Acceptances, func(x Acceptance) bool { return x.Side == a.Side }) {
			return Outcome{}, refuse(CodeAlreadyAnswered, "the %s side accepted the evaluation", a.Side)
		}
		s.Evaluation.Acceptances = append(s.Evaluation.Acceptances, Acceptance{Side: a.Side, AcceptedAt: now})
		notes := []Note{note(EventEvaluationAccepted, ToSides)}
		for _, side := range f.joinedSides() {
			if !slices.ContainsFunc(s.Evaluation.Acceptances, func(x Acceptance) bool { return x.Side == side }) {
				return Outcome{Notes: notes}, nil
			}
		}
		out := s.issue(f, now)
		out.Notes = append(notes, out.Notes...)
		return out, nil
	}
	return Outcome{}, refuse(CodeInvalidAct, "unknown act %q", a.Kind)
}

// signOff issues the award (or the evaluation), checking in order:
// no_proposal, reviewer_opinion_required, reviewer_attestation_required,
// pre_award_review_required (never opened, still open, or the dispositive
// part changed since), challenge_pending.
func (s *State) signOff(f Facts, now time.Time) (Outcome, error) {
	d, ok := s.Dispositive()
	switch {
	case !ok:
		return Outcome{}, refuse(CodeNoProposal, "case %s has no proposal to sign (the decision is at %s)", f.CaseID, stageName(s.Stage))
	case s.Review.Opinion == "":
		return Outcome{}, refuse(CodeOpinionRequired, "file the reviewer opinion (agree or revise) or override before signing")
	case s.Review.AttestedAt.IsZero():
		return Outcome{}, refuse(CodeAttestationRequired, "file the reviewer attestation before signing")
	case s.PreAward == nil:
		return Outcome{}, refuse(CodePreAwardReviewRequired, "open the pre-award review: both sides see the dispositive part before signing")
	case s.PreAward.ClosedAt.IsZero():
		return Outcome{}, refuse(CodePreAwardReviewRequired, "the pre-award review is open until %s or until both sides answer", ts(s.PreAward.DeadlineAt))
	case s.PreAward.DispositiveDigest != DispositiveDigest(d):
		return Outcome{}, refuse(CodePreAwardReviewRequired, "the dispositive part changed after the pre-award review; open it again")
	case s.PendingChallenge():
		return Outcome{}, refuse(CodeChallengePending, "an AI-configuration challenge awaits resolution")
	}
	s.Runs[len(s.Runs)-1].Status = RunUsed
	if f.Evaluation && f.ReviewPolicy != "none" {
		s.Stage = StageEvaluationIssued
		s.Evaluation = &EvaluationResult{Outcome: d.Outcome, IssuedAt: now}
		if f.ReviewPolicy == "on_request" {
			s.Evaluation.DeadlineAt = now.Add(f.Windows.EvaluationAcceptance)
		}
		n := note(EventEvaluationIssued, ToSides)
		n.DeadlineAt = s.Evaluation.DeadlineAt
		return Outcome{Notes: []Note{n}}, nil
	}
	return s.issue(f, now), nil
}

// issue issues the award from the dispositive part at now.
func (s *State) issue(f Facts, now time.Time) Outcome {
	d, _ := s.Dispositive()
	doc := BuildAward(*s, f, d, now)
	b, err := doc.Bytes()
	if err != nil {
		panic("tribunal: award bytes: " + err.Error()) // built here from checked parts
	}
	s.Stage = StageAwarded
	s.Award = &Issued{AwardID: doc.AwardID, AwardHash: award.Hash(b), IssuedAt: now, Outcome: d.Outcome, Ordered: ordered(d)}
	return Outcome{Notes: awardNotes(s.Award.Ordered), Award: &doc}
}

// awardNotes are award_issued's two notes: to the sides the award orders
// to act, and to the others (each only when it has sides).
func awardNotes(ordered []string) []Note {
	var notes []Note
	var others []string
	for _, side := range []string{Claimant, Respondent} {
		if !slices.Contains(ordered, side) {
			others = append(others, side)
		}
	}
	if len(ordered) > 0 {
		n := note(EventAwardIssued, ToOrdered)
		n.Sides = slices.Clone(ordered)
		notes = append(notes, n)
	}
	if len(others) > 0 {
		n := note(EventAwardIssued, ToUnordered)
		n.Sides = others
		notes = append(notes, n)
	}
	return notes
}

// ordered are the sides a remedy orders to act.
func ordered(p award.Proposal) []string {
	var out []string
	for _, side := range []string{Claimant, Respondent} {
		if slices.ContainsFunc(p.Remedies, func(r award.Remedy) bool { return r.Payer == side || r.Obligor == side }) {
			out = append(out, side)
		}
	}
	return out
}

// DispositiveDigest is the digest of what the award orders: its outcome
// and remedies (not the reasons), as the pre-award review shows them.
func DispositiveDigest(p award.Proposal) string {
	b, err := award.Canonical(struct {
		Outcome  string         `json:"outcome"`
		Remedies []award.Remedy `json:"remedies"`
	}{p.Outcome, nonNilRemedies(p.Remedies)})
	if err != nil {
		panic("tribunal: dispositive digest: " + err.Error())
	}
	return award.Hash(b)
}

// openRun returns the open run if runID names it.
func (s *State) openRun(runID string) (Run, error) {
	r, ok := s.CurrentRun()
	if !ok || r.ID != runID || r.Status != RunOpen {
		return Run{}, refuse(CodeRunMismatch, "run %s is not the open run", runID)
	}
	return r, nil
}

// openNextRun opens a new run after the last, with the reviewer's
// instructions; the review of the old proposal no longer applies.
func (s *State) openNextRun(f Facts, instructions string, now time.Time) error {
	if len(s.Runs) >= MaxRuns {
		return refuse(CodeRunLimitReached, "case %s had %d runs; decide on the last proposal, override it, or recuse", f.CaseID, MaxRuns)
	}
	s.Runs = append(s.Runs, Run{
		ID: "run-" + strconv.Itoa(len(s.Runs)+1), Number: len(s.Runs) + 1, AdjudicatorID: s.Adjudicator.CredentialID,
		ConfigurationDigest: s.Adjudicator.ConfigurationDigest, InputDigest: RecordDigest(f.Record),
		Instructions: instructions, RequestedAt: now, Status: RunOpen,
	})
	s.Review, s.PreAward, s.Stage = Review{}, nil, StageAdjudication
	return nil
}

// supersedeAndOpen replaces the open run by a fresh one.
func (s *State) supersedeAndOpen(f Facts, instructions string, now time.Time) error {
	if len(s.Runs) >= MaxRuns {
		return refuse(CodeRunLimitReached, "case %s had %d runs", f.CaseID, MaxRuns)
	}
	s.Runs[len(s.Runs)-1].Status = RunSuperseded
	return s.openNextRun(f, instructions, now)
}

// restartRun opens a run for a new adjudicator, superseding the current
// one; the run limit does not apply (the change was not the reviewer's).
func (s *State) restartRun(f Facts, instructions string, now time.Time) {
	if n := len(s.Runs); n > 0 && s.Runs[n-1].Status != RunUsed {
		s.Runs[n-1].Status = RunSuperseded
	}
	s.Runs = append(s.Runs, Run{
		ID: "run-" + strconv.Itoa(len(s.Runs)+1), Number: len(s.Runs) + 1, AdjudicatorID: s.Adjudicator.CredentialID,
		ConfigurationDigest: s.Adjudicator.ConfigurationDigest, InputDigest: RecordDigest(f.Record),
		Instructions: instructions, RequestedAt: now, Status: RunOpen,
	})
	s.Review, s.PreAward, s.Stage = Review{}, nil, StageAdjudication
}

func (s *State) closePreAward(now time.Time) {
	s.PreAward.ClosedAt = now
	s.Stage = StageReview
}

// replace puts an eligible candidate in place of the member of role; the
// old one is never assigned to the case again. avoid is the digest of a
// configuration the replacement must not have (an upheld challenge's), or "".
func (s *State) replace(f Facts, role Role, pool []Candidate, now time.Time, avoid string) error {
	old := s.Reviewer
	if role == Adjudicator {
		old = s.Adjudicator
	}
	s.Recused = append(s.Recused, old.CredentialID)
	m, ok := pick(*s, f, role, pool, now, avoid)
	if !ok {
		return refuse(CodeNoReplacement, "the tribunal pool has no other eligible %s for case %s; an operator adds one with pcadm tribunal add", role, f.CaseID)
	}
	s.set(f, m, now)
	return nil
}

// set assigns m in its role.
func (s *State) set(f Facts, m Member, now time.Time) {
	if m.Role == Adjudicator {
		s.Adjudicator = &m
		s.ChallengeDeadline = now.Add(f.Windows.ConfigurationChallenge)
		return
	}
	s.Reviewer = &m
}

// pick returns the first candidate of role, in pool order, that is not
// assigned or recused here, has no conflict with either side, and (an
// adjudicator) has a valid configuration other than avoid (the digest of
// a configuration being replaced; "" for none).
func pick(s State, f Facts, role Role, pool []Candidate, now time.Time, avoid string) (Member, bool) {
	for _, c := range pool {
		switch {
		case c.Role != role, slices.Contains(s.Recused, c.CredentialID), conflicted(f, c):
			continue
		case s.Adjudicator != nil && s.Adjudicator.CredentialID == c.CredentialID,
			s.Reviewer != nil && s.Reviewer.CredentialID == c.CredentialID:
			continue
		case role == Adjudicator && (c.Configuration == nil || c.Configuration.Validate() != nil):
			continue
		}
		m := Member{CredentialID: c.CredentialID, Role: role, PartnerID: c.PartnerID, AgentID: c.AgentID, AssignedAt: now}
		if role == Adjudicator {
			cfg := *c.Configuration
			cfg.Tools = nonNil(cfg.Tools)
			digest, err := cfg.Digest()
			if err != nil || (avoid != "" && digest == avoid) {
				continue
			}
			m.Configuration, m.ConfigurationDigest = &cfg, digest
		}
		return m, true
	}
	return Member{}, false
}

// AppellateReviewer picks the reviewer who hears an appeal of the award:
// the first reviewer of the pool who took no part in the case's tribunal
// (neither member, nor recused) and has no conflict with either side.
func AppellateReviewer(s State, f Facts, pool []Candidate, now time.Time) (Member, bool) {
	return pick(s, f, Reviewer, pool, now, "")
}

// conflicted: the candidate's partner acts for a side, or its agent id is
// a participant's principal or agent.
func conflicted(f Facts, c Candidate) bool {
	for _, p := range f.Parties {
		if c.PartnerID != "" && c.PartnerID == p.PartnerID {
			return true
		}
		if c.AgentID != "" && (c.AgentID == p.AgentID || c.AgentID == p.PrincipalID) {
			return true
		}
	}
	return false
}

// Tick applies what is due at now with a snapshot of the tribunal pool:
// the assignment (a proceeding once its record closed, an evaluation from
// its opening), the first run once the record closed, the end of a
// pre-award review window, and an on_request evaluation deemed accepted.
// An outcome without notes and not Quiet means nothing was due.
func Tick(s State, f Facts, pool []Candidate, now time.Time) Outcome {
	now = now.UTC().Truncate(time.Millisecond)
	if f.Terminated || s.Awarded() {
		return Outcome{State: s}
	}
	next := s.Clone()
	var out Outcome
	switch {
	case s.Stage == StageUnassigned && settled(f) && !now.Before(s.AssignAfter):
		// A settlement needs no adjudicator: nobody decides it. The
		// reviewer records the sides' terms.
		rev, ok := pick(next, f, Reviewer, pool, now, "")
		if !ok {
			next.AssignAfter = now.Add(f.Windows.AssignmentRetry)
			return Outcome{State: next, Quiet: true}
		}
		next.AssignAfter = time.Time{}
		next.set(f, rev, now)
		next.Stage = StageSettlement
		out.Notes = append(out.Notes, note(EventTribunalAssigned, ToSides))
	case s.Stage == StageUnassigned && assignable(f) && !now.Before(s.AssignAfter):
		adj, okA := pick(next, f, Adjudicator, pool, now, "")
		rev, okR := pick(next, f, Reviewer, pool, now, "")
		if !okA || !okR {
			next.AssignAfter = now.Add(f.Windows.AssignmentRetry)
			return Outcome{State: next, Quiet: true}
		}
		next.AssignAfter = time.Time{}
		next.set(f, adj, now)
		next.set(f, rev, now)
		next.Stage = StageAwaitingRecord
		out.Notes = append(out.Notes, note(EventTribunalAssigned, ToSides))
		if f.RecordClosed {
			next.restartRun(f, "", now)
			out.Notes = append(out.Notes, note(EventAdjudicationRequested, ToAdjudicator))
		}
	case s.Stage == StageAwaitingRecord && f.RecordClosed:
		next.restartRun(f, "", now)
		out.Notes = append(out.Notes, note(EventAdjudicationRequested, ToAdjudicator))
	case s.Stage == StagePreAwardReview && !now.Before(s.PreAward.DeadlineAt):
		next.closePreAward(now)
		out.Notes = append(out.Notes, note(EventPreAwardReviewClosed, ToTribunal))
	case s.Stage == StageEvaluationIssued && !s.Evaluation.DeadlineAt.IsZero() && !now.Before(s.Evaluation.DeadlineAt):
		next.Evaluation.Deemed = true
		out = next.issue(f, now)
		out.Notes = append([]Note{note(EventEvaluationAccepted, ToSides)}, out.Notes...)
	default:
		return Outcome{State: s}
	}
	out.State = next
	return out
}

// assignable: a whole tribunal is due (an unsettled case whose record
// closed, or an evaluation).
func assignable(f Facts) bool { return !settled(f) && (f.RecordClosed || f.Evaluation) }

// settled: the sides agreed a settlement, so a reviewer alone is due.
func settled(f Facts) bool { return !f.SettledAt.IsZero() }

// NeedsPool reports whether Tick would read the pool at now: an
// assignment is due.
func NeedsPool(s State, f Facts, now time.Time) bool {
	return !f.Terminated && s.Stage == StageUnassigned && (assignable(f) || settled(f)) && !now.Before(s.AssignAfter)
}

// NextDeadline returns when Tick next has something to do, and false when
// nothing is scheduled.
func NextDeadline(s State, f Facts) (time.Time, bool) {
	if f.Terminated || s.Awarded() {
		return time.Time{}, false
	}
	switch {
	case s.Stage == StageUnassigned && settled(f):
		return latest(f.SettledAt, s.AssignAfter), true
	case s.Stage == StageUnassigned && assignable(f):
		at := f.OpenedAt
		if f.RecordClosed && !f.Evaluation {
			at = f.RecordAt
		}
		if s.AssignAfter.After(at) {
			at = s.AssignAfter
		}
		return at, true
	case s.Stage == StageAwaitingRecord && f.RecordClosed:
		return f.RecordAt, true
	case s.Stage == StagePreAwardReview:
		return s.PreAward.DeadlineAt, true
	case s.Stage == StageEvaluationIssued && !s.Evaluation.DeadlineAt.IsZero():
		return s.Evaluation.DeadlineAt, true
	}
	return time.Time{}, false
}

// BuildAward is the award document the state issues at now with the
// dispositive part d.
func BuildAward(s State, f Facts, d award.Proposal, now time.Time) award.Document {
	doc := award.Document{
		SchemaVersion: award.SchemaAward, AwardID: "award:" + f.CaseID + ":1", CaseID: f.CaseID, ExternalCaseID: f.ExternalCaseID,
		Environment: f.Environment, CaseMode: "proceeding", Rules: f.Rules,
		Outcome: d.Outcome, Remedies: nonNilRemedies(d.Remedies), Reasons: d.Reasons, Citations: slices.Clone(d.Citations),
		IssuedAt: ts(now),
	}
	if doc.Citations == nil {
		doc.Citations = []award.Citation{}
	}
	if f.Evaluation {
		doc.CaseMode = "evaluation"
		if e := f.EvaluationDefinition; e != nil {
			ev := *e
			doc.Evaluation = &ev
		}
	}
	doc.Parties = []award.Party{}
	for _, p := range f.Parties {
		if p.Joined {
			doc.Parties = append(doc.Parties, award.Party{Side: p.Side, ParticipantID: p.ParticipantID, PrincipalID: p.PrincipalID})
		}
	}
	t := award.Tribunal{
		Adjudicator:     award.Member{MemberID: s.Adjudicator.CredentialID, Kind: "autonomous_agent"},
		Configuration:   *s.Adjudicator.Configuration,
		Reviewer:        award.Member{MemberID: s.Reviewer.CredentialID, Kind: "individual"},
		ReviewerOpinion: string(s.Review.Opinion),
		Overridden:      s.Review.Override != nil,
		Runs:            []award.Run{},
	}
	for _, r := range s.Runs {
		t.Runs = append(t.Runs, award.Run{RunID: r.ID, ConfigurationDigest: r.ConfigurationDigest, InputDigest: r.InputDigest, OutputDigest: r.OutputDigest, Status: string(r.Status)})
	}
	doc.Tribunal = t
	return doc
}

// checkProposal checks a proposal (or override) against the case, in
// order: citation_outside_record, citation_digest_mismatch,
// outcome_not_allowed, remedy_exceeds_claim. Its shape was checked with
// the act (invalid_tribunal_act).
func checkProposal(p award.Proposal, f Facts, now time.Time) error {
	if err := dueLater(p.Remedies, now); err != nil {
		return err
	}
	for _, c := range p.Citations {
		i := slices.IndexFunc(f.Record, func(it Item) bool { return it.ID == c.ItemID })
		if i < 0 {
			return refuse(CodeCitationOutsideRecord, "citation %s names nothing in the confirmed record of case %s", c.ItemID, f.CaseID)
		}
		if f.Record[i].Digest != c.Digest {
			return refuse(CodeCitationDigestMismatch, "citation %s quotes digest %s; the record holds %s", c.ItemID, c.Digest, f.Record[i].Digest)
		}
	}
	allowed := award.ProceedingOutcomes
	if f.Evaluation && f.EvaluationDefinition != nil {
		allowed = f.EvaluationDefinition.AllowedOutcomes
	}
	if !slices.Contains(allowed, p.Outcome) {
		return refuse(CodeOutcomeNotAllowed, "outcome %q is not one of %v", p.Outcome, allowed)
	}
	if f.Evaluation && len(p.Remedies) > 0 {
		return refuse(CodeOutcomeNotAllowed, "an evaluation answers its question with an outcome; it orders no remedies")
	}
	if p.Outcome == award.OutcomeClaimDismissed && len(p.Remedies) > 0 {
		return refuse(CodeOutcomeNotAllowed, "a dismissed claim orders no remedies")
	}
	return withinClaim(p.Remedies, f)
}

// dueLater refuses a remedy not due after now.
func dueLater(remedies []award.Remedy, now time.Time) error {
	for i, r := range remedies {
		if due, _ := time.Parse("2006-01-02T15:04:05.000Z", r.DueBy); !due.After(now) {
			return refuse(CodeInvalidAct, "remedies[%d].dueBy %s is not in the future", i, r.DueBy)
		}
	}
	return nil
}

// withinClaim refuses payments the claim does not ask for: from anyone
// but the respondent to anyone but the claimant, in another currency, or
// above the claim in total.
func withinClaim(remedies []award.Remedy, f Facts) error {
	var paid int64
	for i, r := range remedies {
		if r.Kind != award.RemedyPayment {
			continue
		}
		switch {
		case r.Payer != Respondent || r.Payee != Claimant:
			return refuse(CodeRemedyExceedsClaim, "remedies[%d]: the claim asks the respondent to pay the claimant, nothing else", i)
		case r.Currency != f.ClaimCurrency:
			return refuse(CodeRemedyExceedsClaim, "remedies[%d]: the claim is in %q, not %q", i, f.ClaimCurrency, r.Currency)
		}
		paid += r.AmountMinor
		if paid > f.ClaimMinor {
			return refuse(CodeRemedyExceedsClaim, "the payments ordered (%d) exceed the claim (%d %s minor units)", paid, f.ClaimMinor, f.ClaimCurrency)
		}
	}
	return nil
}

// validate checks the act's shape (step 1).
func (a Act) validate(f Facts) error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "%s: %s", a.Kind, fmt.Sprintf(format, args...))
	}
	role, known := actor[a.Kind]
	if !known {
		return refuse(CodeInvalidAct, "unknown act %q", a.Kind)
	}
	if role == "" && a.Side != Claimant && a.Side != Respondent {
		return bad("the side is missing")
	}
	if role != "" && a.MemberID == "" {
		return bad("the member is missing")
	}
	text := func(name string, max int, required bool) error {
		n := utf8.RuneCountInString(a.Text)
		if (required && n == 0) || n > max || !utf8.ValidString(a.Text) {
			return bad("%s must be 1 to %d characters", name, max)
		}
		return nil
	}
	switch a.Kind {
	case ActFileProposal, ActOverride:
		if a.Kind == ActFileProposal && (a.RunID == "" || !isHex64(a.InputDigest)) {
			return bad("runId and inputDigest (64 lowercase hex) are required")
		}
		if a.Proposal == nil {
			return bad("the proposal is missing")
		}
		return validProposal(*a.Proposal, a.Kind == ActFileProposal && len(f.Record) > 0, bad)
	case ActAskHumanAttention:
		if a.RunID == "" {
			return bad("runId is required")
		}
		return text("reason", MaxShortRunes, true)
	case ActResume, ActObject:
		return text("instructions", MaxShortRunes, true)
	case ActRequestRun:
		return text("instructions", MaxShortRunes, false)
	case ActGiveOpinion:
		switch a.Opinion {
		case OpinionAgree:
			if a.Text != "" {
				return bad("reasons belong to a revise opinion")
			}
		case OpinionRevise:
			return text("reasons", MaxTextRunes, true)
		default:
			return bad("opinion must be agree or revise")
		}
	case ActIssueRuling:
		return text("text", MaxTextRunes, true)
	case ActChallenge:
		return text("grounds", MaxShortRunes, true)
	case ActResolveChallenge:
		if a.ChallengeID == "" {
			return bad("challengeId is required")
		}
		return text("reasons", MaxShortRunes, true)
	case ActRecuse:
		return text("reason", MaxShortRunes, true)
	case ActAnswerPreAward:
		if len(a.Errors) > MaxClerical {
			return bad("at most %d clerical errors", MaxClerical)
		}
		for i, e := range a.Errors {
			if n := utf8.RuneCountInString(e); n == 0 || n > MaxClericalRunes || !utf8.ValidString(e) {
				return bad("errors[%d] must be 1 to %d characters", i, MaxClericalRunes)
			}
		}
	}
	return nil
}

// validProposal checks a proposal's shape.
func validProposal(p award.Proposal, needCitation bool, bad func(string, ...any) error) error {
	if p.Outcome == "" {
		return bad("outcome is required")
	}
	if n := utf8.RuneCountInString(p.Reasons); n == 0 || n > MaxTextRunes || !utf8.ValidString(p.Reasons) {
		return bad("reasons must be 1 to %d characters", MaxTextRunes)
	}
	if len(p.Remedies) > MaxRemedies {
		return bad("at most %d remedies", MaxRemedies)
	}
	if len(p.Citations) > MaxCitations || (needCitation && len(p.Citations) == 0) {
		return bad("1 to %d citations of the record are required", MaxCitations)
	}
	for i, c := range p.Citations {
		if c.ItemID == "" || !isHex64(c.Digest) || utf8.RuneCountInString(c.Pinpoint) > MaxPinpointRunes {
			return bad("citations[%d] needs an itemId, a 64-hex digest and a pinpoint of at most %d characters", i, MaxPinpointRunes)
		}
	}
	return validRemedies(p.Remedies, bad)
}

// validRemedies checks the remedies' shape.
func validRemedies(remedies []award.Remedy, bad func(string, ...any) error) error {
	for i, r := range remedies {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", r.DueBy); err != nil {
			return bad("remedies[%d].dueBy must be UTC with three fractional digits and Z", i)
		}
		switch r.Kind {
		case award.RemedyPayment:
			if r.AmountMinor <= 0 || len(r.Currency) != 3 || !validSide(r.Payer) || !validSide(r.Payee) || r.Payer == r.Payee || r.Obligor != "" || r.Description != "" {
				return bad("remedies[%d]: a payment names payer and payee (different sides), a positive amountMinor and a 3-letter currency, nothing else", i)
			}
		case award.RemedyPerformance:
			n := utf8.RuneCountInString(r.Description)
			if !validSide(r.Obligor) || n == 0 || n > MaxShortRunes || r.Payer != "" || r.Payee != "" || r.AmountMinor != 0 || r.Currency != "" {
				return bad("remedies[%d]: a performance names the obligor side and a description of 1 to %d characters, nothing else", i, MaxShortRunes)
			}
		default:
			return bad("remedies[%d].kind must be payment or performance", i)
		}
	}
	return nil
}

func validSide(s string) bool { return s == Claimant || s == Respondent }

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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// normalized writes a proposal's absent lists as empty ones, so that its
// digest and every view of it are the same whether a list was sent empty
// or left out.
func normalized(p award.Proposal) award.Proposal {
	p.Remedies = nonNilRemedies(p.Remedies)
	if p.Citations == nil {
		p.Citations = []award.Citation{}
	}
	return p
}

func nonNilRemedies(r []award.Remedy) []award.Remedy {
	if r == nil {
		return []award.Remedy{}
	}
	return slices.Clone(r)
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// CheckAmended checks an award's dispositive part as amended after the
// award (a corrected or additional award): the shape of a proposal
// without the need for a citation, then what an award may order
// (checkProposal). The refusal codes are this package's.
func CheckAmended(p award.Proposal, f Facts, now time.Time) error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "amended award: %s", fmt.Sprintf(format, args...))
	}
	if err := validProposal(p, false, bad); err != nil {
		return err
	}
	return checkProposal(p, f, now)
}

// Ordered are the sides the remedies order to act.
func Ordered(remedies []award.Remedy) []string { return ordered(award.Proposal{Remedies: remedies}) }
