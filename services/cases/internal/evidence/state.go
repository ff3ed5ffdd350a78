package evidence

import (
	"slices"
	"time"
)

// The sides, as the evidence writes them.
const (
	Claimant   = "claimant"
	Respondent = "respondent"
)

// Authenticity is where an exhibit's authenticity stands.
type Authenticity string

// The authenticity statuses, in the order a challenge moves through them.
const (
	Unchallenged Authenticity = "unchallenged" // nobody challenged it
	Challenged   Authenticity = "challenged"   // a challenge awaits the offering side's answer
	Answered     Authenticity = "answered"     // answered; the tribunal resolves it
	Authentic    Authenticity = "authentic"    // the tribunal dismissed the challenge
	NotAuthentic Authenticity = "not_authentic"
)

// Processing is an exhibit's processing record: what the service read of
// the file when it was taken in.
type Processing struct {
	PageCount int `json:"pageCount"`
	// TextChars is the length of the extracted text (0 where the format
	// gives none); the text itself is in object storage beside the file.
	TextChars     int    `json:"textChars"`
	TextDigest    string `json:"textDigest,omitempty"` // SHA-256 of the text
	TextTruncated bool   `json:"textTruncated,omitempty"`
}

// Exhibit is one file a side offers.
type Exhibit struct {
	ID            string `json:"id"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	FileName      string `json:"fileName"`
	MediaType     string `json:"mediaType"`
	Size          int64  `json:"size"`
	SHA256        string `json:"sha256"`
	// Description is the offering side's description: the processing's
	// suggestion until the side edits it.
	Description  string       `json:"description"`
	DescribedAt  time.Time    `json:"describedAt,omitzero"` // zero until edited
	UploadedAt   time.Time    `json:"uploadedAt"`
	DisclosedAt  time.Time    `json:"disclosedAt,omitzero"` // zero until disclosed
	Authenticity Authenticity `json:"authenticity"`
	Processing   Processing   `json:"processing"`
}

// Disclosed reports whether the exhibit is in the record: the other side
// and the tribunal may see it.
func (e Exhibit) Disclosed() bool { return !e.DisclosedAt.IsZero() }

// ChallengeStatus is where an authenticity challenge stands.
type ChallengeStatus string

// The challenge statuses.
const (
	ChallengeOpen      ChallengeStatus = "open"     // awaiting the offering side's answer
	ChallengeAnswered  ChallengeStatus = "answered" // awaiting the tribunal
	ChallengeUpheld    ChallengeStatus = "upheld"   // the exhibit is not authentic
	ChallengeDismissed ChallengeStatus = "dismissed"
)

// Challenge is the other side's challenge to an exhibit's authenticity.
type Challenge struct {
	ID            string          `json:"id"`
	ExhibitID     string          `json:"exhibitId"`
	Side          string          `json:"side"` // the challenging side
	ParticipantID string          `json:"participantId"`
	Grounds       string          `json:"grounds"`
	FiledAt       time.Time       `json:"filedAt"`
	Status        ChallengeStatus `json:"status"`
	Answer        string          `json:"answer,omitempty"`
	AnsweredAt    time.Time       `json:"answeredAt,omitzero"`
	Reasons       string          `json:"reasons,omitempty"` // the tribunal's
	ResolvedBy    string          `json:"resolvedBy,omitempty"`
	ResolvedAt    time.Time       `json:"resolvedAt,omitzero"`
}

// DefectKind says what a processing defect is about.
type DefectKind string

// The defect kinds.
const (
	DefectText        DefectKind = "text_extraction" // the extracted text is wrong or missing
	DefectPageCount   DefectKind = "page_count"
	DefectDescription DefectKind = "description" // the other side's description misleads
	DefectFile        DefectKind = "file"        // the file does not open or is incomplete
)

// DefectKinds lists the kinds.
var DefectKinds = []DefectKind{DefectText, DefectPageCount, DefectDescription, DefectFile}

// DefectResolution is how the tribunal resolved a defect report.
type DefectResolution string

// The resolutions.
const (
	DefectCorrected DefectResolution = "corrected" // the defect is real; the record notes the correction
	DefectRejected  DefectResolution = "rejected"  // no defect
)

// Defect is a side's report of a defect in an exhibit's processing.
type Defect struct {
	ID            string           `json:"id"`
	ExhibitID     string           `json:"exhibitId"`
	Side          string           `json:"side"`
	ParticipantID string           `json:"participantId"`
	Kind          DefectKind       `json:"kind"`
	Detail        string           `json:"detail"`
	ReportedAt    time.Time        `json:"reportedAt"`
	Resolution    DefectResolution `json:"resolution,omitempty"`
	Note          string           `json:"note,omitempty"` // the tribunal's
	ResolvedBy    string           `json:"resolvedBy,omitempty"`
	ResolvedAt    time.Time        `json:"resolvedAt,omitzero"`
}

// Resolved reports whether the tribunal resolved the report.
func (d Defect) Resolved() bool { return d.Resolution != "" }

// State is the evidence's part of the case record.
type State struct {
	Exhibits   []Exhibit   `json:"exhibits,omitempty"`
	Challenges []Challenge `json:"challenges,omitempty"`
	Defects    []Defect    `json:"defects,omitempty"`
}

// Empty reports whether nothing was ever uploaded.
func (s State) Empty() bool {
	return len(s.Exhibits) == 0 && len(s.Challenges) == 0 && len(s.Defects) == 0
}

// Clone returns a state sharing no memory with s.
func (s State) Clone() State {
	s.Exhibits = slices.Clone(s.Exhibits)
	s.Challenges = slices.Clone(s.Challenges)
	s.Defects = slices.Clone(s.Defects)
	return s
}

// Exhibit returns the exhibit with the given id.
func (s State) Exhibit(id string) (Exhibit, bool) {
	i := slices.IndexFunc(s.Exhibits, func(e Exhibit) bool { return e.ID == id })
	if i < 0 {
		return Exhibit{}, false
	}
	return s.Exhibits[i], true
}

// VisibleTo reports whether a side may know the exhibit exists: its own
// always, the other side's once disclosed. side "" is the tribunal, which
// sees what is in the record.
func (e Exhibit) VisibleTo(side string) bool { return e.Side == side || e.Disclosed() }

// Visible returns the exhibits side may see, in upload order.
func (s State) Visible(side string) []Exhibit {
	var out []Exhibit
	for _, e := range s.Exhibits {
		if e.VisibleTo(side) {
			out = append(out, e)
		}
	}
	return out
}

// Record returns the disclosed exhibits, in disclosure order: the
// exhibits of the record.
func (s State) Record() []Exhibit {
	var out []Exhibit
	for _, e := range s.Exhibits {
		if e.Disclosed() {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Exhibit) int { return a.DisclosedAt.Compare(b.DisclosedAt) })
	return out
}

// Pending counts the questions the tribunal still has to resolve:
// challenges not yet resolved and defect reports not yet resolved.
func (s State) Pending() int {
	n := 0
	for _, c := range s.Challenges {
		if c.Status == ChallengeOpen || c.Status == ChallengeAnswered {
			n++
		}
	}
	for _, d := range s.Defects {
		if !d.Resolved() {
			n++
		}
	}
	return n
}

// usage returns a side's exhibit count and total bytes.
func (s State) usage(side string) (count int, bytes int64) {
	for _, e := range s.Exhibits {
		if e.Side == side {
			count++
			bytes += e.Size
		}
	}
	return count, bytes
}
