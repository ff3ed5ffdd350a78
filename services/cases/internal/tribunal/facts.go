package tribunal

import (
	"time"

	"github.com/pcourt/pcourt/libs/award"
)

// Facts are what the decision reads of the rest of the case. The case
// builds them (procedure.Case.TribunalFacts); the tribunal never changes
// them.
type Facts struct {
	CaseID         string
	ExternalCaseID string
	Environment    string
	// Evaluation says the case is an evaluation (caseMode evaluation).
	Evaluation bool
	// RecordClosed says the record is confirmed (or deemed confirmed).
	RecordClosed bool
	// Terminated says the case ended by termination.
	Terminated bool
	// SettledAt is when both sides agreed a settlement (internal/settlement);
	// zero while they have not. Nobody decides a settled case: it is
	// assigned a reviewer only, who records the terms as a consent award.
	SettledAt time.Time
	OpenedAt  time.Time
	RecordAt  time.Time // when the record closed; zero while open
	Rules     award.Rules
	Parties   []Party
	// Record is the confirmed record, in the order the record summary
	// lists it (the answer first, then the submissions as filed).
	Record []Item
	// ClaimMinor and ClaimCurrency bound every payment to the claimant.
	ClaimMinor    int64
	ClaimCurrency string
	// EvaluationDefinition is the pinned question of an evaluation.
	EvaluationDefinition *award.Evaluation
	// ReviewPolicy is the evaluation's review policy: none, on_request
	// or always.
	ReviewPolicy string
	Windows      Windows
}

// Party is a participant as the conflict check and the award see it.
type Party struct {
	ParticipantID string
	Side          string
	PartnerID     string
	PrincipalID   string
	AgentID       string
	Joined        bool
}

// Item is one item of the confirmed record.
type Item struct {
	ID     string // "answer" or a submission id
	Side   string
	Digest string
}

// The sides, as the tribunal writes them.
const (
	Claimant   = "claimant"
	Respondent = "respondent"
)

// joinedSides are the sides with a joined participant, claimant first.
func (f Facts) joinedSides() []string {
	var out []string
	for _, s := range []string{Claimant, Respondent} {
		for _, p := range f.Parties {
			if p.Side == s && p.Joined {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// RecordDigest is the digest of the confirmed record a run reads: the
// SHA-256 of the RFC 8785 bytes of [{"itemId","side","digest"}, ...] in
// record order. An adjudicator files it back as its run's inputDigest,
// which shows it read this record and no other.
func RecordDigest(items []Item) string {
	type entry struct {
		ItemID string `json:"itemId"`
		Side   string `json:"side"`
		Digest string `json:"digest"`
	}
	list := make([]entry, 0, len(items))
	for _, it := range items {
		list = append(list, entry{it.ID, it.Side, it.Digest})
	}
	b, err := award.Canonical(list)
	if err != nil {
		panic("tribunal: record digest: " + err.Error()) // strings only: cannot fail
	}
	return award.Hash(b)
}

// Windows are the decision's deadlines, from the rules version.
type Windows struct {
	// ConfigurationChallenge: from the adjudicator's assignment, how long
	// a side may challenge its configuration.
	ConfigurationChallenge time.Duration
	// PreAwardReview: how long the sides see the dispositive part.
	PreAwardReview time.Duration
	// EvaluationAcceptance: under review policy on_request, how long
	// before an unanswered evaluation is deemed accepted.
	EvaluationAcceptance time.Duration
	// AssignmentRetry: how long to wait for the pool after it had nobody
	// eligible.
	AssignmentRetry time.Duration
}

const day = 24 * time.Hour

// WindowsByRules are the decision windows of each rules version. Like the
// procedure's deadline table, a version's row never changes.
var WindowsByRules = map[string]Windows{
	"pcourt-rules-2026-11": {
		ConfigurationChallenge: 3 * day,
		PreAwardReview:         2 * day,
		EvaluationAcceptance:   3 * day,
		AssignmentRetry:        time.Minute,
	},
}
