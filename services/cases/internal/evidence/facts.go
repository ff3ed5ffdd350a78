package evidence

// Phase is what the procedure allows the evidence now, from the case's
// status (procedure.Case.EvidenceFacts).
type Phase string

// The phases, in procedural order.
const (
	// PhaseFiling: the procedure runs before the record is confirmed
	// (awaiting the respondent or its answer, an evidence or rebuttal
	// round): a side uploads, describes and discloses exhibits; the other
	// side challenges and reports defects; answers are given.
	PhaseFiling Phase = "filing"
	// PhaseConfirmation: the sides confirm the record. It no longer
	// changes: nothing is uploaded, disclosed or described; challenges,
	// answers and defect reports still may be made, for the tribunal.
	PhaseConfirmation Phase = "record_confirmation"
	// PhaseDecision: the record is closed and the tribunal decides: it
	// resolves challenges and defect reports; the offering side may still
	// answer a challenge.
	PhaseDecision Phase = "decision"
	// PhaseEnded: the case is awarded, settled or terminated. Nothing changes.
	PhaseEnded Phase = "ended"
)

// Limits are the rules' bounds on a side's exhibits.
type Limits struct {
	MaxFileBytes  int64 // one file
	MaxSideBytes  int64 // all of one side's exhibits in the case
	MaxSideFiles  int   // how many exhibits one side may upload
	MaxTextLength int   // grounds, answers, reasons, descriptions, details (characters)
}

// LimitsByRules are the limits each rules version pins (docs/evidence.md).
// A case keeps its rules version's limits for its whole life.
var LimitsByRules = map[string]Limits{
	"pcourt-rules-2026-11": {
		MaxFileBytes:  100 << 20,
		MaxSideBytes:  500 << 20,
		MaxSideFiles:  50,
		MaxTextLength: 4000,
	},
}

// DefaultRules is the rules version whose limits apply to a case pinned to
// a version this table does not know (one opened before evidence files).
const DefaultRules = "pcourt-rules-2026-11"

// LimitsFor returns the limits of a rules version.
func LimitsFor(rulesVersion string) Limits {
	if l, ok := LimitsByRules[rulesVersion]; ok {
		return l
	}
	return LimitsByRules[DefaultRules]
}

// Facts are what the evidence reads of the rest of the case.
type Facts struct {
	Phase  Phase
	Limits Limits
	// Joined says which sides take part: a side that has not joined
	// cannot act.
	Joined map[string]bool
}
