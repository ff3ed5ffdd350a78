package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// FeeNotFound is a fee id nobody of this tenant and environment quoted.
var FeeNotFound = problem.Code{Name: "fee_not_found", Status: http.StatusNotFound, Title: "Fee not found"}

// feeRecord is GET /api/fees/{feeId}: the fee a draft quoted, by its durable id.
type feeRecord struct {
	FeeID       string `json:"feeId"`
	Currency    string `json:"currency"`
	AmountMinor int64  `json:"amountMinor"`
	Tier        string `json:"tier"`
	Status      string `json:"status"`
	// Collection is the disposition: collected before the case opens, or
	// invoiced after.
	Collection string `json:"collection"`
	DraftID    string `json:"draftId"`
	CaseID     string `json:"caseId"` // the case the fee applies to (reserved until opened)
	CaseStatus string `json:"caseStatus"`
	ExpiresAt  string `json:"expiresAt,omitempty"` // while unpaid: the quote lapses with its draft
	PaidAt     string `json:"paidAt,omitempty"`
}

func (h *handlers) getFee(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	d, err := h.filings.Fee(c.Request.Context(), c.Param("feeId"), h.access(cred))
	if err != nil {
		_ = c.Error(err)
		return
	}
	if err := h.authorizeReader(c, cred, d); err != nil {
		_ = c.Error(err)
		return
	}
	f := d.Fee()
	rec := feeRecord{
		FeeID: f.FeeID, Currency: f.Currency, AmountMinor: f.AmountMinor, Tier: string(f.Tier), Status: string(f.Status),
		Collection: string(f.Collection), DraftID: d.ID(), CaseID: d.ReservedCaseID(), CaseStatus: caseStatus(d),
	}
	if f.PaidAt.IsZero() {
		rec.ExpiresAt = timestamp(d.ExpiresAt())
	} else {
		rec.PaidAt = timestamp(f.PaidAt)
	}
	c.Header("Cache-Control", "private, no-store")
	c.JSON(http.StatusOK, gin.H{"data": rec, "requestId": requestid.Get(c)})
}

// caseStatus says where the case the fee applies to stands.
func caseStatus(d draft.Draft) string {
	if d.Status() == draft.StatusOpened {
		return "open"
	}
	return "not_opened"
}

// quoteBody is POST /api/v2/fees/quote: the facts that decide a fee.
type quoteBody struct {
	AmountInDisputeMinor *int64 `json:"amountInDisputeMinor"`
	Remedy               string `json:"remedy"`
	MicroTierConsent     bool   `json:"microClaimsTierConsent,omitempty"`
	IntakeMode           string `json:"intakeMode"`
}

// quoteFee quotes without recording anything: the same schedule a draft
// uses, so a quote and the draft prepared from the same facts agree.
func (h *handlers) quoteFee(c *gin.Context) {
	var b quoteBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	claim := draft.Claim{Remedy: draft.Remedy(b.Remedy), MicroTierConsent: b.MicroTierConsent}
	switch {
	case b.AmountInDisputeMinor == nil:
		_ = c.Error(&draft.ValidationError{Field: "amountInDisputeMinor", Reason: "is required"})
		return
	case *b.AmountInDisputeMinor < 0 || *b.AmountInDisputeMinor > draft.MaxAmountMinor:
		_ = c.Error(&draft.ValidationError{Field: "amountInDisputeMinor", Reason: "must be 0 to " + itoa64(draft.MaxAmountMinor)})
		return
	case !claim.Remedy.Valid():
		_ = c.Error(&draft.ValidationError{Field: "remedy", Reason: "must be corpus_allocation, money_obligation or declaratory"})
		return
	case !draft.IntakeMode(b.IntakeMode).Valid():
		_ = c.Error(&draft.ValidationError{Field: "intakeMode", Reason: "must be claimant_initiated, claimant_proposed, bilateral_api or bundled_bilateral"})
		return
	}
	claim.AmountInDisputeMinor = *b.AmountInDisputeMinor
	f := draft.QuoteFee("", claim, draft.IntakeMode(b.IntakeMode))
	c.JSON(http.StatusOK, gin.H{"data": gin.H{
		"currency": f.Currency, "amountMinor": f.AmountMinor, "tier": f.Tier, "collection": f.Collection,
	}, "requestId": requestid.Get(c)})
}
