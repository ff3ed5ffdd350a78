package draft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// ErrCorruptRecord means a stored draft does not decode to a consistent
// draft: unknown fields, a bad value, a digest that does not match its
// terms, or statuses its confirmations do not imply.
var ErrCorruptRecord = errors.New("corrupt draft record")

// recordVersion is the version of the stored JSON shape.
const recordVersion = 1

// draftRecord is a draft as the store keeps it: the terms plus the state.
type draftRecord struct {
	RecordVersion              int                    `json:"recordVersion"`
	SchemaVersion              string                 `json:"schemaVersion"`
	DraftID                    string                 `json:"draftId"`
	ReservedCaseID             string                 `json:"reservedCaseId"`
	ExternalCaseID             string                 `json:"externalCaseId"`
	PreparedVia                Route                  `json:"preparedVia"`
	Status                     Status                 `json:"status"`
	DraftDigest                string                 `json:"draftDigest"`
	CreatedAt                  string                 `json:"createdAt"`
	CreatedBy                  string                 `json:"createdBy"`
	ExpiresAt                  string                 `json:"expiresAt"`
	OpenedAt                   string                 `json:"openedAt,omitempty"`
	Rules                      rulesJSON              `json:"rules"`
	Fee                        feeRecord              `json:"fee"`
	CaseMode                   CaseMode               `json:"caseMode"`
	IntakeMode                 IntakeMode             `json:"intakeMode"`
	ConfirmationPolicy         confirmationPolicyJSON `json:"confirmationPolicy"`
	Procedure                  procedureJSON          `json:"procedure"`
	Participants               []participantJSON      `json:"participants"`
	Confirmations              []confirmationRecord   `json:"confirmations"`
	Evaluation                 *evaluationJSON        `json:"evaluation,omitempty"`
	Claim                      claimJSON              `json:"claim"`
	ClaimantAcceptanceIdentity string                 `json:"claimantAcceptanceIdentity,omitempty"`
	TenantID                   string                 `json:"tenantId"`
	Environment                string                 `json:"environment"`
	PartnerID                  string                 `json:"partnerId"`
	// Origin came with the resolution requests; a record without it is a
	// draft of the filing routes, so the record version stays.
	Origin *originRecord `json:"origin,omitempty"`
}

type feeRecord struct {
	feeTermsJSON
	Status FeeStatus `json:"status"`
	PaidAt string    `json:"paidAt,omitempty"`
}

// confirmationRecord keeps a confirmation's state; side, partner, mode and
// statement follow from the participant and the digest.
type confirmationRecord struct {
	ParticipantID         string             `json:"participantId"`
	Required              bool               `json:"required"`
	Status                ConfirmationStatus `json:"status"`
	Method                ConfirmationMethod `json:"method,omitempty"`
	ConfirmedAt           string             `json:"confirmedAt,omitempty"`
	ActorID               string             `json:"actorId,omitempty"`
	ConfirmationReference string             `json:"confirmationReference,omitempty"`
}

// MarshalJSON encodes the draft as the store keeps it: every field, terms
// and state, instants as UTC milliseconds. UnmarshalJSON reads it back to
// an equal Draft.
func (d Draft) MarshalJSON() ([]byte, error) {
	t := d.terms()
	r := draftRecord{
		RecordVersion:              recordVersion,
		SchemaVersion:              t.SchemaVersion,
		DraftID:                    t.DraftID,
		ReservedCaseID:             t.ReservedCaseID,
		ExternalCaseID:             t.ExternalCaseID,
		PreparedVia:                d.route,
		Status:                     d.status,
		DraftDigest:                d.digest,
		CreatedAt:                  formatTime(d.createdAt),
		CreatedBy:                  d.createdBy,
		ExpiresAt:                  t.ExpiresAt,
		OpenedAt:                   optionalTime(d.openedAt),
		Rules:                      t.Rules,
		Fee:                        feeRecord{feeTermsJSON: t.Fee, Status: d.fee.Status, PaidAt: optionalTime(d.fee.PaidAt)},
		CaseMode:                   t.CaseMode,
		IntakeMode:                 t.IntakeMode,
		ConfirmationPolicy:         t.ConfirmationPolicy,
		Procedure:                  t.Procedure,
		Participants:               t.Participants,
		Confirmations:              make([]confirmationRecord, len(d.confirmations)),
		Evaluation:                 t.Evaluation,
		Claim:                      t.Claim,
		ClaimantAcceptanceIdentity: t.ClaimantAcceptanceIdentity,
		TenantID:                   t.TenantID,
		Environment:                t.Environment,
		PartnerID:                  t.PartnerID,
		Origin:                     d.origin.toRecord(),
	}
	for i, c := range d.confirmations {
		r.Confirmations[i] = confirmationRecord{
			ParticipantID:         c.ParticipantID,
			Required:              c.Required,
			Status:                c.Status,
			Method:                c.Method,
			ConfirmedAt:           optionalTime(c.ConfirmedAt),
			ActorID:               c.ActorID,
			ConfirmationReference: c.ConfirmationReference,
		}
	}
	return json.Marshal(r)
}

// UnmarshalJSON decodes a draft MarshalJSON wrote, strictly: unknown or
// duplicate members, names in another case and trailing data are refused
// (ErrCorruptRecord). It recomputes the digest from the terms and refuses a
// record whose stored digest, confirmations or status do not match
// (ErrCorruptRecord), so a damaged record can never be confirmed against.
// It does not re-apply the preparation rules: a draft prepared under
// earlier rules stays readable.
func (d *Draft) UnmarshalJSON(data []byte) error {
	var r draftRecord
	if err := jsonv2.Unmarshal(data, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("%w: %v", ErrCorruptRecord, err)
	}
	out, err := fromRecord(r)
	if err != nil {
		return fmt.Errorf("%w: draft %s: %v", ErrCorruptRecord, r.DraftID, err)
	}
	*d = out
	return nil
}

func fromRecord(r draftRecord) (Draft, error) {
	if r.RecordVersion != recordVersion || r.SchemaVersion != SchemaCaseDraft || r.Procedure.SchemaVersion != SchemaProcedurePlan {
		return Draft{}, fmt.Errorf("unknown record version %d / %q / %q", r.RecordVersion, r.SchemaVersion, r.Procedure.SchemaVersion)
	}
	var err error
	d := Draft{
		id:                         r.DraftID,
		reservedCaseID:             r.ReservedCaseID,
		externalCaseID:             r.ExternalCaseID,
		route:                      r.PreparedVia,
		status:                     r.Status,
		createdBy:                  r.CreatedBy,
		rules:                      Rules{Version: r.Rules.Version, Hash: r.Rules.Hash},
		caseMode:                   r.CaseMode,
		intakeMode:                 r.IntakeMode,
		confirmationMode:           r.ConfirmationPolicy.Mode,
		procedure:                  r.Procedure.toProcedure(),
		participants:               make([]Participant, len(r.Participants)),
		confirmations:              make([]Confirmation, len(r.Confirmations)),
		claim:                      Claim{AmountInDisputeMinor: r.Claim.AmountInDisputeMinor, Remedy: r.Claim.Remedy, Summary: r.Claim.Summary, MicroTierConsent: r.Claim.MicroClaimsTierConsent},
		claimantAcceptanceIdentity: r.ClaimantAcceptanceIdentity,
		tenantID:                   r.TenantID,
		environment:                r.Environment,
		partnerID:                  r.PartnerID,
		fee: Fee{
			FeeID:       r.Fee.FeeID,
			Currency:    r.Fee.Currency,
			AmountMinor: r.Fee.AmountMinor,
			Tier:        r.Fee.Tier,
			Collection:  r.Fee.Collection,
			Status:      r.Fee.Status,
		},
	}
	if d.origin, err = r.Origin.toOrigin(); err != nil {
		return Draft{}, err
	}
	if d.createdAt, err = parseTime("createdAt", r.CreatedAt, true); err != nil {
		return Draft{}, err
	}
	if d.expiresAt, err = parseTime("expiresAt", r.ExpiresAt, true); err != nil {
		return Draft{}, err
	}
	if d.openedAt, err = parseTime("openedAt", r.OpenedAt, false); err != nil {
		return Draft{}, err
	}
	if d.fee.PaidAt, err = parseTime("fee.paidAt", r.Fee.PaidAt, false); err != nil {
		return Draft{}, err
	}
	if r.Claim.Currency != "USD" {
		return Draft{}, fmt.Errorf("claim currency %q", r.Claim.Currency)
	}
	switch {
	case !d.route.Valid(), !d.status.Valid(), !d.caseMode.Valid(), !d.intakeMode.Valid(),
		!d.confirmationMode.Valid(), !d.procedure.Profile.Valid(), !d.claim.Remedy.Valid(),
		!d.fee.Tier.Valid(), !d.fee.Collection.Valid(), !d.fee.Status.Valid():
		return Draft{}, errors.New("a value is outside its set")
	case (d.fee.Status == FeePaid) != !d.fee.PaidAt.IsZero():
		return Draft{}, errors.New("fee status and paidAt disagree")
	case (d.status == StatusOpened) != !d.openedAt.IsZero():
		return Draft{}, errors.New("status and openedAt disagree")
	}
	if r.Evaluation != nil {
		if r.Evaluation.SchemaVersion != SchemaEvaluation {
			return Draft{}, fmt.Errorf("evaluation schema %q", r.Evaluation.SchemaVersion)
		}
		e := r.Evaluation.toEvaluation()
		if e.Digest() != r.Evaluation.EvaluationDigest {
			return Draft{}, errors.New("evaluation digest does not match the evaluation")
		}
		d.evaluation, d.evaluationDigest = &e, r.Evaluation.EvaluationDigest
	}
	if len(r.Confirmations) != len(r.Participants) {
		return Draft{}, errors.New("confirmations do not match participants")
	}
	for i, pj := range r.Participants {
		p := pj.toParticipant()
		c := r.Confirmations[i]
		if !p.Side.Valid() || !p.PrincipalKind.Valid() || !p.AuthorizationMode.Valid() {
			return Draft{}, fmt.Errorf("participants[%d]: a value is outside its set", i)
		}
		if c.ParticipantID != p.ID || c.Required != requiredFor(d.confirmationMode, p) {
			return Draft{}, fmt.Errorf("confirmations[%d] does not match its participant", i)
		}
		conf := Confirmation{
			ParticipantID:         p.ID,
			Side:                  p.Side,
			PartnerID:             p.PartnerID,
			AuthorizationMode:     p.AuthorizationMode,
			Required:              c.Required,
			Status:                c.Status,
			Method:                c.Method,
			ActorID:               c.ActorID,
			ConfirmationReference: c.ConfirmationReference,
		}
		if conf.ConfirmedAt, err = parseTime(fmt.Sprintf("confirmations[%d].confirmedAt", i), c.ConfirmedAt, false); err != nil {
			return Draft{}, err
		}
		confirmed := c.Status == ConfirmationConfirmed
		switch {
		case !c.Status.Valid():
			return Draft{}, fmt.Errorf("confirmations[%d]: status %q", i, c.Status)
		case (c.Status == ConfirmationNotRequired) == c.Required:
			return Draft{}, fmt.Errorf("confirmations[%d]: status %s with required %t", i, c.Status, c.Required)
		case confirmed != c.Method.Valid(), confirmed == conf.ConfirmedAt.IsZero(), confirmed == (c.ConfirmationReference == ""):
			return Draft{}, fmt.Errorf("confirmations[%d]: status %s disagrees with its record", i, c.Status)
		}
		d.participants[i], d.confirmations[i] = p, conf
	}
	d.seal()
	if d.digest != r.DraftDigest {
		return Draft{}, errors.New("draftDigest does not match the terms")
	}
	if derived := d.derivedStatus(); d.status != derived {
		return Draft{}, fmt.Errorf("status %s, but the confirmations and fee make it %s", d.status, derived)
	}
	return d, nil
}

// Equal reports whether two drafts have the same terms and state. go-cmp
// uses it.
func (d Draft) Equal(o Draft) bool {
	a, errA := d.MarshalJSON()
	b, errB := o.MarshalJSON()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func optionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

func parseTime(field, s string, required bool) (time.Time, error) {
	if s == "" {
		if required {
			return time.Time{}, fmt.Errorf("%s is missing", field)
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %v", field, err)
	}
	return t, nil
}
