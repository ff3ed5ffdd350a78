// What the case page shows a respondent who takes part: the messages, the
// submissions of both sides, the exhibits, the record to confirm, a
// termination request and the award, each with the forms the procedure
// allows now (a form the case would refuse is not offered).

package respond

import (
	"context"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// participation is the part of the case page for a respondent that has
// joined through this page. Acting is "" until then, and nothing else is
// shown.
type participation struct {
	// Acting is the participant the forms act for: the first hosted
	// respondent that joined.
	Acting string

	Messages []messageView
	// Unread counts the messages the respondent's side has not marked
	// read; ReadThrough is the last message, which the mark-read form
	// names.
	Unread      int
	ReadThrough string
	// MessageForm is the id the message form mints ("" when the case no
	// longer takes messages); SubmissionForm and TerminationForm likewise.
	MessageForm     string
	SubmissionForm  string
	TerminationForm string
	// Round names the open evidence or rebuttal round.
	Round string

	Mine, Theirs []submissionView

	// MyExhibits are the side's exhibits, TheirExhibits the other side's
	// disclosed ones (evidence.State.Visible).
	MyExhibits, TheirExhibits []exhibitView
	// Files says the page moves exhibit files (Deps.Exhibits is wired):
	// the download links and the disclose buttons show.
	Files bool
	// UploadForm is the id the upload form carries ("" while the case
	// takes no upload from the side); UploadAccept its file input's
	// accept list.
	UploadForm, UploadAccept string

	Record      *recordView
	Termination *terminationView
	Award       *awardView
}

type messageView struct {
	ID, Side, ParticipantID string
	PostedAt                time.Time
	Text                    string
	Mine, Unread            bool
}

type submissionView struct {
	ID, Stage           string
	Round               int
	FiledAt, AmendedAt  time.Time
	Amendments          int
	Text                string
	Digest              string
	Amendable           bool // the side's own, of the open round
	ParticipantID, Side string
}

type exhibitView struct {
	ID, FileName, MediaType, Description string
	Size                                 int64
	SHA256                               string
	UploadedAt, DisclosedAt              time.Time
	// Download is the page's address of the file; Disclose, of the form
	// that discloses it ("" unless the side may disclose it now).
	Download, Disclose string
}

// recordView is the record summary the sides confirm: the answer and
// every submission by digest, and who confirmed.
type recordView struct {
	Entries []recordEntry
	// Confirmed is when each side confirmed, by side.
	Confirmed  map[string]time.Time
	DeadlineAt time.Time // zero unless the confirmation stage is open
	Deemed     bool
	// CanConfirm offers the confirmation form.
	CanConfirm bool
	// Corrections is the place of the record's corrections
	// (record-summary/corrections, the procedure's correction act), which
	// another branch adds; the template shows this section once it exists.
}

type recordEntry struct {
	What, ParticipantID, Digest string
}

type terminationView struct {
	ID, Side              string
	RequestedAt, Deadline time.Time
	Ours, CanConfirm      bool
	ConfirmPath, CasePath string
}

// awardView is the issued award: its summary, and its artifacts served
// through this page's session.
type awardView struct {
	ID, Outcome, Hash, KeyID string
	IssuedAt                 time.Time
	Ordered                  []string
	// Links are the artifacts' addresses, by kind: json, html, pdf and
	// the signature (attestation).
	Links map[string]string
}

// participationView builds the participation part of the case page.
func (p *page) participationView(ctx context.Context, c procedure.Case, who viewer) (participation, error) {
	var v participation
	for _, id := range who.actable(c) {
		if pt, ok := c.Participant(id); ok && pt.Joined() {
			v.Acting = id
			break
		}
	}
	if v.Acting == "" {
		return v, nil
	}
	// A settled case takes no message or termination any more: the
	// procedure refuses them (stage_closed), so the page offers none.
	open := c.Closed != procedure.StatusTerminated && c.Status() != procedure.StatusSettled
	read := c.MessagesRead[procedure.Respondent]
	for i, m := range c.Messages {
		text, err := p.text(ctx, c.ID, m.Digest)
		if err != nil {
			return participation{}, err
		}
		v.Messages = append(v.Messages, messageView{ID: m.ID, Side: string(m.Side), ParticipantID: m.ParticipantID, PostedAt: m.PostedAt,
			Text: text, Mine: m.Side == procedure.Respondent, Unread: i >= read && m.Side != procedure.Respondent})
	}
	if n := len(c.Messages); n > read {
		v.Unread, v.ReadThrough = n-read, c.Messages[n-1].ID
	}
	if open {
		v.MessageForm = formID("msg_")
	}

	inRound := c.Closed == "" && (c.Status() == procedure.StatusEvidence || c.Status() == procedure.StatusRebuttal)
	filed := 0
	for _, s := range c.Submissions {
		text, err := p.text(ctx, c.ID, s.Digest)
		if err != nil {
			return participation{}, err
		}
		current := inRound && s.Stage == c.Stage.Kind && s.Round == c.Stage.Round
		sv := submissionView{ID: s.ID, Stage: string(s.Stage), Round: s.Round, FiledAt: s.FiledAt, AmendedAt: s.AmendedAt,
			Amendments: s.Amendments, Text: text, Digest: s.Digest, ParticipantID: s.ParticipantID, Side: string(s.Side)}
		if s.Side == procedure.Respondent {
			sv.Amendable = current
			v.Mine = append(v.Mine, sv)
			if current {
				filed++
			}
		} else {
			v.Theirs = append(v.Theirs, sv)
		}
	}
	if inRound {
		v.Round = fmt.Sprintf("%s round %d", c.Stage.Kind, c.Stage.Round)
		if filed < c.Plan.FilingsPerSidePerStage {
			v.SubmissionForm = formID("sub_")
		}
	}

	v.Files = p.exhibits != nil
	facts := c.EvidenceFacts()
	// Disclosing is taken in the evidence's filing phase, from a side that
	// joined, as evidence.Decide checks; the page offers it only then.
	canDisclose := v.Files && facts.Phase == evidence.PhaseFiling && facts.Joined[string(procedure.Respondent)]
	if v.Files && evidence.CanUpload(c.Evidence, facts, string(procedure.Respondent)) == nil {
		v.UploadForm, v.UploadAccept = formID("upl_"), uploadAccept()
	}
	for _, e := range c.Evidence.Visible(string(procedure.Respondent)) {
		ev := toExhibitView(e)
		ev.Download = p.pagePath(c.ID) + "/exhibits/" + e.ID
		if e.Side == string(procedure.Respondent) && !e.Disclosed() && canDisclose {
			ev.Disclose = ev.Download + "/disclose"
		}
		if e.Side == string(procedure.Respondent) {
			v.MyExhibits = append(v.MyExhibits, ev)
		} else {
			v.TheirExhibits = append(v.TheirExhibits, ev)
		}
	}

	if c.Status() == procedure.StatusAwaitingRecordConfirmation || c.Closed == procedure.StatusRecordConfirmed || c.RecordDeemed {
		v.Record = recordSummary(c)
	}

	if t := c.Termination; t != nil && open {
		ours := t.Side == procedure.Respondent
		v.Termination = &terminationView{ID: t.ID, Side: string(t.Side), RequestedAt: t.RequestedAt, Deadline: t.DeadlineAt,
			Ours: ours, CanConfirm: !ours, ConfirmPath: p.pagePath(c.ID) + "/termination/" + t.ID + "/confirm"}
	} else if open {
		v.TerminationForm = formID("term_")
	}

	if a := c.Tribunal.Award; a != nil {
		base := p.pagePath(c.ID) + "/award/"
		v.Award = &awardView{ID: a.AwardID, Outcome: a.Outcome, Hash: a.AwardHash, KeyID: a.KeyID, IssuedAt: a.IssuedAt, Ordered: a.Ordered,
			Links: map[string]string{"json": base + "json", "html": base + "html", "pdf": base + "pdf", "signature": base + "attestation"}}
	}
	return v, nil
}

// recordSummary is what the API's record-summary answers, for the page.
func recordSummary(c procedure.Case) *recordView {
	r := &recordView{Confirmed: map[string]time.Time{}, Deemed: c.RecordDeemed}
	if a := c.Answer; a != nil {
		r.Entries = append(r.Entries, recordEntry{What: "answer", ParticipantID: a.ParticipantID, Digest: a.Digest})
	}
	for _, s := range c.Submissions {
		r.Entries = append(r.Entries, recordEntry{What: fmt.Sprintf("submission %s (%s round %d)", s.ID, s.Stage, s.Round), ParticipantID: s.ParticipantID, Digest: s.Digest})
	}
	for side, at := range c.RecordConfirms {
		r.Confirmed[string(side)] = at
	}
	if c.Closed == "" && c.Stage.Kind == procedure.StageRecordConfirmation {
		r.DeadlineAt = c.Stage.DeadlineAt
		_, done := c.RecordConfirms[procedure.Respondent]
		r.CanConfirm = !done
	}
	return r
}

func toExhibitView(e evidence.Exhibit) exhibitView {
	return exhibitView{ID: e.ID, FileName: e.FileName, MediaType: e.MediaType, Description: e.Description, Size: e.Size,
		SHA256: e.SHA256, UploadedAt: e.UploadedAt, DisclosedAt: e.DisclosedAt}
}

// text reads a text the case keeps (an answer, a submission, a message)
// by its digest; a missing one is the store's fault, not the person's.
func (p *page) text(ctx context.Context, caseID, digest string) (string, error) {
	b, found, err := p.cases.Document(ctx, caseID, digest)
	if err == nil && !found {
		err = fmt.Errorf("case %s: document %s is missing", caseID, digest)
	}
	return string(b), err
}
