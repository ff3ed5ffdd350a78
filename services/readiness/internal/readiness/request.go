package readiness

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// CaseTrack is the case track the caller proposes. It is only a proposal: the
// track is fixed when the case is filed.
type CaseTrack string

// The case tracks of the readiness request.
const (
	CaseTrackAIFast          CaseTrack = "ai_fast"
	CaseTrackAIStandard      CaseTrack = "ai_standard"
	CaseTrackAIAssistedHuman CaseTrack = "ai_assisted_human"
)

// PartyType is what kind of party the claimant or the respondent is.
type PartyType string

// The party types of the readiness request.
const (
	PartyHuman        PartyType = "human"
	PartyOrganization PartyType = "organization"
	PartyAIAgent      PartyType = "ai_agent"
)

// Remedy is the relief the claimant seeks.
type Remedy string

// The remedies of the readiness request.
const (
	// RemedyCorpusAllocation allocates a corpus that is already held.
	RemedyCorpusAllocation Remedy = "corpus_allocation"
	// RemedyMoneyObligation orders a payment beyond any held corpus.
	RemedyMoneyObligation Remedy = "money_obligation"
	// RemedyDeclaratory declares rights without ordering a payment.
	RemedyDeclaratory Remedy = "declaratory"
)

// SettlementRail is how an award would be carried out.
type SettlementRail string

// The settlement rails of the readiness request.
const (
	RailNone             SettlementRail = "none"
	RailX402R            SettlementRail = "x402r"
	RailBilateralEscrow  SettlementRail = "bilateral_escrow"
	RailACP              SettlementRail = "acp"
	RailProcessorConnect SettlementRail = "processor_connect"
	RailPartnerExecutes  SettlementRail = "partner_executes"
)

// ClaimClass is a fast-track claim class. A request without one
// (fastTrackClaimClass null) is an ordinary claim.
type ClaimClass string

// The fast-track claim classes of the readiness request.
const (
	ClassPaymentNotSettled     ClaimClass = "payment_not_settled"
	ClassRefundWindowExpired   ClaimClass = "refund_window_expired"
	ClassNonDelivery           ClaimClass = "non_delivery"
	ClassDoubleCharge          ClaimClass = "double_charge"
	ClassEscrowedRefundRequest ClaimClass = "escrowed_refund_request"
	ClassACPEvaluation         ClaimClass = "acp_evaluation"
)

// The closed value sets, in the order the spec lists them; validation and
// the report texts both read them, so the order is part of the output.
var (
	caseTracks   = []CaseTrack{CaseTrackAIFast, CaseTrackAIStandard, CaseTrackAIAssistedHuman}
	partyTypes   = []PartyType{PartyHuman, PartyOrganization, PartyAIAgent}
	remedies     = []Remedy{RemedyCorpusAllocation, RemedyMoneyObligation, RemedyDeclaratory}
	rails        = []SettlementRail{RailNone, RailX402R, RailBilateralEscrow, RailACP, RailProcessorConnect, RailPartnerExecutes}
	claimClasses = []ClaimClass{ClassPaymentNotSettled, ClassRefundWindowExpired, ClassNonDelivery, ClassDoubleCharge, ClassEscrowedRefundRequest, ClassACPEvaluation}
)

// MaxAmountUSD is the largest amount in dispute or corpus a request may
// report, inclusive.
const MaxAmountUSD = 10_000_000

// maxAmountCents is MaxAmountUSD in cents.
const maxAmountCents = MaxAmountUSD * 100

// Member is one member of the request body as the decoder saw it. JSON tells
// three cases apart and the spec gives each a meaning, so Member keeps them:
// the zero value is a missing member, Present with a nil Value is an explicit
// null, and Present with a Value is a value. Build them with [Given] and
// [Null].
type Member[T any] struct {
	// Present reports that the member appeared in the body, null or not.
	Present bool
	// Value is the member's value, nil when the member was null.
	Value *T
}

// Given returns a member that is present with value v.
func Given[T any](v T) Member[T] {
	return Member[T]{Present: true, Value: &v}
}

// Null returns a member that is present and null.
func Null[T any]() Member[T] {
	return Member[T]{Present: true}
}

// RawRequest is the readiness request body after JSON decoding and before
// validation, one [Member] per body field. The HTTP layer decodes the body
// strictly (unknown members, wrong JSON types and trailing data are its 400s)
// and hands the result to [NewRequest], which enforces everything else.
//
// A decoder that cannot tell a missing member from null may map both to the
// zero Member; NewRequest then still refuses a missing required member, but
// would take a null optional member (caseTrack, escrowWindowEndsAt) for an
// omitted one, which the spec does not allow.
type RawRequest struct {
	CaseTrack                         Member[string]
	ClaimantType                      Member[string]
	RespondentType                    Member[string]
	AmountInDisputeUsd                Member[float64]
	Remedy                            Member[string]
	SettlementRail                    Member[string]
	FastTrackClaimClass               Member[string]
	MutualConsentReported             Member[bool]
	AuthorityToBindReported           Member[bool]
	ClaimantEvidenceReady             Member[bool]
	RespondentEvidenceReady           Member[bool]
	MicroClaimsTierConsentReported    Member[bool]
	RemedialJurisdictionOptInReported Member[bool]
	CorpusAmountUsd                   Member[float64]
	EscrowWindowEndsAt                Member[string]
}

// ValidationError names the first request field that breaks the readiness
// request contract. NewRequest checks fields in the order of the spec's
// request table and stops at the first failure, so one bad request always
// yields the same error.
type ValidationError struct {
	// Field is the JSON member name, e.g. "amountInDisputeUsd".
	Field string
	// Reason says what is wrong in words a caller can act on, e.g.
	// "must have at most 2 decimal places".
	Reason string
}

// Error returns "<field> <reason>", fit for a problem detail.
func (e *ValidationError) Error() string {
	return e.Field + " " + e.Reason
}

// Request is a validated readiness request. Build it with [NewRequest]; its
// fields cannot be changed afterwards, so a Request in hand always satisfies
// the contract.
type Request struct {
	caseTrack               CaseTrack // "" when omitted
	claimantType            PartyType
	respondentType          PartyType
	amountInDispute         Money
	remedy                  Remedy
	settlementRail          SettlementRail
	claimClass              ClaimClass // "" for an ordinary claim
	mutualConsent           bool
	authorityToBind         bool
	claimantEvidenceReady   bool
	respondentEvidenceReady bool
	microClaimsTierConsent  bool
	remedialJurisdiction    bool
	corpus                  Money
	corpusReported          bool
	escrowWindowEndsAt      time.Time // UTC
	escrowWindowReported    bool
}

// NewRequest validates raw against the readiness request contract and
// returns the Request. On failure the error is a *ValidationError naming the
// first offending field in spec order.
//
// USD amounts are validated as follows: finite, from 0 to MaxAmountUSD
// inclusive, and with at most two decimal places, meaning that the shortest
// decimal text that reads back as the same float64 has at most two digits
// after the point (so 12.5 and 12.50 pass, 12.505 fails). Negative zero is
// taken as 0. escrowWindowEndsAt must be an RFC 3339 date-time with an offset
// (time.RFC3339, fractional seconds allowed) whose UTC year is 0000 to 9999.
func NewRequest(raw RawRequest) (Request, error) {
	var r Request
	var err error

	if raw.CaseTrack.Present {
		if raw.CaseTrack.Value == nil {
			return Request{}, invalid("caseTrack", "must not be null; omit it to leave the track unselected")
		}
		if r.caseTrack, err = oneOf("caseTrack", *raw.CaseTrack.Value, caseTracks); err != nil {
			return Request{}, err
		}
	}
	if r.claimantType, err = requiredEnum("claimantType", raw.ClaimantType, partyTypes); err != nil {
		return Request{}, err
	}
	if r.respondentType, err = requiredEnum("respondentType", raw.RespondentType, partyTypes); err != nil {
		return Request{}, err
	}
	amount, err := required("amountInDisputeUsd", raw.AmountInDisputeUsd)
	if err != nil {
		return Request{}, err
	}
	if r.amountInDispute, err = usd("amountInDisputeUsd", amount); err != nil {
		return Request{}, err
	}
	if r.remedy, err = requiredEnum("remedy", raw.Remedy, remedies); err != nil {
		return Request{}, err
	}
	if r.settlementRail, err = requiredEnum("settlementRail", raw.SettlementRail, rails); err != nil {
		return Request{}, err
	}
	if !raw.FastTrackClaimClass.Present {
		return Request{}, invalid("fastTrackClaimClass", "is required; send null for an ordinary claim")
	}
	if raw.FastTrackClaimClass.Value != nil {
		if r.claimClass, err = oneOf("fastTrackClaimClass", *raw.FastTrackClaimClass.Value, claimClasses); err != nil {
			return Request{}, err
		}
	}
	flags := []struct {
		field  string
		member Member[bool]
		dst    *bool
	}{
		{"mutualConsentReported", raw.MutualConsentReported, &r.mutualConsent},
		{"authorityToBindReported", raw.AuthorityToBindReported, &r.authorityToBind},
		{"claimantEvidenceReady", raw.ClaimantEvidenceReady, &r.claimantEvidenceReady},
		{"respondentEvidenceReady", raw.RespondentEvidenceReady, &r.respondentEvidenceReady},
		{"microClaimsTierConsentReported", raw.MicroClaimsTierConsentReported, &r.microClaimsTierConsent},
		{"remedialJurisdictionOptInReported", raw.RemedialJurisdictionOptInReported, &r.remedialJurisdiction},
	}
	for _, f := range flags {
		if *f.dst, err = required(f.field, f.member); err != nil {
			return Request{}, err
		}
	}
	if !raw.CorpusAmountUsd.Present {
		return Request{}, invalid("corpusAmountUsd", "is required; send null when no external corpus exists")
	}
	if raw.CorpusAmountUsd.Value != nil {
		if r.corpus, err = usd("corpusAmountUsd", *raw.CorpusAmountUsd.Value); err != nil {
			return Request{}, err
		}
		r.corpusReported = true
	}
	if raw.EscrowWindowEndsAt.Present {
		if raw.EscrowWindowEndsAt.Value == nil {
			return Request{}, invalid("escrowWindowEndsAt", "must not be null; omit it when there is no settlement deadline")
		}
		if r.escrowWindowEndsAt, err = dateTime("escrowWindowEndsAt", *raw.EscrowWindowEndsAt.Value); err != nil {
			return Request{}, err
		}
		r.escrowWindowReported = true
	}
	return r, nil
}

// CaseTrack returns the proposed case track and whether one was proposed.
func (r Request) CaseTrack() (CaseTrack, bool) { return r.caseTrack, r.caseTrack != "" }

// ClaimantType returns the claimant's party type.
func (r Request) ClaimantType() PartyType { return r.claimantType }

// RespondentType returns the respondent's party type.
func (r Request) RespondentType() PartyType { return r.respondentType }

// AmountInDisputeUsd returns the amount in dispute.
func (r Request) AmountInDisputeUsd() Money { return r.amountInDispute }

// Remedy returns the relief sought.
func (r Request) Remedy() Remedy { return r.remedy }

// SettlementRail returns the settlement rail.
func (r Request) SettlementRail() SettlementRail { return r.settlementRail }

// FastTrackClaimClass returns the fast-track claim class and false for an
// ordinary claim.
func (r Request) FastTrackClaimClass() (ClaimClass, bool) { return r.claimClass, r.claimClass != "" }

// MutualConsentReported reports whether bilateral arbitration consent was reported.
func (r Request) MutualConsentReported() bool { return r.mutualConsent }

// AuthorityToBindReported reports whether the signers report authority to bind their principals.
func (r Request) AuthorityToBindReported() bool { return r.authorityToBind }

// ClaimantEvidenceReady reports whether the claimant's evidence is reported ready.
func (r Request) ClaimantEvidenceReady() bool { return r.claimantEvidenceReady }

// RespondentEvidenceReady reports whether respondent evidence is expected to be available.
func (r Request) RespondentEvidenceReady() bool { return r.respondentEvidenceReady }

// MicroClaimsTierConsentReported reports whether both parties consent to the micro-claims tier.
func (r Request) MicroClaimsTierConsentReported() bool { return r.microClaimsTierConsent }

// RemedialJurisdictionOptInReported reports whether both parties consent to relief beyond a held corpus.
func (r Request) RemedialJurisdictionOptInReported() bool { return r.remedialJurisdiction }

// CorpusAmountUsd returns the held external corpus and false when none exists.
func (r Request) CorpusAmountUsd() (Money, bool) { return r.corpus, r.corpusReported }

// EscrowWindowEndsAt returns the settlement deadline in UTC and false when none was reported.
func (r Request) EscrowWindowEndsAt() (time.Time, bool) {
	return r.escrowWindowEndsAt, r.escrowWindowReported
}

func invalid(field, reason string) *ValidationError {
	return &ValidationError{Field: field, Reason: reason}
}

// required unwraps a member that must be present and not null.
func required[T any](field string, m Member[T]) (T, error) {
	var zero T
	if !m.Present {
		return zero, invalid(field, "is required")
	}
	if m.Value == nil {
		return zero, invalid(field, "must not be null")
	}
	return *m.Value, nil
}

func requiredEnum[E ~string](field string, m Member[string], allowed []E) (E, error) {
	s, err := required(field, m)
	if err != nil {
		return "", err
	}
	return oneOf(field, s, allowed)
}

func oneOf[E ~string](field, s string, allowed []E) (E, error) {
	for _, a := range allowed {
		if string(a) == s {
			return a, nil
		}
	}
	return "", invalid(field, "must be one of "+joinList(allowed, ", "))
}

// usd turns a decoded JSON number into Money without float arithmetic: the
// shortest decimal text of the float64 is the number the caller wrote (for
// the at most 11 significant digits a valid amount has), so its digits are
// the cents.
func usd(field string, v float64) (Money, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Money{}, invalid(field, "must be a finite number")
	}
	if v < 0 || v > MaxAmountUSD {
		return Money{}, invalid(field, "must be between 0 and "+strconv.Itoa(MaxAmountUSD)+" inclusive")
	}
	if v == 0 {
		return Money{}, nil // also folds -0
	}
	whole, frac, _ := strings.Cut(strconv.FormatFloat(v, 'f', -1, 64), ".")
	if len(frac) > 2 {
		return Money{}, invalid(field, "must have at most 2 decimal places")
	}
	cents, err := strconv.ParseInt(whole+frac+strings.Repeat("0", 2-len(frac)), 10, 64)
	if err != nil || cents > maxAmountCents {
		// Unreachable for a value in range; kept so a parsing surprise
		// refuses the request instead of quoting a wrong fee.
		return Money{}, invalid(field, "must be a plain decimal number")
	}
	return Money{cents: cents}, nil
}

func dateTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, invalid(field, "must be an RFC 3339 date-time such as 2026-11-05T17:00:00Z")
	}
	t = t.UTC()
	// The report carries the instant back in UTC; outside these years it has
	// no RFC 3339 form.
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, invalid(field, "must fall within the years 0000 to 9999 in UTC")
	}
	return t, nil
}

// joinList joins values with sep, in the given order.
func joinList[E ~string](values []E, sep string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, sep)
}
