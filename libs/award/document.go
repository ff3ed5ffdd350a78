// Package award is the platform's award as a document anyone can check
// offline: its JSON shape (the bytes of the `json` artifact, RFC 8785
// canonical, whose SHA-256 is the award's identity `awardHash`), the
// proposal an adjudicator files and the adjudicator configuration a case
// pins, the compact detached JWS attestation (RFC 7515 appendix F,
// EdDSA) that signs an award, and its verification with nothing but the
// award's bytes, the attestation and the public JWK set.
//
// The cases service issues awards with it, the reference adjudicator
// (tools/adjudicator) files proposals with it, and a partner's verifier
// can import it or follow the steps in docs/awards.md in any language.
package award

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/pcourt/pcourt/libs/jcs"
)

// The schema versions of the documents here.
const (
	// SchemaAward is the award document's schemaVersion.
	SchemaAward = "pc-award-v1"
	// SchemaProposal is the output schema version of a proposed opinion:
	// what an adjudicator files and what its configuration pins as
	// outputSchemaVersion.
	SchemaProposal = "pc-adjudication-proposal-v1"
)

// Outcome codes of a proceeding (caseMode proceeding). An evaluation's
// outcome is one of its allowedOutcomes instead.
const (
	OutcomeClaimUpheld          = "claim_upheld"
	OutcomeClaimPartiallyUpheld = "claim_partially_upheld"
	OutcomeClaimDismissed       = "claim_dismissed"
)

// ProceedingOutcomes are the outcomes a proceeding's award may have.
var ProceedingOutcomes = []string{OutcomeClaimUpheld, OutcomeClaimPartiallyUpheld, OutcomeClaimDismissed}

// OutcomeSettledByConsent is the outcome of a consent award: the sides
// settled, and the tribunal recorded their terms as an award on agreed
// terms (Document.Settlement). It decides nothing of the merits, and no
// adjudicator proposes it: it is no proceeding's or evaluation's outcome.
const OutcomeSettledByConsent = "settled_by_consent"

// Remedy kinds.
const (
	// RemedyPayment: Payer pays Payee AmountMinor of Currency by DueBy.
	RemedyPayment = "payment"
	// RemedyPerformance: Obligor does what Description says by DueBy.
	RemedyPerformance = "performance"
)

// Remedy is one thing the award orders a side to do.
type Remedy struct {
	Kind string `json:"kind"`
	// Payer and Payee are sides (claimant, respondent), for a payment.
	Payer string `json:"payer,omitempty"`
	Payee string `json:"payee,omitempty"`
	// AmountMinor is in the currency's minor units (USD cents).
	AmountMinor int64  `json:"amountMinor,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// Obligor is the side that must perform, for a performance remedy.
	Obligor     string `json:"obligor,omitempty"`
	Description string `json:"description,omitempty"`
	// DueBy is the instant by which the remedy is due (UTC, three
	// fractional digits, Z).
	DueBy string `json:"dueBy"`
}

// Citation names one item of the confirmed record by its id and digest.
type Citation struct {
	// ItemID is "answer" or a submission id, as the record summary lists it.
	ItemID string `json:"itemId"`
	// Digest is the item's SHA-256 (lowercase hex) as the record holds it.
	Digest string `json:"digest"`
	// Pinpoint says where in the item, in the adjudicator's words.
	Pinpoint string `json:"pinpoint,omitempty"`
}

// Proposal is a proposed opinion (SchemaProposal): what the adjudicator
// files for a run, and what the reviewer's override replaces.
type Proposal struct {
	Outcome   string     `json:"outcome"`
	Remedies  []Remedy   `json:"remedies"`
	Reasons   string     `json:"reasons"`
	Citations []Citation `json:"citations"`
}

// Configuration is an AI adjudicator's configuration as a case pins it at
// assignment and shows it to both sides.
type Configuration struct {
	// Provider is "openai-compatible" for a model behind the chat
	// completions protocol, or "rubric" for the documented deterministic
	// rubric of tools/adjudicator (no model).
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// ModelVersion is the exact model build or revision.
	ModelVersion string `json:"modelVersion"`
	// InstructionsDigest is the SHA-256 (lowercase hex) of the system
	// instructions the adjudicator gives the model.
	InstructionsDigest string `json:"instructionsDigest"`
	// OutputSchemaVersion is the proposal schema it answers in (SchemaProposal).
	OutputSchemaVersion string `json:"outputSchemaVersion"`
	// Temperature is the sampling temperature, in thousandths (0 to 2000),
	// an integer so the configuration's bytes never depend on float
	// formatting.
	TemperatureMilli int `json:"temperatureMilli"`
	// Tools are the names of the tools the model may call (none, usually).
	Tools []string `json:"tools"`
}

// Member is a tribunal member as an award names it.
type Member struct {
	// MemberID is the public id of the member's credential.
	MemberID string `json:"memberId"`
	// Kind is "autonomous_agent" for the adjudicator, "individual" for the reviewer.
	Kind string `json:"kind"`
}

// Run is one adjudication run an award used or superseded.
type Run struct {
	RunID string `json:"runId"`
	// ConfigurationDigest is the digest of the configuration the run used.
	ConfigurationDigest string `json:"configurationDigest"`
	// InputDigest is the digest of the confirmed record the run read.
	InputDigest string `json:"inputDigest"`
	// OutputDigest is the SHA-256 of the proposal's canonical bytes, or
	// "" for a run that ended without a proposal.
	OutputDigest string `json:"outputDigest,omitempty"`
	Status       string `json:"status"`
}

// Tribunal is who decided and how. A consent award was decided by no one:
// the reviewer recorded the sides' terms, so it names the reviewer alone,
// no adjudicator, configuration, run or opinion (the zero values, left out
// of its bytes); every other award names them all.
type Tribunal struct {
	Adjudicator   Member        `json:"adjudicator,omitzero"`
	Configuration Configuration `json:"configuration,omitzero"`
	Runs          []Run         `json:"runs"`
	Reviewer      Member        `json:"reviewer"`
	// ReviewerOpinion is "agree" (the proposal's reasons stand) or
	// "revise" (the reviewer's own reasons replace them); none for a
	// consent award.
	ReviewerOpinion string `json:"reviewerOpinion,omitempty"`
	// Overridden says the reviewer replaced the proposed outcome.
	Overridden bool `json:"overridden"`
}

// The decisions of an appeal (Appeal.Decision).
const (
	// AppealAffirmed: the appealed award's dispositive part stands.
	AppealAffirmed = "affirm"
	// AppealModified: the outcome stands, the remedies are changed.
	AppealModified = "modify"
	// AppealSetAside: the appealed outcome is set aside and replaced.
	AppealSetAside = "set_aside"
)

// AppealDecisions lists the decisions of an appeal.
var AppealDecisions = []string{AppealAffirmed, AppealModified, AppealSetAside}

// Appeal is the appellate part of an award issued on an appeal: which
// appeal, whose, how it was decided and by which appellate reviewer (a
// reviewer who took no part in the appealed award).
type Appeal struct {
	AppealID  string `json:"appealId"`
	Appellant string `json:"appellant"`
	Decision  string `json:"decision"`
	Reviewer  Member `json:"reviewer"`
}

// Party is a participant of the case as the award names it.
type Party struct {
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	PrincipalID   string `json:"principalId"`
}

// Rules are the rules the case was pinned to.
type Rules struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

// Evaluation is the pinned question of an evaluation case.
type Evaluation struct {
	ExternalEvaluationID string   `json:"externalEvaluationId"`
	EvaluationDigest     string   `json:"evaluationDigest"`
	Question             string   `json:"question"`
	Criteria             []string `json:"criteria"`
	AllowedOutcomes      []string `json:"allowedOutcomes"`
}

// Terms are a settlement's terms as the sides agree them: what the award
// on agreed terms orders (Remedies, in an award's shape) and the terms in
// the sides' own words (Text). Their digest names them: a side accepts
// exactly these terms by it, and the consent award carries it.
type Terms struct {
	Remedies []Remedy `json:"remedies"`
	Text     string   `json:"text"`
}

// Digest returns the lowercase hex SHA-256 of the terms' RFC 8785
// canonical JSON, {"remedies":[...],"text":"..."}, with remedies written
// [] when there are none. It refuses (ErrDocument) terms that do not
// survive the trip through JSON unchanged: a string that is not valid
// UTF-8 would be hashed as U+FFFD.
func (t Terms) Digest() (string, error) {
	t.Remedies = orEmpty(t.Remedies)
	b, err := Canonical(t)
	if err != nil {
		return "", fmt.Errorf("%w: settlement terms: %v", ErrDocument, err)
	}
	var back Terms
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, t) {
		return "", fmt.Errorf("%w: the settlement terms change through JSON (a string that is not valid UTF-8?)", ErrDocument)
	}
	return Hash(b), nil
}

// The acts by which a side consents to settlement terms.
const (
	// ConsentProposed: the side proposed the terms.
	ConsentProposed = "proposed"
	// ConsentAccepted: the side accepted them by their digest.
	ConsentAccepted = "accepted"
)

// Consent is one side's consent to a settlement's terms.
type Consent struct {
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	// Act is ConsentProposed or ConsentAccepted.
	Act string `json:"act"`
	// At is the instant of the act (UTC, three fractional digits, Z).
	At string `json:"at"`
}

// Settlement is what a consent award records of the sides' settlement:
// the digest of the terms they agreed, whose remedies are the award's
// remedies and whose text is Text, and each side's consent to exactly
// those terms, in the order given.
type Settlement struct {
	TermsDigest string    `json:"termsDigest"`
	Text        string    `json:"text"`
	Consents    []Consent `json:"consents"`
}

// Document is the award (SchemaAward). Its canonical bytes (Bytes) are
// the json artifact; awardHash is their SHA-256 and is not part of them.
type Document struct {
	SchemaVersion  string `json:"schemaVersion"`
	AwardID        string `json:"awardId"`
	CaseID         string `json:"caseId"`
	ExternalCaseID string `json:"externalCaseId"`
	Environment    string `json:"environment"`
	// CaseMode is proceeding or evaluation.
	CaseMode string `json:"caseMode"`
	// Corrects is the awardHash of the award this one corrects, if any.
	Corrects string `json:"corrects,omitempty"`
	// Appeal is set on an appellate award: the appeal it decides, which
	// names the appealed award in Corrects.
	Appeal     *Appeal     `json:"appeal,omitempty"`
	Rules      Rules       `json:"rules"`
	Parties    []Party     `json:"parties"`
	Evaluation *Evaluation `json:"evaluation,omitempty"`
	Outcome    string      `json:"outcome"`
	Remedies   []Remedy    `json:"remedies"`
	Reasons    string      `json:"reasons"`
	Citations  []Citation  `json:"citations"`
	// Settlement is set on a consent award (outcome
	// settled_by_consent), and only on one.
	Settlement *Settlement `json:"settlement,omitempty"`
	Tribunal   Tribunal    `json:"tribunal"`
	IssuedAt   string      `json:"issuedAt"`
}

// Consent reports whether d is a consent award: the sides' settlement
// recorded on agreed terms.
func (d Document) Consent() bool { return d.Outcome == OutcomeSettledByConsent }

// Canonical returns v's RFC 8785 canonical JSON bytes.
func Canonical(v any) ([]byte, error) { return jcs.Canonicalize(v) }

// Hash returns the lowercase hex SHA-256 of b: for an award's canonical
// bytes, its awardHash.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
