package httpapi

import (
	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/filings/internal/agentcommerce"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// The resolution requests of agent commerce (docs/agent-commerce.md): a
// shopping agent that paid through AP2 or UCP prepares a draft from the
// protocol's own objects. The draft is an ordinary one, read and confirmed
// on the v2 draft routes; its origin pins the objects by digest.

// The idempotency operations: one journal per protocol route.
const (
	opAP2Resolution = "ap2ResolutionRequest"
	opUCPResolution = "ucpResolutionRequest"
)

// claimantBody is the agent's principal, who claims.
type claimantBody struct {
	PrincipalID   string `json:"principalId"`
	PrincipalKind string `json:"principalKind"`
	AgentID       string `json:"agentId,omitempty"`
}

// respondentBody overrides what the protocol's objects say of the
// merchant; every member is optional.
type respondentBody struct {
	PartnerID     string `json:"partnerId,omitempty"`
	PrincipalID   string `json:"principalId,omitempty"`
	PrincipalKind string `json:"principalKind,omitempty"`
	AgentID       string `json:"agentId,omitempty"`
}

type disputeBody struct {
	Reason      string `json:"reason"`
	Remedy      string `json:"remedy"`
	AmountMinor *int64 `json:"amountMinor,omitempty"`
	Currency    string `json:"currency,omitempty"`
	Summary     string `json:"summary"`
}

// commonBody are the members both protocols' requests share.
type commonBody struct {
	ExternalCaseID string             `json:"externalCaseId,omitempty"`
	Profile        string             `json:"profile,omitempty"`
	IssuerJWK      *agentcommerce.JWK `json:"issuerJwk,omitempty"`
	Claimant       claimantBody       `json:"claimant"`
	Respondent     *respondentBody    `json:"respondent,omitempty"`
	Dispute        disputeBody        `json:"dispute"`
}

type ap2ResolutionBody struct {
	commonBody
	PaymentMandate  string `json:"paymentMandate"`
	CheckoutMandate string `json:"checkoutMandate,omitempty"`
}

type ucpResolutionBody struct {
	commonBody
	// Order keeps the order object's bytes exactly as sent: they are the
	// evidence its digest pins.
	Order           jsontext.Value `json:"order"`
	CheckoutMandate string         `json:"checkoutMandate,omitempty"`
}

func (b commonBody) toCommon() agentcommerce.Common {
	c := agentcommerce.Common{
		ExternalCaseID: b.ExternalCaseID, Profile: b.Profile, IssuerJWK: b.IssuerJWK,
		Claimant: agentcommerce.Party{PrincipalID: b.Claimant.PrincipalID, PrincipalKind: b.Claimant.PrincipalKind, AgentID: b.Claimant.AgentID},
		Dispute: agentcommerce.Dispute{Reason: b.Dispute.Reason, Remedy: b.Dispute.Remedy, AmountMinor: b.Dispute.AmountMinor,
			Currency: b.Dispute.Currency, Summary: b.Dispute.Summary},
	}
	if r := b.Respondent; r != nil {
		c.Respondent = agentcommerce.Party{PartnerID: r.PartnerID, PrincipalID: r.PrincipalID, PrincipalKind: r.PrincipalKind, AgentID: r.AgentID}
	}
	return c
}

// ap2Resolution is POST /api/v2/ap2/resolution-requests.
func (h *handlers) ap2Resolution(c *gin.Context) {
	c.Header("Cache-Control", "no-store") // a mutation's answer
	cred, _ := auth.CredentialFrom(c.Request.Context())
	var b ap2ResolutionBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	in, err := agentcommerce.FromAP2(agentcommerce.AP2Request{Common: b.toCommon(), PaymentMandate: b.PaymentMandate, CheckoutMandate: b.CheckoutMandate})
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.create(c, cred, in, draft.RouteV2)
}

// ucpResolution is POST /api/v2/ucp/resolution-requests.
func (h *handlers) ucpResolution(c *gin.Context) {
	c.Header("Cache-Control", "no-store") // a mutation's answer
	cred, _ := auth.CredentialFrom(c.Request.Context())
	var b ucpResolutionBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	in, err := agentcommerce.FromUCP(agentcommerce.UCPRequest{Common: b.toCommon(), Order: b.Order, CheckoutMandate: b.CheckoutMandate})
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.create(c, cred, in, draft.RouteV2)
}

// originView is a draft's agent-commerce origin: the objects by digest,
// never their bytes.
type originView struct {
	Protocol  string               `json:"protocol"`
	Reference string               `json:"reference"`
	Reason    string               `json:"reason"`
	Merchant  string               `json:"merchant"`
	Paid      paidView             `json:"paid"`
	Evidence  []originEvidenceView `json:"evidence"`
}

type paidView struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
}

type originEvidenceView struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

func toOriginView(o *draft.Origin) *originView {
	if o == nil {
		return nil
	}
	v := &originView{Protocol: string(o.Protocol), Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant,
		Paid: paidView{AmountMinor: o.PaidMinor, Currency: o.Currency}}
	for _, e := range o.Evidence {
		v.Evidence = append(v.Evidence, originEvidenceView{Kind: e.Kind, MediaType: e.MediaType, Digest: e.Digest})
	}
	return v
}
