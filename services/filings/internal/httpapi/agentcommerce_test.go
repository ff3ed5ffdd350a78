package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An SD-JWT mandate as an AP2 trusted surface issues it (RFC 9901): an
// ES256 issuer JWT whose _sd digests reference the disclosures, the
// holder's key in cnf.jwk, and the shopping agent's key binding JWT.
type mandateKit struct {
	issuer, holder, merchant *ecdsa.PrivateKey
}

func newMandateKit(t testing.TB) mandateKit {
	t.Helper()
	k := mandateKit{}
	for _, p := range []**ecdsa.PrivateKey{&k.issuer, &k.holder, &k.merchant} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		*p = key
	}
	return k
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jwkOf(k *ecdsa.PrivateKey) map[string]any {
	b, err := k.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		panic(err)
	}
	return map[string]any{"kty": "EC", "crv": "P-256", "x": b64url(b[1:33]), "y": b64url(b[33:])}
}

// sign returns the compact ES256 JWS of payload with header.
func sign(t testing.TB, key *ecdsa.PrivateKey, header, payload map[string]any) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	p, err := json.Marshal(payload)
	require.NoError(t, err)
	input := b64url(h) + "." + b64url(p)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	require.NoError(t, err)
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64url(sig)
}

func sdDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return b64url(sum[:])
}

// mandate issues an SD-JWT whose claims are all selectively disclosed
// except vct, presented with every disclosure and a key binding JWT.
func (k mandateKit) mandate(t testing.TB, vct string, claims map[string]any) string {
	t.Helper()
	payload := map[string]any{"vct": vct, "_sd_alg": "sha-256", "cnf": map[string]any{"jwk": jwkOf(k.holder)}, "iat": time.Now().Unix()}
	var disclosures, digests []string
	for name, value := range claims {
		raw, err := json.Marshal([]any{"salt-" + name, name, value})
		require.NoError(t, err)
		d := b64url(raw)
		disclosures = append(disclosures, d)
		digests = append(digests, sdDigest(d))
	}
	payload["_sd"] = digests
	presentation := sign(t, k.issuer, map[string]any{"alg": "ES256", "typ": "dc+sd-jwt"}, payload) + "~" + strings.Join(disclosures, "~") + "~"
	kb := sign(t, k.holder, map[string]any{"alg": "ES256", "typ": "kb+jwt"},
		map[string]any{"iat": time.Now().Unix(), "aud": "pcourt", "nonce": "n-1", "sd_hash": sdDigest(presentation)})
	return presentation + kb
}

// ap2Pair is a checkout mandate and the payment mandate of its checkout.
func (k mandateKit) ap2Pair(t testing.TB, amount int64, currency string) (checkout, payment string) {
	t.Helper()
	checkoutJWT := sign(t, k.merchant, map[string]any{"alg": "ES256", "typ": "JWT"},
		map[string]any{"id": "chk_1", "currency": currency, "totals": []any{map[string]any{"type": "total", "amount": amount}}})
	hash := sdDigest(checkoutJWT)
	checkout = k.mandate(t, "mandate.checkout.1", map[string]any{"checkout_jwt": checkoutJWT, "checkout_hash": hash})
	payment = k.mandate(t, "mandate.payment.1", map[string]any{
		"transaction_id":     hash,
		"payee":              map[string]any{"id": "merchant_1", "name": "Demo Merchant"},
		"payment_amount":     map[string]any{"amount": amount, "currency": currency},
		"payment_instrument": map[string]any{"id": "stub", "type": "card"},
	})
	return checkout, payment
}

func ap2Body(checkout, payment string, issuer map[string]any) map[string]any {
	b := map[string]any{
		"paymentMandate":  payment,
		"checkoutMandate": checkout,
		"claimant":        map[string]any{"principalId": "user-ada", "principalKind": "individual"},
		"dispute":         map[string]any{"reason": "non_delivery", "remedy": "refund", "summary": "The sneakers never arrived."},
	}
	if issuer != nil {
		b["issuerJwk"] = issuer
	}
	return b
}

type originData struct {
	Origin struct {
		Protocol  string `json:"protocol"`
		Reference string `json:"reference"`
		Merchant  string `json:"merchant"`
		Evidence  []struct {
			Kind   string `json:"kind"`
			Digest string `json:"digest"`
		} `json:"evidence"`
	} `json:"origin"`
	Participants []struct {
		Side        string `json:"side"`
		PrincipalID string `json:"principalId"`
	} `json:"participants"`
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A shopping agent's platform opens a dispute from its AP2 mandates: the
// draft names the agent's principal as claimant and the payee as
// respondent, pins both mandates by digest, answers a retry with the same
// draft, stays invisible to another partner, and opens the case on the
// claimant's confirmation.
func TestAnAP2ResolutionRequestPreparesADraftFromTheMandates(t *testing.T) {
	s := newStack(t)
	k := newMandateKit(t)
	checkout, payment := k.ap2Pair(t, 19900, "USD")
	body := ap2Body(checkout, payment, jwkOf(k.issuer))
	key := newKey()

	rep := s.do(t, http.MethodPost, "/api/v2/ap2/resolution-requests", s.orchestrator, key, body)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var env struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	var d draftData
	var o originData
	require.NoError(t, json.Unmarshal(env.Data, &d))
	require.NoError(t, json.Unmarshal(env.Data, &o))
	require.Equal(t, "ap2", o.Origin.Protocol)
	require.Equal(t, "merchant_1", o.Origin.Merchant)
	require.Equal(t, []string{"payment_mandate", "checkout_mandate"}, []string{o.Origin.Evidence[0].Kind, o.Origin.Evidence[1].Kind})
	require.Equal(t, sha256Hex(payment), o.Origin.Evidence[0].Digest, "the mandate is pinned by the SHA-256 of its exact bytes")
	require.Equal(t, sha256Hex(checkout), o.Origin.Evidence[1].Digest)
	require.Equal(t, "user-ada", o.Participants[0].PrincipalID)
	require.Equal(t, "merchant_1", o.Participants[1].PrincipalID)

	again := s.do(t, http.MethodPost, "/api/v2/ap2/resolution-requests", s.orchestrator, key, body)
	require.Equal(t, http.StatusCreated, again.status)
	var replay struct{ Data draftData }
	require.NoError(t, json.Unmarshal(again.body, &replay))
	require.Equal(t, d.DraftID, replay.Data.DraftID, "a retry under the same key answers the same draft")
	require.Equal(t, d.DraftDigest, replay.Data.DraftDigest)

	other := s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, s.partnerC, "", nil)
	require.Equal(t, http.StatusNotFound, other.status, "another partner's credential sees nothing")
	require.Equal(t, "draft_not_found", other.code)

	read, _ := s.read(t, "/api/v2/case-drafts/"+d.DraftID)
	rep = s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(),
		confirmation(read, "claimant", s.orchID, "user-ada"))
	require.Equal(t, http.StatusCreated, rep.status, "the claimant's confirmation opens the case: %s", rep.body)
}

// Every bad input is a clear problem that changes nothing.
func TestAP2ResolutionRequestRefusals(t *testing.T) {
	s := newStack(t)
	k := newMandateKit(t)
	checkout, payment := k.ap2Pair(t, 19900, "USD")
	_, eurPayment := k.ap2Pair(t, 19900, "EUR")
	otherCheckout, _ := k.ap2Pair(t, 5000, "USD")
	stranger := newMandateKit(t)

	// A disclosure the issuer never signed: its digest is in no _sd.
	forged, err := json.Marshal([]any{"salt-x", "payee", map[string]any{"id": "evil", "name": "Evil"}})
	require.NoError(t, err)
	parts := strings.Split(payment, "~")
	withForged := strings.Join(append(parts[:len(parts)-1:len(parts)-1], b64url(forged), ""), "~")

	tamperedHeader := b64url([]byte(`{"alg":"none","typ":"dc+sd-jwt"}`)) + payment[strings.Index(payment, "."):]

	with := func(edit func(map[string]any)) map[string]any {
		b := ap2Body(checkout, payment, jwkOf(k.issuer))
		edit(b)
		return b
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"not an SD-JWT", with(func(b map[string]any) { b["paymentMandate"] = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln" }), 400, "invalid_mandate"},
		{"not base64url", with(func(b map[string]any) { b["paymentMandate"] = "a+b.c.d~" }), 400, "invalid_mandate"},
		{"alg none", with(func(b map[string]any) { b["paymentMandate"] = tamperedHeader }), 400, "invalid_mandate"},
		{"a delegated chain", with(func(b map[string]any) { b["paymentMandate"] = strings.Replace(payment, "~", "~~", 1) }), 400, "invalid_mandate"},
		{"a disclosure the issuer did not sign", with(func(b map[string]any) { b["paymentMandate"] = withForged }), 422, "mandate_digest_mismatch"},
		{"a payment for another checkout", with(func(b map[string]any) { b["checkoutMandate"] = otherCheckout }), 422, "mandate_digest_mismatch"},
		{"the wrong issuer key", with(func(b map[string]any) { b["issuerJwk"] = jwkOf(stranger.issuer) }), 422, "mandate_signature_invalid"},
		{"a dispute in another currency", with(func(b map[string]any) { b["dispute"].(map[string]any)["currency"] = "EUR" }), 422, "currency_mismatch"},
		{"a payment in EUR", with(func(b map[string]any) {
			b["paymentMandate"], b["checkoutMandate"] = eurPayment, nil
			delete(b, "checkoutMandate")
		}), 422, "unsupported_currency"},
		{"more than was paid", with(func(b map[string]any) { b["dispute"].(map[string]any)["amountMinor"] = 20000 }), 422, "amount_exceeds_payment"},
		{"an unknown reason", with(func(b map[string]any) { b["dispute"].(map[string]any)["reason"] = "buyers_remorse" }), 400, "invalid_resolution_request"},
		{"no payment mandate", with(func(b map[string]any) { delete(b, "paymentMandate") }), 400, "invalid_resolution_request"},
		{"an unknown member", with(func(b map[string]any) { b["cart"] = map[string]any{} }), 400, "unknown_field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/v2/ap2/resolution-requests", s.orchestrator, newKey(), tc.body)
				require.Equal(t, tc.status, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code, string(rep.body))
				require.Equal(t, "application/problem+json", rep.header.Get("Content-Type"))
			})
		})
	}
}

// A UCP order is the evidence of a UCP dispute: the business behind its
// permalink is the respondent, its total the most the claim may be, and
// the AP2 checkout mandate of the ap2-mandates extension must be of the
// order's checkout.
func TestAUCPResolutionRequestPreparesADraftFromTheOrder(t *testing.T) {
	s := newStack(t)
	k := newMandateKit(t)
	checkout, _ := k.ap2Pair(t, 19900, "USD")
	order := `{"ucp":{"version":"2026-01-11"},"id":"order_123","checkout_id":"chk_1","permalink_url":"https://shop.example/orders/123",` +
		`"line_items":[{"id":"li_1","quantity":1}],"fulfillment":{"events":[]},"currency":"USD","totals":[{"type":"subtotal","amount":18000},{"type":"total","amount":19900}]}`
	body := func(order string, edit func(map[string]any)) []byte {
		b := map[string]any{
			"order":           json.RawMessage(order),
			"checkoutMandate": checkout,
			"claimant":        map[string]any{"principalId": "user-ada", "principalKind": "individual"},
			"dispute":         map[string]any{"reason": "not_as_described", "remedy": "refund", "amountMinor": 5000, "summary": "Wrong colour."},
		}
		if edit != nil {
			edit(b)
		}
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		return raw
	}
	rep := s.do(t, http.MethodPost, "/api/v2/ucp/resolution-requests", s.orchestrator, newKey(), body(order, nil))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var env struct{ Data originData }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	require.Equal(t, "ucp", env.Data.Origin.Protocol)
	require.Equal(t, "order_123", env.Data.Origin.Reference)
	require.Equal(t, "shop.example", env.Data.Participants[1].PrincipalID)
	require.Equal(t, sha256Hex(order), env.Data.Origin.Evidence[0].Digest, "the order is pinned by its exact bytes")

	for _, tc := range []struct {
		name, order string
		edit        func(map[string]any)
		status      int
		code        string
	}{
		{"an order without a total", strings.Replace(order, `{"type":"total","amount":19900}`, `{"type":"tax","amount":0}`, 1), nil, 400, "invalid_mandate"},
		{"an order of another checkout", strings.Replace(order, `"chk_1"`, `"chk_2"`, 1), nil, 422, "mandate_digest_mismatch"},
		{"an order in GBP", strings.Replace(order, `"USD"`, `"GBP"`, 1), func(b map[string]any) { delete(b, "checkoutMandate") }, 422, "unsupported_currency"},
		{"more than the total", order, func(b map[string]any) { b["dispute"].(map[string]any)["amountMinor"] = 19901 }, 422, "amount_exceeds_payment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/v2/ucp/resolution-requests", s.orchestrator, newKey(), body(tc.order, tc.edit))
				require.Equal(t, tc.status, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code, string(rep.body))
			})
		})
	}
}
