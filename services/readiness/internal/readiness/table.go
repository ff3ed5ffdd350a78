package readiness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Lane is the procedure lane a dispute would be heard in.
type Lane string

// The lanes of the report.
const (
	LaneAgent    Lane = "agent"
	LaneStandard Lane = "standard"
)

// Procedure is the canonical procedure name behind a lane.
type Procedure string

// The procedures behind the lanes.
const (
	ProcedureAgentOnly Procedure = "agent_only"
	ProcedureStandard  Procedure = "standard"
)

// CompositionValue is who would decide the case.
type CompositionValue string

// The composition values of the report.
const (
	CompositionMemorandum    CompositionValue = "memorandum"
	CompositionSingleArbiter CompositionValue = "single_arbiter"
	CompositionPanel         CompositionValue = "panel"
)

// CompositionReason is the closed set of reasons a composition is chosen;
// each names the composition rule that matched.
type CompositionReason string

// The composition reasons of the report.
const (
	ReasonDeclaratoryRelief CompositionReason = "declaratory_relief"
	ReasonMicroClaimsTier   CompositionReason = "micro_claims_tier"
	ReasonFastTrack         CompositionReason = "fast_track"
	ReasonPanelThreshold    CompositionReason = "panel_threshold"
	ReasonStandardClaim     CompositionReason = "standard_claim"
)

var compositionReasons = []CompositionReason{ReasonDeclaratoryRelief, ReasonMicroClaimsTier, ReasonFastTrack, ReasonPanelThreshold, ReasonStandardClaim}

// FeeTier is a filing-fee tier of the fee schedule.
type FeeTier string

// The fee tiers of the report.
const (
	TierMicro         FeeTier = "micro"
	TierSingleArbiter FeeTier = "single_arbiter"
	TierPanel         FeeTier = "panel"
	TierDeclaratory   FeeTier = "declaratory"
)

// RequirementCode names one requirement of the report. The set is closed:
// a report only ever carries the codes listed in [RequirementCodes].
type RequirementCode string

// The requirement codes of the report, in report order.
const (
	CodeLaneSupport            RequirementCode = "lane_support"
	CodeCaseTrackElection      RequirementCode = "case_track_election"
	CodeFastTrackClaimClass    RequirementCode = "fast_track_claim_class"
	CodeBilateralConsent       RequirementCode = "bilateral_consent"
	CodeAuthorityToBind        RequirementCode = "authority_to_bind"
	CodeClaimantEvidence       RequirementCode = "claimant_evidence"
	CodeRespondentProcess      RequirementCode = "respondent_process"
	CodeRemedyScope            RequirementCode = "remedy_scope"
	CodeRemedialJurisdiction   RequirementCode = "remedial_jurisdiction"
	CodeMicroClaimsTierConsent RequirementCode = "micro_claims_tier_consent"
	CodeSettlementRail         RequirementCode = "settlement_rail"
	CodeCorpusCoverage         RequirementCode = "corpus_coverage"
)

// RequirementCodes returns the closed set of requirement codes, in the order
// a report lists them.
func RequirementCodes() []RequirementCode {
	return []RequirementCode{
		CodeLaneSupport, CodeCaseTrackElection, CodeFastTrackClaimClass, CodeBilateralConsent,
		CodeAuthorityToBind, CodeClaimantEvidence, CodeRespondentProcess, CodeRemedyScope,
		CodeRemedialJurisdiction, CodeMicroClaimsTierConsent, CodeSettlementRail, CodeCorpusCoverage,
	}
}

// CompositionReasons returns the closed set of composition reasons.
func CompositionReasons() []CompositionReason {
	return slices.Clone(compositionReasons)
}

// EscrowWindowState places the reported escrow window relative to the instant
// of evaluation and the table's timing horizon.
type EscrowWindowState string

// The escrow window states.
const (
	// WindowAbsent: no escrowWindowEndsAt was reported.
	WindowAbsent EscrowWindowState = "absent"
	// WindowElapsed: the window ends at or before now.
	WindowElapsed EscrowWindowState = "elapsed"
	// WindowClosing: the window ends after now and at most the horizon after it.
	WindowClosing EscrowWindowState = "closing"
	// WindowOpen: the window ends more than the horizon after now.
	WindowOpen EscrowWindowState = "open"
)

var windowStates = []EscrowWindowState{WindowAbsent, WindowElapsed, WindowClosing, WindowOpen}

// Check is a named test a requirement rule applies to the request. The set
// is closed and each check is documented in docs/readiness-rules.md; rules
// choose among them, the evaluator implements them.
type Check string

// The checks a requirement rule may name.
const (
	// CheckLaneSupported: no lane limit matches the request.
	CheckLaneSupported Check = "laneSupported"
	// CheckCaseTrackProposed: caseTrack is present.
	CheckCaseTrackProposed Check = "caseTrackProposed"
	// CheckFastTrackEligible: a fast-track claim class is reported and the
	// amount in dispute is at most the table's FastTrackCeilingUsd.
	CheckFastTrackEligible Check = "fastTrackEligible"
	// CheckRemedyAllowed: the remedy is among those the claim class allows
	// (every remedy for an ordinary claim).
	CheckRemedyAllowed Check = "remedyAllowedForClaimClass"
	// CheckSettlementRailAllowed: the rail is among the allowed rails: the
	// claim class's rails when it names any, otherwise the table's
	// AllocationRails for corpus_allocation, otherwise every rail.
	CheckSettlementRailAllowed Check = "settlementRailAllowed"
	// CheckCorpusCompatible: the corpus rule that matched is compatible.
	CheckCorpusCompatible Check = "corpusCompatible"
	// The remaining checks read one reported boolean of the request.
	CheckMutualConsent          Check = "mutualConsentReported"
	CheckAuthorityToBind        Check = "authorityToBindReported"
	CheckClaimantEvidence       Check = "claimantEvidenceReady"
	CheckRespondentEvidence     Check = "respondentEvidenceReady"
	CheckMicroClaimsTierConsent Check = "microClaimsTierConsentReported"
	CheckRemedialJurisdiction   Check = "remedialJurisdictionOptInReported"
)

var checks = []Check{
	CheckLaneSupported, CheckCaseTrackProposed, CheckFastTrackEligible, CheckRemedyAllowed,
	CheckSettlementRailAllowed, CheckCorpusCompatible, CheckMutualConsent, CheckAuthorityToBind,
	CheckClaimantEvidence, CheckRespondentEvidence, CheckMicroClaimsTierConsent, CheckRemedialJurisdiction,
}

// Match selects requests. Every constraint that is set must hold; an empty
// list or nil pointer constrains nothing, so the zero Match matches every
// request. A CaseTracks or ClaimClasses constraint never matches a request
// that omits the track or reports an ordinary claim.
type Match struct {
	ClaimantTypes   []PartyType      `json:"claimantTypes,omitempty"`
	RespondentTypes []PartyType      `json:"respondentTypes,omitempty"`
	Lanes           []Lane           `json:"lanes,omitempty"`
	CaseTracks      []CaseTrack      `json:"caseTracks,omitempty"`
	Remedies        []Remedy         `json:"remedies,omitempty"`
	ClaimClasses    []ClaimClass     `json:"claimClasses,omitempty"`
	SettlementRails []SettlementRail `json:"settlementRails,omitempty"`
	// AmountAboveUsd holds when amountInDisputeUsd > the value.
	AmountAboveUsd *Money `json:"amountAboveUsd,omitempty"`
	// AmountAtMostUsd holds when amountInDisputeUsd <= the value.
	AmountAtMostUsd *Money `json:"amountAtMostUsd,omitempty"`
	// CorpusReported holds when corpusAmountUsd is a number (true) or null (false).
	CorpusReported *bool `json:"corpusReported,omitempty"`
	// CorpusCoversAmount holds when a corpus is reported and is at least
	// (true), or is not (false), the amount in dispute; no corpus covers nothing.
	CorpusCoversAmount *bool               `json:"corpusCoversAmount,omitempty"`
	EscrowWindow       []EscrowWindowState `json:"escrowWindow,omitempty"`
}

// LaneRule assigns the lane. The first rule whose When matches wins; When may
// not constrain Lanes, since the lane is what is being decided.
type LaneRule struct {
	Code      string    `json:"code"`
	When      Match     `json:"when"`
	Lane      Lane      `json:"lane"`
	Procedure Procedure `json:"procedure"`
}

// LaneLimit marks requests the assigned lane does not hear. Any match makes
// supportedLane false; the first match supplies the lane_support detail.
type LaneLimit struct {
	Code   string `json:"code"`
	When   Match  `json:"when"`
	Detail string `json:"detail"`
}

// CompositionRule chooses composition and fee tier when a case track is
// proposed. The first rule whose When matches wins.
type CompositionRule struct {
	Reason CompositionReason `json:"reason"`
	When   Match             `json:"when"`
	Value  CompositionValue  `json:"value"`
	Tier   FeeTier           `json:"tier"`
}

// FeeSchedule is one fee tier. The quote is
// max(FloorUsd, amountInDisputeUsd × Percent rounded half up to the cent) +
// PanelSurchargeUsd, in integer cents.
type FeeSchedule struct {
	Tier              FeeTier `json:"tier"`
	Percent           Percent `json:"percent"`
	FloorUsd          Money   `json:"floorUsd"`
	PanelSurchargeUsd Money   `json:"panelSurchargeUsd"`
	CollectionNote    string  `json:"collectionNote"`
}

// RequirementRule is one requirement. It applies when When is empty or any of
// its matches holds; then Check decides satisfied, and Satisfied or
// Unsatisfied is the detail. Rules sharing a code must never apply together
// (they differ by lane in the default table).
type RequirementRule struct {
	Code        RequirementCode `json:"code"`
	When        []Match         `json:"when,omitempty"`
	Check       Check           `json:"check"`
	Satisfied   string          `json:"satisfied"`
	Unsatisfied string          `json:"unsatisfied"`
}

// CorpusRule decides corpus compatibility. The first rule whose When matches
// wins.
type CorpusRule struct {
	Code       string `json:"code"`
	When       Match  `json:"when"`
	Compatible bool   `json:"compatible"`
	Detail     string `json:"detail"`
}

// TimingRule decides the timing warning. The first rule whose When matches
// wins; an empty Warning means no warning (null in the report).
type TimingRule struct {
	Code    string `json:"code"`
	When    Match  `json:"when"`
	Warning string `json:"warning"`
}

// ClaimClassRule says what a fast-track claim class may seek and through
// which rails it can be carried out. Empty Rails adds no rail constraint.
type ClaimClassRule struct {
	Class    ClaimClass       `json:"class"`
	Remedies []Remedy         `json:"remedies"`
	Rails    []SettlementRail `json:"rails,omitempty"`
}

// RuleTable is the complete, versioned rule set of the readiness report, as
// data. Texts may name request values with placeholders such as
// {amountInDisputeUsd}; see [Placeholders].
type RuleTable struct {
	Version string `json:"version"`
	// FastTrackCeilingUsd is the largest amount the ai_fast track hears.
	FastTrackCeilingUsd Money `json:"fastTrackCeilingUsd"`
	// TimingHorizonHours is how close an escrow window end must be to now
	// to count as closing.
	TimingHorizonHours int `json:"timingHorizonHours"`
	// AllocationRails are the rails that can execute a corpus allocation.
	AllocationRails []SettlementRail  `json:"allocationRails"`
	ClaimClasses    []ClaimClassRule  `json:"claimClasses"`
	Lanes           []LaneRule        `json:"lanes"`
	LaneLimits      []LaneLimit       `json:"laneLimits"`
	Compositions    []CompositionRule `json:"compositions"`
	Fees            []FeeSchedule     `json:"fees"`
	Requirements    []RequirementRule `json:"requirements"`
	Corpus          []CorpusRule      `json:"corpus"`
	Timing          []TimingRule      `json:"timing"`
	// Statement is the disclaimers statement.
	Statement string `json:"statement"`
}

// Rules is a rule table ready to evaluate requests against: it passed
// [RuleTable.Validate], which Evaluate relies on, and its hash, which a
// report may quote ({rulesHash}), is taken once. Encoding the table for
// the hash costs more than evaluating a request, so it is not done per
// report. The table must not be changed once it is Rules.
type Rules struct {
	table RuleTable
	hash  string
}

// NewRules validates table and prepares it for Evaluate.
func NewRules(table RuleTable) (Rules, error) {
	if err := table.Validate(); err != nil {
		return Rules{}, fmt.Errorf("readiness rule table %s: %w", table.Version, err)
	}
	return Rules{table: table, hash: table.Hash()}, nil
}

// Version is the table's version.
func (r Rules) Version() string { return r.table.Version }

// Hash is [RuleTable.Hash] of the table.
func (r Rules) Hash() string { return r.hash }

// Canonical returns the bytes the table hash is taken over: the compact
// encoding/json serialization of the table, fields in declaration order,
// lists in table order, no maps anywhere, amounts as decimal dollars and
// percentages as percent (see Money and Percent), Go's default escaping of
// <, > and &.
func (t RuleTable) Canonical() []byte {
	b, err := json.Marshal(t)
	if err != nil {
		// The table holds only strings, integers, booleans and types whose
		// MarshalJSON cannot fail; an error here is a programming error.
		panic(fmt.Sprintf("readiness: encoding rule table: %v", err))
	}
	return b
}

// Hash returns the lowercase hex SHA-256 of [RuleTable.Canonical].
func (t RuleTable) Hash() string {
	sum := sha256.Sum256(t.Canonical())
	return hex.EncodeToString(sum[:])
}

// ErrInvalidRuleTable is wrapped by every error [RuleTable.Validate] returns.
var ErrInvalidRuleTable = errors.New("invalid readiness rule table")

// Placeholders returns the placeholders a table text may use, in the order
// they are substituted. Each is replaced with a value of the request or the
// table when the report is built.
func Placeholders() []string {
	return slices.Clone(placeholders)
}

var placeholders = []string{
	"{amountInDisputeUsd}", "{corpusAmountUsd}", "{caseTrack}", "{remedy}", "{settlementRail}",
	"{fastTrackClaimClass}", "{allowedRemedies}", "{allowedRails}", "{escrowWindowEndsAt}",
	"{lane}", "{procedure}", "{laneLimit}", "{rulesVersion}", "{rulesHash}",
}

// Validate reports the first structural defect of the table: unknown
// values, missing fee tiers, first-match lists without a final catch-all,
// unknown placeholders. [NewRules] refuses a table that does not pass it.
func (t RuleTable) Validate() error {
	if t.Version == "" {
		return invalidTable("version is empty")
	}
	if t.FastTrackCeilingUsd.cents < 0 || t.FastTrackCeilingUsd.cents > maxAmountCents {
		return invalidTable("fastTrackCeilingUsd is out of range")
	}
	if t.TimingHorizonHours <= 0 {
		return invalidTable("timingHorizonHours must be positive")
	}
	if err := allIn("allocationRails", t.AllocationRails, rails); err != nil {
		return err
	}
	seenClass := map[ClaimClass]bool{}
	for i, c := range t.ClaimClasses {
		where := fmt.Sprintf("claimClasses[%d]", i)
		if !slices.Contains(claimClasses, c.Class) || seenClass[c.Class] {
			return invalidTable(where + ": unknown or repeated class " + string(c.Class))
		}
		seenClass[c.Class] = true
		if len(c.Remedies) == 0 {
			return invalidTable(where + ": no remedies")
		}
		if err := allIn(where+".remedies", c.Remedies, remedies); err != nil {
			return err
		}
		if err := allIn(where+".rails", c.Rails, rails); err != nil {
			return err
		}
	}
	if len(seenClass) != len(claimClasses) {
		return invalidTable("claimClasses must list every fast-track claim class")
	}

	for i, r := range t.Lanes {
		where := fmt.Sprintf("lanes[%d]", i)
		if err := validMatch(where, r.When); err != nil {
			return err
		}
		if len(r.When.Lanes) > 0 {
			return invalidTable(where + ": a lane rule cannot match on the lane")
		}
		if !slices.Contains([]Lane{LaneAgent, LaneStandard}, r.Lane) ||
			!slices.Contains([]Procedure{ProcedureAgentOnly, ProcedureStandard}, r.Procedure) {
			return invalidTable(where + ": unknown lane or procedure")
		}
		if err := validText(where, r.Code); err != nil {
			return err
		}
	}
	if err := catchAllLast("lanes", len(t.Lanes), func(i int) Match { return t.Lanes[i].When }); err != nil {
		return err
	}
	for i, l := range t.LaneLimits {
		where := fmt.Sprintf("laneLimits[%d]", i)
		if err := validMatch(where, l.When); err != nil {
			return err
		}
		if err := validText(where, l.Code, l.Detail); err != nil {
			return err
		}
		if strings.Contains(l.Detail, "{laneLimit}") {
			return invalidTable(where + ": a lane limit detail cannot contain {laneLimit}")
		}
	}

	tiers := map[FeeTier]bool{}
	for i, f := range t.Fees {
		where := fmt.Sprintf("fees[%d]", i)
		if !slices.Contains([]FeeTier{TierMicro, TierSingleArbiter, TierPanel, TierDeclaratory}, f.Tier) || tiers[f.Tier] {
			return invalidTable(where + ": unknown or repeated tier " + string(f.Tier))
		}
		tiers[f.Tier] = true
		if f.Percent.basisPoints < 0 || f.Percent.basisPoints > 10000 || f.FloorUsd.cents < 0 || f.PanelSurchargeUsd.cents < 0 {
			return invalidTable(where + ": percent must be 0 to 100 and amounts non-negative")
		}
		if err := validText(where, f.CollectionNote); err != nil {
			return err
		}
	}
	for i, c := range t.Compositions {
		where := fmt.Sprintf("compositions[%d]", i)
		if err := validMatch(where, c.When); err != nil {
			return err
		}
		if !slices.Contains(compositionReasons, c.Reason) ||
			!slices.Contains([]CompositionValue{CompositionMemorandum, CompositionSingleArbiter, CompositionPanel}, c.Value) {
			return invalidTable(where + ": unknown reason or value")
		}
		if !tiers[c.Tier] {
			return invalidTable(where + ": tier " + string(c.Tier) + " has no fee schedule")
		}
	}
	if err := catchAllLast("compositions", len(t.Compositions), func(i int) Match { return t.Compositions[i].When }); err != nil {
		return err
	}

	codes := RequirementCodes()
	for i, r := range t.Requirements {
		where := fmt.Sprintf("requirements[%d]", i)
		if !slices.Contains(codes, r.Code) || !slices.Contains(checks, r.Check) {
			return invalidTable(where + ": unknown code or check")
		}
		for j, m := range r.When {
			if err := validMatch(fmt.Sprintf("%s.when[%d]", where, j), m); err != nil {
				return err
			}
		}
		if err := validText(where, r.Satisfied, r.Unsatisfied); err != nil {
			return err
		}
	}

	for i, c := range t.Corpus {
		where := fmt.Sprintf("corpus[%d]", i)
		if err := validMatch(where, c.When); err != nil {
			return err
		}
		if err := validText(where, c.Code, c.Detail); err != nil {
			return err
		}
	}
	if err := catchAllLast("corpus", len(t.Corpus), func(i int) Match { return t.Corpus[i].When }); err != nil {
		return err
	}
	for i, r := range t.Timing {
		where := fmt.Sprintf("timing[%d]", i)
		if err := validMatch(where, r.When); err != nil {
			return err
		}
		if err := validText(where, r.Code); err != nil {
			return err
		}
		if err := validPlaceholders(where, r.Warning); err != nil {
			return err
		}
	}
	if err := catchAllLast("timing", len(t.Timing), func(i int) Match { return t.Timing[i].When }); err != nil {
		return err
	}
	return validText("statement", t.Statement)
}

func invalidTable(msg string) error {
	return fmt.Errorf("%w: %s", ErrInvalidRuleTable, msg)
}

func allIn[E comparable](where string, values, allowed []E) error {
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return invalidTable(fmt.Sprintf("%s: unknown value %v", where, v))
		}
	}
	return nil
}

func validMatch(where string, m Match) error {
	for _, err := range []error{
		allIn(where+".claimantTypes", m.ClaimantTypes, partyTypes),
		allIn(where+".respondentTypes", m.RespondentTypes, partyTypes),
		allIn(where+".lanes", m.Lanes, []Lane{LaneAgent, LaneStandard}),
		allIn(where+".caseTracks", m.CaseTracks, caseTracks),
		allIn(where+".remedies", m.Remedies, remedies),
		allIn(where+".claimClasses", m.ClaimClasses, claimClasses),
		allIn(where+".settlementRails", m.SettlementRails, rails),
		allIn(where+".escrowWindow", m.EscrowWindow, windowStates),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// catchAllLast makes sure a first-match list always decides: its last rule
// must match every request.
func catchAllLast(where string, n int, when func(int) Match) error {
	if n == 0 {
		return invalidTable(where + " is empty")
	}
	if !isCatchAll(when(n - 1)) {
		return invalidTable(where + ": the last rule must match every request")
	}
	return nil
}

func isCatchAll(m Match) bool {
	return len(m.ClaimantTypes) == 0 && len(m.RespondentTypes) == 0 && len(m.Lanes) == 0 &&
		len(m.CaseTracks) == 0 && len(m.Remedies) == 0 && len(m.ClaimClasses) == 0 &&
		len(m.SettlementRails) == 0 && m.AmountAboveUsd == nil && m.AmountAtMostUsd == nil &&
		m.CorpusReported == nil && m.CorpusCoversAmount == nil && len(m.EscrowWindow) == 0
}

// validText requires non-empty texts whose placeholders are all known.
func validText(where string, texts ...string) error {
	for _, s := range texts {
		if s == "" {
			return invalidTable(where + ": empty text")
		}
		if err := validPlaceholders(where, s); err != nil {
			return err
		}
	}
	return nil
}

func validPlaceholders(where, s string) error {
	for rest := s; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			open = len(rest)
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return invalidTable(where + ": unbalanced }")
		}
		if open == len(rest) {
			return nil
		}
		closing := strings.IndexByte(rest[open:], '}')
		if closing < 0 {
			return invalidTable(where + ": unbalanced {")
		}
		if name := rest[open : open+closing+1]; !slices.Contains(placeholders, name) {
			return invalidTable(where + ": unknown placeholder " + name)
		}
		rest = rest[open+closing+1:]
	}
}
