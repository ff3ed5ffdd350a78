package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// The resolution results of agent commerce (docs/agent-commerce.md): a
// case opened from an AP2 or UCP resolution request answers its status
// and, once awarded, the award's outcome with its remedies restated in the
// protocol's terms. The award stays the authority: the result names its
// awardHash and links its artifacts.

// ResolutionNotFound is a results read of a case that did not come from a
// resolution request of that protocol.
var ResolutionNotFound = problem.Code{Name: "resolution_not_found", Status: http.StatusNotFound, Title: "Resolution not found"}

// SchemaResolutionResult is the result's schemaVersion.
const SchemaResolutionResult = "pc-resolution-result-v1"

type resolutionView struct {
	SchemaVersion string `json:"schemaVersion"`
	CaseID        string `json:"caseId"`
	Protocol      string `json:"protocol"`
	// Status is the case's status; Resolved says an award was issued.
	Status      string                   `json:"status"`
	Resolved    bool                     `json:"resolved"`
	Transaction transactionView          `json:"transaction"`
	Award       *resolutionAwardView     `json:"award,omitempty"`
	AP2         *ap2ResolutionView       `json:"ap2,omitempty"`
	UCP         *ucpResolutionView       `json:"ucp,omitempty"`
	Links       map[string]string        `json:"links"`
	Evidence    []resolutionEvidenceView `json:"evidence"`
}

type transactionView struct {
	Reference string `json:"reference"`
	Reason    string `json:"reason"`
	Merchant  string `json:"merchant"`
	PaidMinor int64  `json:"paidMinor"`
	Currency  string `json:"currency"`
}

type resolutionEvidenceView struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

type resolutionAwardView struct {
	AwardID   string         `json:"awardId"`
	AwardHash string         `json:"awardHash"`
	IssuedAt  string         `json:"issuedAt"`
	Outcome   string         `json:"outcome"`
	Remedies  []award.Remedy `json:"remedies"`
	// RefundMinor is what the award orders the merchant (respondent) to
	// pay the claimant, in the claim's currency; 0 when nothing.
	RefundMinor int64  `json:"refundMinor"`
	Currency    string `json:"currency"`
	// Final says the award is final (docs/after-award.md); RefundExecuted
	// that every refund it orders was executed (GET executions).
	Final          bool `json:"final"`
	RefundExecuted bool `json:"refundExecuted"`
}

// ap2Amount is AP2's amount type: integer minor units and an ISO 4217 code.
type ap2Amount struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// ap2ResolutionView restates the award against the payment mandate, in
// AP2's member names.
type ap2ResolutionView struct {
	TransactionID        string `json:"transaction_id"`
	PaymentMandateDigest string `json:"payment_mandate_digest"`
	// Decision is pending until the award, then refund or no_refund.
	Decision     string     `json:"decision"`
	RefundAmount *ap2Amount `json:"refund_amount,omitempty"`
}

// ucpResolutionView restates the award as a UCP order adjustment, in
// UCP's member names.
type ucpResolutionView struct {
	OrderID     string         `json:"order_id"`
	OrderDigest string         `json:"order_digest"`
	Adjustment  *ucpAdjustment `json:"adjustment,omitempty"`
}

// ucpAdjustment has the shape of UCP's order adjustment (types/adjustment):
// a refund the award orders. Its status is pending: the award orders the
// refund; carrying it out is an execution, not this read.
type ucpAdjustment struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	OccurredAt  string     `json:"occurred_at"`
	Status      string     `json:"status"`
	Totals      []ucpTotal `json:"totals"`
	Description string     `json:"description"`
}

type ucpTotal struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
}

// resolutionResults serves GET /api/v2/{protocol}/resolution-results/{caseId}.
func (h *handlers) resolutionResults(protocol string) gin.HandlerFunc {
	return func(c *gin.Context) {
		_, l, err := h.load(c, caseID(c))
		if err != nil {
			_ = c.Error(err)
			return
		}
		cs := l.Case
		if cs.Origin == nil || cs.Origin.Protocol != protocol {
			_ = c.Error(problem.Newf(ResolutionNotFound,
				"Case %s was not opened from a %s resolution request; read it at GET /api/cases/%s.", cs.ID, protocolName(protocol), cs.ID))
			return
		}
		v, err := h.toResolutionView(c, cs)
		if err != nil {
			_ = c.Error(err)
			return
		}
		private(c, v)
	}
}

func protocolName(p string) string {
	if p == "ap2" {
		return "AP2"
	}
	return "UCP"
}

func (h *handlers) toResolutionView(c *gin.Context, cs procedure.Case) (resolutionView, error) {
	o := cs.Origin
	v := resolutionView{
		SchemaVersion: SchemaResolutionResult, CaseID: cs.ID, Protocol: o.Protocol, Status: string(cs.Status()),
		Transaction: transactionView{Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant, PaidMinor: o.PaidMinor, Currency: o.Currency},
		Links:       map[string]string{"case": "/api/cases/" + cs.ID, "decisionStatus": "/api/v2/cases/" + cs.ID + "/decision-status"},
		Evidence:    []resolutionEvidenceView{},
	}
	for _, e := range o.Evidence {
		v.Evidence = append(v.Evidence, resolutionEvidenceView{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest})
	}
	if issued := cs.Tribunal.Award; issued != nil {
		raw, found, err := h.cases.Document(c.Request.Context(), cs.ID, issued.AwardHash)
		if err == nil && !found {
			err = fmt.Errorf("case %s: the json artifact of award %s is missing", cs.ID, issued.AwardHash)
		}
		var doc award.Document
		if err == nil {
			err = json.Unmarshal(raw, &doc)
		}
		if err != nil {
			return resolutionView{}, err
		}
		refund := refundOrdered(doc.Remedies)
		v.Resolved = true
		v.Award = &resolutionAwardView{AwardID: doc.AwardID, AwardHash: issued.AwardHash, IssuedAt: doc.IssuedAt, Outcome: doc.Outcome,
			Remedies: doc.Remedies, RefundMinor: refund, Currency: o.Currency,
			Final: cs.AfterAward.Final(), RefundExecuted: refund > 0 && refundExecuted(cs, issued.AwardHash, doc.Remedies)}
		if v.Award.Remedies == nil {
			v.Award.Remedies = []award.Remedy{}
		}
		base := "/api/cases/" + cs.ID + "/award"
		v.Links["award"] = base
		v.Links["awardJson"] = base + "/artifacts/json"
		v.Links["awardAttestation"] = base + "/artifacts/json/attestation"
		v.Links["awardKeys"] = "/api/awards/keys"
		v.Links["executions"] = "/api/cases/" + cs.ID + "/executions"
	}
	switch o.Protocol {
	case "ap2":
		v.AP2 = &ap2ResolutionView{TransactionID: o.Reference, PaymentMandateDigest: o.EvidenceDigest("payment_mandate"), Decision: "pending"}
		if v.Award != nil {
			v.AP2.Decision = "no_refund"
			if v.Award.RefundMinor > 0 {
				v.AP2.Decision = "refund"
				v.AP2.RefundAmount = &ap2Amount{Amount: v.Award.RefundMinor, Currency: o.Currency}
			}
		}
	case "ucp":
		v.UCP = &ucpResolutionView{OrderID: o.Reference, OrderDigest: o.EvidenceDigest("order")}
		if v.Award != nil && v.Award.RefundMinor > 0 {
			v.UCP.Adjustment = &ucpAdjustment{
				ID: "pc-award-" + v.Award.AwardID, Type: "refund", OccurredAt: v.Award.IssuedAt, Status: "pending",
				Totals:      []ucpTotal{{Type: "total", Amount: -v.Award.RefundMinor}},
				Description: "Refund ordered by pcourt award " + v.Award.AwardHash + " (" + v.Award.Outcome + ")",
			}
			if v.Award.RefundExecuted {
				v.UCP.Adjustment.Status = "completed"
			}
		}
	}
	return v, nil
}

// refundExecuted reports whether every refund the award with hash h
// orders has a completed execution.
func refundExecuted(cs procedure.Case, h string, remedies []award.Remedy) bool {
	for i, r := range remedies {
		if r.Kind != award.RemedyPayment || r.Payer != string(procedure.Respondent) || r.Payee != string(procedure.Claimant) {
			continue
		}
		done := slices.ContainsFunc(cs.AfterAward.Executions, func(e afteraward.Execution) bool {
			return e.AwardHash == h && e.RemedyIndex == i && e.Status == afteraward.ExecutionCompleted
		})
		if !done {
			return false
		}
	}
	return true
}

// refundOrdered sums the payments the award orders the respondent (the
// merchant) to make to the claimant (the agent's principal).
func refundOrdered(remedies []award.Remedy) int64 {
	var total int64
	for _, r := range remedies {
		if r.Kind == award.RemedyPayment && r.Payer == string(procedure.Respondent) && r.Payee == string(procedure.Claimant) {
			total += r.AmountMinor
		}
	}
	return total
}
