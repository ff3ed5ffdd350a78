package evidence

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ActKind names an evidence act.
type ActKind string

// The evidence acts.
const (
	ActUpload           ActKind = "upload_exhibit"   // a side: Upload holds the stored file's metadata
	ActDisclose         ActKind = "disclose_exhibit" // the offering side
	ActDescribe         ActKind = "describe_exhibit" // the offering side: Text is the description
	ActChallenge        ActKind = "challenge_authenticity"
	ActAnswerChallenge  ActKind = "answer_authenticity_challenge"
	ActResolveChallenge ActKind = "resolve_authenticity_challenge" // the tribunal: Uphold, Text the reasons
	ActReportDefect     ActKind = "report_processing_defect"
	ActResolveDefect    ActKind = "resolve_processing_defect" // the tribunal: Resolution, Text the note
)

// Act is one evidence act. Side and ParticipantID name the acting side's
// participant; a tribunal act names its member in TribunalMember instead
// (the caller checked that the member is assigned to the case).
type Act struct {
	Kind           ActKind
	Side           string
	ParticipantID  string
	TribunalMember string
	ExhibitID      string
	ChallengeID    string // a new challenge's id, or the one answered or resolved
	DefectID       string // a new report's id, or the one resolved
	// Upload is the exhibit to record (ActUpload): the file is already
	// stored under its id. Decide sets its side, participant, time and
	// authenticity.
	Upload     *Exhibit
	Text       string
	Uphold     bool             // ActResolveChallenge: the exhibit is not authentic
	DefectKind DefectKind       // ActReportDefect
	Resolution DefectResolution // ActResolveDefect
}

// Outcome is the result of an accepted act.
type Outcome struct {
	State State
	Notes []Note
	// Exhibit is the exhibit the act recorded or changed.
	Exhibit Exhibit
	// Replay says the act was an upload of bytes the side already
	// uploaded: nothing changed and Exhibit is the one recorded then.
	Replay bool
}

// tribunalAct reports whether the act is the tribunal's.
func (k ActKind) tribunalAct() bool { return k == ActResolveChallenge || k == ActResolveDefect }

// Decide applies act at now, checking in this order (the first failure is
// returned, and s is unchanged):
//
//  1. invalid_evidence_act: unknown act, a field it needs missing or
//     malformed, or a text over the rules' length;
//  2. case_closed: the case is awarded, settled or terminated;
//  3. exhibit_not_found: no exhibit with the id that the acting side may
//     see (the other side's undisclosed exhibits do not exist for it);
//  4. not_offering_side: disclosing, describing or answering for an
//     exhibit of the other side; own_exhibit: challenging one's own
//     exhibit (a defect may be reported in any exhibit the side sees);
//  5. evidence_stage_closed: the phase does not take the act (uploads,
//     disclosure and descriptions only while filing; challenges and
//     defect reports until the record is closed; resolutions once a
//     tribunal decides);
//  6. the act's own preconditions: exhibit_duplicate (the side uploaded
//     the same bytes under another name), exhibit_too_large,
//     evidence_quota_exceeded, exhibit_limit_reached,
//     exhibit_already_disclosed, authenticity_challenge_pending,
//     authenticity_challenge_not_found, authenticity_challenge_answered,
//     authenticity_challenge_resolved, defect_report_not_found,
//     defect_report_resolved.
//
// An upload of bytes the side already uploaded under the same name is a
// replay: the outcome names the exhibit recorded then and changes nothing.
func Decide(s State, f Facts, a Act, now time.Time) (Outcome, error) {
	now = now.UTC().Truncate(time.Millisecond)
	if err := a.validate(f.Limits); err != nil {
		return Outcome{State: s}, err
	}
	if f.Phase == PhaseEnded {
		return Outcome{State: s}, refuse(CodeCaseClosed, "the case is awarded, settled or terminated: its evidence no longer changes")
	}
	var ex Exhibit
	if a.Kind != ActUpload {
		var ok bool
		ex, ok = s.Exhibit(a.ExhibitID)
		viewer := a.Side
		if a.Kind.tribunalAct() {
			ok = ok && ex.Disclosed()
		} else {
			ok = ok && ex.VisibleTo(viewer)
		}
		if !ok {
			return Outcome{State: s}, refuse(CodeExhibitNotFound, "the case has no exhibit %s visible to this caller", a.ExhibitID)
		}
	}
	switch a.Kind {
	case ActDisclose, ActDescribe, ActAnswerChallenge:
		if ex.Side != a.Side {
			return Outcome{State: s}, refuse(CodeNotOfferingSide, "exhibit %s is the %s side's: only it may do this", ex.ID, ex.Side)
		}
	case ActChallenge:
		if ex.Side == a.Side {
			return Outcome{State: s}, refuse(CodeOwnExhibit, "exhibit %s is the %s side's own: the other side challenges its authenticity", ex.ID, a.Side)
		}
	}
	if !phaseTakes(f.Phase, a.Kind) {
		return Outcome{State: s}, refuse(CodeEvidenceStage, "%s is not taken while the case is in its %s phase", a.Kind, f.Phase)
	}
	if !a.Kind.tribunalAct() && !f.Joined[a.Side] {
		return Outcome{State: s}, refuse(CodeEvidenceStage, "the %s side has not joined the case", a.Side)
	}
	next := s.Clone()
	switch a.Kind {
	case ActUpload:
		return upload(s, next, f, a, now)
	case ActDisclose:
		if ex.Disclosed() {
			return Outcome{State: s}, refuse(CodeAlreadyDisclosed, "exhibit %s was disclosed at %s", ex.ID, stamp(ex.DisclosedAt))
		}
		ex.DisclosedAt = now
		next.put(ex)
		return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventDisclosed, Actor: a.Side, ExhibitID: ex.ID}}}, nil
	case ActDescribe:
		ex.Description, ex.DescribedAt = a.Text, now
		next.put(ex)
		out := Outcome{State: next, Exhibit: ex}
		if ex.Disclosed() {
			out.Notes = []Note{{Type: EventDescriptionChanged, Actor: a.Side, ExhibitID: ex.ID}}
		}
		return out, nil
	case ActChallenge:
		if i := next.openChallenge(ex.ID); i >= 0 {
			return Outcome{State: s}, refuse(CodeChallengePending, "challenge %s of exhibit %s is not resolved yet", next.Challenges[i].ID, ex.ID)
		}
		next.Challenges = append(next.Challenges, Challenge{ID: a.ChallengeID, ExhibitID: ex.ID, Side: a.Side, ParticipantID: a.ParticipantID,
			Grounds: a.Text, FiledAt: now, Status: ChallengeOpen})
		ex.Authenticity = Challenged
		next.put(ex)
		return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventChallenged, Actor: a.Side, ActionBy: ex.Side, ExhibitID: ex.ID}}}, nil
	case ActAnswerChallenge, ActResolveChallenge:
		return challengeAct(s, next, ex, a, now)
	case ActReportDefect:
		next.Defects = append(next.Defects, Defect{ID: a.DefectID, ExhibitID: ex.ID, Side: a.Side, ParticipantID: a.ParticipantID,
			Kind: a.DefectKind, Detail: a.Text, ReportedAt: now})
		return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventDefectReported, Actor: a.Side, ExhibitID: ex.ID}}}, nil
	case ActResolveDefect:
		i := slices.IndexFunc(next.Defects, func(d Defect) bool { return d.ID == a.DefectID && d.ExhibitID == ex.ID })
		if i < 0 {
			return Outcome{State: s}, refuse(CodeDefectNotFound, "exhibit %s has no defect report %s", ex.ID, a.DefectID)
		}
		if d := next.Defects[i]; d.Resolved() {
			return Outcome{State: s}, refuse(CodeDefectResolved, "defect report %s was resolved (%s) at %s", d.ID, d.Resolution, stamp(d.ResolvedAt))
		}
		d := &next.Defects[i]
		d.Resolution, d.Note, d.ResolvedBy, d.ResolvedAt = a.Resolution, a.Text, a.TribunalMember, now
		return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventDefectResolved, ExhibitID: ex.ID}}}, nil
	}
	return Outcome{State: s}, refuse(CodeInvalidAct, "unknown evidence act %q", a.Kind)
}

func upload(s, next State, f Facts, a Act, now time.Time) (Outcome, error) {
	u := *a.Upload
	for _, e := range s.Exhibits {
		if e.Side == a.Side && e.SHA256 == u.SHA256 {
			if e.FileName == u.FileName {
				return Outcome{State: s, Exhibit: e, Replay: true}, nil
			}
			return Outcome{State: s}, refuse(CodeDuplicateExhibit, "the %s side uploaded these bytes as exhibit %s (%s)", a.Side, e.ID, e.FileName)
		}
	}
	count, bytes := s.usage(a.Side)
	switch {
	case u.Size > f.Limits.MaxFileBytes:
		return Outcome{State: s}, refuse(CodeFileTooLarge, "the file is %d bytes; the case's rules take at most %d per file", u.Size, f.Limits.MaxFileBytes)
	case bytes+u.Size > f.Limits.MaxSideBytes:
		return Outcome{State: s}, refuse(CodeSideQuotaExceeded, "the %s side's exhibits would total %d bytes; the case's rules take at most %d per side", a.Side, bytes+u.Size, f.Limits.MaxSideBytes)
	case count >= f.Limits.MaxSideFiles:
		return Outcome{State: s}, refuse(CodeExhibitLimit, "the %s side has uploaded %d exhibits, the most the case's rules take", a.Side, count)
	}
	u.Side, u.ParticipantID, u.UploadedAt, u.Authenticity = a.Side, a.ParticipantID, now, Unchallenged
	u.DisclosedAt, u.DescribedAt = time.Time{}, time.Time{}
	next.Exhibits = append(next.Exhibits, u)
	return Outcome{State: next, Exhibit: u}, nil
}

func challengeAct(s, next State, ex Exhibit, a Act, now time.Time) (Outcome, error) {
	i := slices.IndexFunc(next.Challenges, func(c Challenge) bool { return c.ID == a.ChallengeID && c.ExhibitID == ex.ID })
	if i < 0 {
		return Outcome{State: s}, refuse(CodeChallengeNotFound, "exhibit %s has no authenticity challenge %s", ex.ID, a.ChallengeID)
	}
	c := &next.Challenges[i]
	if c.Status == ChallengeUpheld || c.Status == ChallengeDismissed {
		return Outcome{State: s}, refuse(CodeChallengeResolved, "challenge %s was %s at %s", c.ID, c.Status, stamp(c.ResolvedAt))
	}
	if a.Kind == ActAnswerChallenge {
		if c.Status == ChallengeAnswered {
			return Outcome{State: s}, refuse(CodeChallengeAnswered, "challenge %s was answered at %s", c.ID, stamp(c.AnsweredAt))
		}
		c.Status, c.Answer, c.AnsweredAt = ChallengeAnswered, a.Text, now
		ex.Authenticity = Answered
		next.put(ex)
		return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventChallengeAnswered, Actor: a.Side, ExhibitID: ex.ID}}}, nil
	}
	// The tribunal may resolve an unanswered challenge too: the offering
	// side had its chance, and a record must not wait on a silent side.
	c.Status, ex.Authenticity = ChallengeDismissed, Authentic
	if a.Uphold {
		c.Status, ex.Authenticity = ChallengeUpheld, NotAuthentic
	}
	c.Reasons, c.ResolvedBy, c.ResolvedAt = a.Text, a.TribunalMember, now
	next.put(ex)
	return Outcome{State: next, Exhibit: ex, Notes: []Note{{Type: EventChallengeResolved, ExhibitID: ex.ID}}}, nil
}

// phaseTakes is the table of which acts each phase takes.
func phaseTakes(p Phase, k ActKind) bool {
	switch k {
	case ActUpload, ActDisclose, ActDescribe:
		return p == PhaseFiling
	case ActChallenge, ActReportDefect:
		return p == PhaseFiling || p == PhaseConfirmation
	case ActAnswerChallenge:
		return p != PhaseEnded
	case ActResolveChallenge, ActResolveDefect:
		return p == PhaseDecision
	}
	return false
}

func (s *State) put(e Exhibit) {
	for i := range s.Exhibits {
		if s.Exhibits[i].ID == e.ID {
			s.Exhibits[i] = e
		}
	}
}

func (s State) openChallenge(exhibitID string) int {
	return slices.IndexFunc(s.Challenges, func(c Challenge) bool {
		return c.ExhibitID == exhibitID && (c.Status == ChallengeOpen || c.Status == ChallengeAnswered)
	})
}

// validate checks the act's own shape (step 1).
func (a Act) validate(l Limits) error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "%s: "+format, append([]any{a.Kind}, args...)...)
	}
	text := func(name string, required bool) error {
		n := utf8.RuneCountInString(a.Text)
		switch {
		case !utf8.ValidString(a.Text):
			return bad("%s must be UTF-8 text", name)
		case required && strings.TrimSpace(a.Text) == "":
			return bad("%s is required", name)
		case n > l.MaxTextLength:
			return bad("%s is %d characters; at most %d", name, n, l.MaxTextLength)
		}
		return nil
	}
	if a.Kind.tribunalAct() {
		if a.TribunalMember == "" {
			return bad("the tribunal member acting is required")
		}
	} else if (a.Side != Claimant && a.Side != Respondent) || a.ParticipantID == "" {
		return bad("the acting side and participant are required")
	}
	if a.Kind != ActUpload && a.ExhibitID == "" {
		return bad("exhibit id is required")
	}
	switch a.Kind {
	case ActUpload:
		u := a.Upload
		if u == nil || u.ID == "" || len(u.SHA256) != 64 || u.Size <= 0 || u.MediaType == "" || u.FileName == "" {
			return bad("the stored file's id, name, media type, size and SHA-256 are required")
		}
		if utf8.RuneCountInString(u.Description) > l.MaxTextLength {
			return bad("description is over %d characters", l.MaxTextLength)
		}
	case ActDisclose:
	case ActDescribe:
		return text("description", true)
	case ActChallenge:
		if a.ChallengeID == "" {
			return bad("challenge id is required")
		}
		return text("grounds", true)
	case ActAnswerChallenge:
		if a.ChallengeID == "" {
			return bad("challenge id is required")
		}
		return text("answer", true)
	case ActResolveChallenge:
		if a.ChallengeID == "" {
			return bad("challenge id is required")
		}
		return text("reasons", true)
	case ActReportDefect:
		if a.DefectID == "" || !slices.Contains(DefectKinds, a.DefectKind) {
			return bad("kind must be one of text_extraction, page_count, description, file")
		}
		return text("detail", true)
	case ActResolveDefect:
		if a.DefectID == "" || (a.Resolution != DefectCorrected && a.Resolution != DefectRejected) {
			return bad("resolution must be corrected or rejected")
		}
		return text("note", true)
	default:
		return refuse(CodeInvalidAct, "unknown evidence act %q", a.Kind)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// CanUpload reports whether side may upload now: the checks of Decide that
// need no file (case_closed, evidence_stage_closed, exhibit_limit_reached),
// made before any byte of an upload is read.
func CanUpload(s State, f Facts, side string) error {
	count, _ := s.usage(side)
	switch {
	case side != Claimant && side != Respondent:
		return refuse(CodeInvalidAct, "%s: the acting side is required", ActUpload)
	case f.Phase == PhaseEnded:
		return refuse(CodeCaseClosed, "the case is awarded, settled or terminated: its evidence no longer changes")
	case !phaseTakes(f.Phase, ActUpload):
		return refuse(CodeEvidenceStage, "%s is not taken while the case is in its %s phase", ActUpload, f.Phase)
	case !f.Joined[side]:
		return refuse(CodeEvidenceStage, "the %s side has not joined the case", side)
	case count >= f.Limits.MaxSideFiles:
		return refuse(CodeExhibitLimit, "the %s side has uploaded %d exhibits, the most the case's rules take", side, count)
	}
	return nil
}
