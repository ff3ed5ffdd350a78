package procedure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/jcs"
)

// The record the sides confirm, and their corrections to it. The record
// summary lists every entry of the record by digest; the summary digest
// names one version of it, so a side confirms exactly what it read
// (Act.SummaryDigest) and a correction visibly makes another version.

// AnswerEntryID is the record entry id of the respondent's answer.
const AnswerEntryID = "answer"

// RecordCorrection is a side's correction of one of its own record
// entries, appended while the record awaits confirmation. The entry
// itself is never rewritten: the record keeps what was filed and what was
// said of it afterwards. Its text lives outside the procedure; Digest
// identifies it.
type RecordCorrection struct {
	ID            string
	Side          Side
	ParticipantID string
	EntryID       string // AnswerEntryID, a submission id, or a disclosed exhibit id
	Digest        string
	CorrectedAt   time.Time
}

// RecordSummary is the content of the record summary that its digest
// covers: the entries, never who confirmed them or by when. Its JSON form
// (these field names, RFC 8785 canonical) is what [Case.RecordDigest]
// hashes, and what the record-summary routes show, so a side can check
// the digest it confirms.
type RecordSummary struct {
	Answer      *SummaryEntry       `json:"answer,omitempty"`
	Submissions []SummaryEntry      `json:"submissions"`
	Exhibits    []SummaryExhibit    `json:"exhibits"`
	Corrections []SummaryCorrection `json:"corrections"`
}

// SummaryEntry is the answer or a submission, by digest.
type SummaryEntry struct {
	ID            string `json:"id"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	Stage         string `json:"stage"`
	Round         int    `json:"round"`
	Digest        string `json:"digest"`
}

// SummaryExhibit is a disclosed exhibit, by its file's SHA-256.
type SummaryExhibit struct {
	ID            string `json:"id"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	FileName      string `json:"fileName"`
	MediaType     string `json:"mediaType"`
	Size          int64  `json:"size"`
	SHA256        string `json:"sha256"`
	Description   string `json:"description"`
	Authenticity  string `json:"authenticity"`
}

// SummaryCorrection is a correction, by its text's digest.
type SummaryCorrection struct {
	ID            string `json:"id"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	EntryID       string `json:"entryId"`
	Digest        string `json:"digest"`
	CorrectedAt   string `json:"correctedAt"`
}

// RecordSummary returns the record's entries in the order of
// [Case.RecordItems]: the answer, the submissions as filed, the disclosed
// exhibits as disclosed; then the corrections as made.
func (c Case) RecordSummary() RecordSummary {
	s := RecordSummary{Submissions: []SummaryEntry{}, Exhibits: []SummaryExhibit{}, Corrections: []SummaryCorrection{}}
	if a := c.Answer; a != nil {
		s.Answer = &SummaryEntry{ID: AnswerEntryID, Side: string(Respondent), ParticipantID: a.ParticipantID, Stage: string(StageAnswer), Digest: a.Digest}
	}
	for _, sub := range c.Submissions {
		s.Submissions = append(s.Submissions, SummaryEntry{ID: sub.ID, Side: string(sub.Side), ParticipantID: sub.ParticipantID,
			Stage: string(sub.Stage), Round: sub.Round, Digest: sub.Digest})
	}
	for _, e := range c.Evidence.Record() {
		s.Exhibits = append(s.Exhibits, SummaryExhibit{ID: e.ID, Side: e.Side, ParticipantID: e.ParticipantID, FileName: e.FileName,
			MediaType: e.MediaType, Size: e.Size, SHA256: e.SHA256, Description: e.Description, Authenticity: string(e.Authenticity)})
	}
	for _, k := range c.Corrections {
		s.Corrections = append(s.Corrections, SummaryCorrection{ID: k.ID, Side: string(k.Side), ParticipantID: k.ParticipantID,
			EntryID: k.EntryID, Digest: k.Digest, CorrectedAt: Timestamp(k.CorrectedAt)})
	}
	return s
}

// RecordDigest returns the summary digest: the SHA-256, lowercase hex, of
// the RFC 8785 canonical JSON of [Case.RecordSummary].
func (c Case) RecordDigest() string {
	b, err := jcs.Canonicalize(c.RecordSummary())
	if err != nil {
		// Every field is a Go string, int or nil pointer: encoding/json
		// cannot fail on them, and their JSON is always I-JSON.
		panic(fmt.Sprintf("procedure: canonical record summary: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// entrySide returns the side that filed a record entry: the answer, a
// submission, or a disclosed exhibit. An undisclosed exhibit is not in
// the record.
func (c Case) entrySide(id string) (Side, bool) {
	if id == AnswerEntryID {
		return Respondent, c.Answer != nil
	}
	if i := slices.IndexFunc(c.Submissions, func(s Submission) bool { return s.ID == id }); i >= 0 {
		return c.Submissions[i].Side, true
	}
	if e, ok := c.Evidence.Exhibit(id); ok && e.Disclosed() {
		return Side(e.Side), true
	}
	return "", false
}

// doCorrect appends the correction and withdraws the other side's
// confirmation, which confirmed a summary that no longer is the record.
var doCorrect = func(c *Case, a Act, p Participant, now time.Time) {
	c.Corrections = append(c.Corrections, RecordCorrection{ID: a.CorrectionID, Side: p.Side, ParticipantID: p.ID, EntryID: a.EntryID, Digest: a.Digest, CorrectedAt: now})
	delete(c.RecordConfirms, p.Side.Other())
}
