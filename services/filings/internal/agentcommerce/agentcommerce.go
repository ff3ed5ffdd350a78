// Package agentcommerce turns an agent-commerce protocol's own objects into
// a case draft's preparation: an AP2 payment mandate (with its checkout
// mandate) or a UCP order (with the AP2 checkout mandate of its ap2-mandates
// extension), plus the few fields a dispute needs that neither protocol
// defines. Neither protocol publishes a dispute object; what this package
// assumes, checks and does not check is docs/agent-commerce.md.
//
// The package is pure: it checks the objects (SD-JWT structure, disclosure
// digests, the hashes that bind the mandates to each other, signatures
// where a key is at hand) and maps them onto a draft.PrepareInput whose
// Origin pins each object by the SHA-256 of its exact bytes. Preparing and
// storing the draft is the caller's.
package agentcommerce

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// Code is the stable problem code of a refused resolution request.
type Code string

// The refusal codes; docs/problems.md lists them with their statuses.
const (
	// CodeInvalidRequest: a dispute field is missing or outside its set.
	CodeInvalidRequest Code = "invalid_resolution_request"
	// CodeInvalidMandate: a mandate or an order is not well formed.
	CodeInvalidMandate Code = "invalid_mandate"
	// CodeDigestMismatch: a hash that binds the objects does not match.
	CodeDigestMismatch Code = "mandate_digest_mismatch"
	// CodeSignatureInvalid: a signature that could be checked failed.
	CodeSignatureInvalid Code = "mandate_signature_invalid"
	// CodeCurrencyMismatch: the dispute names another currency than the
	// payment's.
	CodeCurrencyMismatch Code = "currency_mismatch"
	// CodeUnsupportedCurrency: the payment is not in USD, the only
	// currency of a claim.
	CodeUnsupportedCurrency Code = "unsupported_currency"
	// CodeAmountExceedsPayment: the dispute asks for more than was paid.
	CodeAmountExceedsPayment Code = "amount_exceeds_payment"
)

// Error is a refused resolution request. Field is the request member at
// fault; Detail says what is wrong in words the caller can act on.
type Error struct {
	Code   Code
	Field  string
	Detail string
}

// Error returns "<field>: <detail>".
func (e *Error) Error() string { return e.Field + ": " + e.Detail }

func refuse(code Code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// Party is a side of the dispute as the request names it.
type Party struct {
	PrincipalID   string
	PrincipalKind string
	AgentID       string
	PartnerID     string
}

// Dispute is what the request adds to the protocol's objects.
type Dispute struct {
	// Reason is the dispute's class: one of Reasons.
	Reason string
	// Remedy is refund (a money obligation of at most what was paid) or
	// declaratory.
	Remedy string
	// AmountMinor is the refund asked for; nil asks for all that was paid.
	AmountMinor *int64
	// Currency, when sent, must be the payment's.
	Currency string
	Summary  string
}

// Reasons are the dispute classes a request may name.
var Reasons = []string{"non_delivery", "not_as_described", "unauthorized", "duplicate_charge", "cancelled_not_refunded", "other"}

// Remedies are the remedies a request may ask for.
var Remedies = []string{"refund", "declaratory"}

// Common is the part of a request both protocols share.
type Common struct {
	ExternalCaseID string
	// Profile is the procedure profile; "" is fast.
	Profile    string
	Claimant   Party
	Respondent Party
	Dispute    Dispute
	// IssuerJWK is the mandates' issuer's public key; nil leaves the
	// issuer signatures unverified (docs/agent-commerce.md).
	IssuerJWK *JWK
}

// AP2Request is POST /api/v2/ap2/resolution-requests after decoding.
type AP2Request struct {
	Common
	// PaymentMandate is the closed Payment Mandate, an SD-JWT in compact form.
	PaymentMandate string
	// CheckoutMandate is the closed Checkout Mandate; optional.
	CheckoutMandate string
}

// UCPRequest is POST /api/v2/ucp/resolution-requests after decoding.
type UCPRequest struct {
	Common
	// Order is the UCP order object's exact bytes.
	Order []byte
	// CheckoutMandate is ap2.checkout_mandate of the ap2-mandates
	// extension, when the checkout was AP2-secured; optional.
	CheckoutMandate string
}

// The verifiable credential types of closed mandates (AP2 v0.2).
const (
	vctPayment  = "mandate.payment.1"
	vctCheckout = "mandate.checkout.1"
)

// FromAP2 checks an AP2 request and returns the preparation it asks for:
// the payment mandate's payee is the respondent, its payment_amount the
// most the claim may be, its transaction_id the disputed transaction.
func FromAP2(r AP2Request) (draft.PrepareInput, error) {
	if r.PaymentMandate == "" {
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "paymentMandate", "is required: the closed Payment Mandate, an SD-JWT in compact form")
	}
	pm, err := ParseSDJWT("paymentMandate", r.PaymentMandate, r.IssuerJWK)
	if err != nil {
		return draft.PrepareInput{}, err
	}
	claims := mandateContent(pm.Claims)
	if vct, _ := claims["vct"].(string); vct != vctPayment {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "paymentMandate", "vct must be %s, a closed Payment Mandate, not %q", vctPayment, clip(vct))
	}
	txID, _ := claims["transaction_id"].(string)
	if txID == "" {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "paymentMandate", "transaction_id must be a non-empty string")
	}
	payee, _ := claims["payee"].(map[string]any)
	merchantID, _ := payee["id"].(string)
	merchantName, _ := payee["name"].(string)
	if merchantID == "" || merchantName == "" {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "paymentMandate", "payee must have an id and a name")
	}
	paid, currency, err := amountOf("paymentMandate", "payment_amount", claims["payment_amount"])
	if err != nil {
		return draft.PrepareInput{}, err
	}
	origin := &draft.Origin{Protocol: draft.ProtocolAP2, Reference: txID, Merchant: merchantID, PaidMinor: paid, Currency: currency,
		Evidence: []draft.OriginEvidence{evidence("payment_mandate", "application/sd-jwt", []byte(r.PaymentMandate))}}
	if r.CheckoutMandate != "" {
		checkout, err := checkoutMandate("checkoutMandate", r.CheckoutMandate, r.IssuerJWK)
		if err != nil {
			return draft.PrepareInput{}, err
		}
		if checkout.hash != txID {
			return draft.PrepareInput{}, refuse(CodeDigestMismatch, "paymentMandate",
				"transaction_id is not the checkout mandate's checkout_hash: the two mandates are not of one checkout")
		}
		origin.Evidence = append(origin.Evidence, evidence("checkout_mandate", "application/sd-jwt", []byte(r.CheckoutMandate)))
	}
	return prepareInput(r.Common, origin, "ap2:"+txID)
}

// FromUCP checks a UCP request and returns the preparation it asks for:
// the order's total is the most the claim may be, its id the disputed
// transaction, and the business that serves its permalink_url the
// respondent unless the request names one.
func FromUCP(r UCPRequest) (draft.PrepareInput, error) {
	if len(r.Order) == 0 {
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "order", "is required: the UCP order object")
	}
	var order map[string]any
	if err := decodeJSON(r.Order, &order); err != nil || order == nil {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "must be a JSON object, the UCP order")
	}
	orderID, _ := order["id"].(string)
	checkoutID, _ := order["checkout_id"].(string)
	permalink, _ := order["permalink_url"].(string)
	currency, _ := order["currency"].(string)
	switch {
	case orderID == "" || len(orderID) > 160:
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "id must be a string of 1 to 160 characters")
	case checkoutID == "":
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "checkout_id must be a non-empty string")
	case !currencyCode(currency):
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "currency must be an ISO 4217 code")
	}
	if _, ok := order["line_items"].([]any); !ok {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "line_items must be an array")
	}
	link, err := url.Parse(permalink)
	if err != nil || link.Scheme != "https" || link.Hostname() == "" {
		return draft.PrepareInput{}, refuse(CodeInvalidMandate, "order", "permalink_url must be an https URL of the business")
	}
	paid, err := orderTotal(order["totals"])
	if err != nil {
		return draft.PrepareInput{}, err
	}
	origin := &draft.Origin{Protocol: draft.ProtocolUCP, Reference: orderID, Merchant: link.Hostname(), PaidMinor: paid, Currency: currency,
		Evidence: []draft.OriginEvidence{evidence("order", "application/json", r.Order)}}
	if r.CheckoutMandate != "" {
		checkout, err := checkoutMandate("checkoutMandate", r.CheckoutMandate, r.IssuerJWK)
		if err != nil {
			return draft.PrepareInput{}, err
		}
		if checkout.id != checkoutID {
			return draft.PrepareInput{}, refuse(CodeDigestMismatch, "checkoutMandate",
				"the mandate's checkout is %q, not the order's checkout_id %q", clip(checkout.id), clip(checkoutID))
		}
		origin.Evidence = append(origin.Evidence, evidence("checkout_mandate", "application/sd-jwt", []byte(r.CheckoutMandate)))
	}
	if r.Respondent.PrincipalID == "" {
		r.Respondent.PrincipalID = origin.Merchant
	}
	return prepareInput(r.Common, origin, "ucp:"+orderID)
}

type checkout struct {
	hash string // checkout_hash, base64url SHA-256 of checkout_jwt
	id   string // the checkout object's id, from the merchant's JWT
}

// checkoutMandate checks a closed Checkout Mandate: an SD-JWT of vct
// mandate.checkout.1 whose checkout_hash is the hash of its checkout_jwt,
// a JWT whose payload is the checkout object. The merchant's signature on
// checkout_jwt is not checked: no merchant key is at hand.
func checkoutMandate(field, compact string, issuer *JWK) (checkout, error) {
	cm, err := ParseSDJWT(field, compact, issuer)
	if err != nil {
		return checkout{}, err
	}
	claims := mandateContent(cm.Claims)
	if vct, _ := claims["vct"].(string); vct != vctCheckout {
		return checkout{}, refuse(CodeInvalidMandate, field, "vct must be %s, a closed Checkout Mandate, not %q", vctCheckout, clip(vct))
	}
	jwt, _ := claims["checkout_jwt"].(string)
	hash, _ := claims["checkout_hash"].(string)
	if jwt == "" || hash == "" {
		return checkout{}, refuse(CodeInvalidMandate, field, "checkout_jwt and checkout_hash must be disclosed")
	}
	if digestOf(jwt) != hash {
		return checkout{}, refuse(CodeDigestMismatch, field, "checkout_hash is not the SHA-256 of checkout_jwt")
	}
	_, payload, err := decodeJWT(jwt)
	if err != nil {
		return checkout{}, refuse(CodeInvalidMandate, field, "checkout_jwt: %v", err)
	}
	id, _ := payload["id"].(string)
	return checkout{hash: hash, id: id}, nil
}

// mandateContent is the mandate's content: AP2 v0.2 nests it as the one
// element of delegate_payload; a mandate issued flat has it at the top.
func mandateContent(claims map[string]any) map[string]any {
	if dp, ok := claims["delegate_payload"].([]any); ok && len(dp) == 1 {
		if inner, ok := dp[0].(map[string]any); ok {
			return inner
		}
	}
	return claims
}

// amountOf reads an AP2 amount: {amount: integer minor units, currency}.
func amountOf(field, member string, v any) (int64, string, error) {
	m, _ := v.(map[string]any)
	n, ok := m["amount"].(json.Number)
	currency, _ := m["currency"].(string)
	amount, err := strconv.ParseInt(string(n), 10, 64)
	if !ok || err != nil || amount < 0 || !currencyCode(currency) {
		return 0, "", refuse(CodeInvalidMandate, field, "%s must be {amount: integer minor units, currency: ISO 4217 code}", member)
	}
	return amount, currency, nil
}

// orderTotal is the amount of the order's one totals entry of type total.
func orderTotal(v any) (int64, error) {
	totals, _ := v.([]any)
	found := int64(-1)
	for _, t := range totals {
		m, _ := t.(map[string]any)
		if m["type"] != "total" {
			continue
		}
		n, _ := m["amount"].(json.Number)
		amount, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || amount < 0 || found >= 0 {
			return 0, refuse(CodeInvalidMandate, "order", "totals must hold one entry of type total with a non-negative integer amount")
		}
		found = amount
	}
	if found < 0 {
		return 0, refuse(CodeInvalidMandate, "order", "totals must hold one entry of type total")
	}
	return found, nil
}

func currencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func evidence(kind, mediaType string, b []byte) draft.OriginEvidence {
	sum := sha256.Sum256(b)
	return draft.OriginEvidence{Kind: kind, MediaType: mediaType, Digest: hex.EncodeToString(sum[:]), Original: append([]byte(nil), b...)}
}

// prepareInput maps the dispute onto a claimant-initiated proceeding that
// the claimant alone confirms: the claimant is the agent's principal, the
// respondent the merchant (invited, hosted unless it names its partner).
func prepareInput(c Common, origin *draft.Origin, defaultExternalID string) (draft.PrepareInput, error) {
	d := c.Dispute
	if !contains(Reasons, d.Reason) {
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "dispute.reason", "must be one of %s", strings.Join(Reasons, ", "))
	}
	if !contains(Remedies, d.Remedy) {
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "dispute.remedy", "must be one of %s", strings.Join(Remedies, ", "))
	}
	if d.Currency != "" && d.Currency != origin.Currency {
		return draft.PrepareInput{}, refuse(CodeCurrencyMismatch, "dispute.currency", "is %s, but the payment was in %s", clip(d.Currency), origin.Currency)
	}
	if origin.Currency != "USD" {
		return draft.PrepareInput{}, refuse(CodeUnsupportedCurrency, "dispute.currency", "the payment was in %s; a claim is in USD only", origin.Currency)
	}
	amount := origin.PaidMinor
	if d.AmountMinor != nil {
		amount = *d.AmountMinor
	}
	switch {
	case d.Remedy == "declaratory" && d.AmountMinor != nil && *d.AmountMinor != 0:
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "dispute.amountMinor", "must be omitted or 0 for a declaratory remedy")
	case d.Remedy == "declaratory":
		amount = 0
	case amount > origin.PaidMinor:
		return draft.PrepareInput{}, refuse(CodeAmountExceedsPayment, "dispute.amountMinor", "is %d, more than the %d paid", amount, origin.PaidMinor)
	case amount <= 0:
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "dispute.amountMinor", "must be above 0 for a refund")
	}
	origin.Reason = d.Reason
	remedy := draft.RemedyMoneyObligation
	if d.Remedy == "declaratory" {
		remedy = draft.RemedyDeclaratory
	}
	profile := draft.Profile(c.Profile)
	if profile == "" {
		profile = draft.ProfileFast
	}
	plan, ok := draft.ProfileDefaults(profile)
	if !ok || profile == draft.ProfileCustomBounded || profile == draft.ProfileEvaluation {
		return draft.PrepareInput{}, refuse(CodeInvalidRequest, "profile", "must be standard, fast, single_round or joint_record")
	}
	external := c.ExternalCaseID
	if external == "" {
		external = defaultExternalID
	}
	respondent := c.Respondent
	if respondent.PrincipalID == "" {
		respondent.PrincipalID = origin.Merchant
	}
	if respondent.PrincipalKind == "" {
		respondent.PrincipalKind = string(draft.PrincipalOrganization)
	}
	authorization := func(p Party) draft.AuthorizationMode {
		if p.AgentID != "" {
			return draft.AuthAgentCredential
		}
		return draft.AuthPartnerCredential
	}
	return draft.PrepareInput{
		ExternalCaseID:   external,
		CaseMode:         draft.CaseModeProceeding,
		IntakeMode:       draft.IntakeClaimantInitiated,
		ConfirmationMode: draft.ConfirmInitiatorOnly,
		Procedure:        plan,
		Participants: []draft.Participant{
			{ID: "claimant", Side: draft.SideClaimant, PartnerID: c.Claimant.PartnerID, PrincipalID: c.Claimant.PrincipalID,
				PrincipalKind: draft.PrincipalKind(c.Claimant.PrincipalKind), AgentID: c.Claimant.AgentID,
				AuthorizationMode: authorization(c.Claimant), Initiator: true},
			{ID: "respondent", Side: draft.SideRespondent, PartnerID: respondent.PartnerID, PrincipalID: respondent.PrincipalID,
				PrincipalKind: draft.PrincipalKind(respondent.PrincipalKind), AgentID: respondent.AgentID,
				AuthorizationMode: authorization(respondent)},
		},
		Claim:  draft.Claim{AmountInDisputeMinor: amount, Remedy: remedy, Summary: d.Summary},
		Origin: origin,
	}, nil
}

func contains(set []string, v string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}
