package httpapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// Price is the fixed price of one report, in USD and in USDC atomic units
// (6 decimals).
const (
	PriceUsd    = "0.010000"
	PriceAmount = "10000"
)

const (
	resourceDescription = "Dispute readiness report: lane, composition, filing-fee quote, unmet consent and evidence requirements, corpus compatibility and timing warnings. Deterministic; files nothing, assesses no merits, gives no legal advice, verifies no facts, moves no disputed funds."
	paymentIdentifier   = "payment-identifier"
)

// Challenge builds the 402 answers: our offers and the extensions that
// describe the resource to discovery services and accept payment ids.
type Challenge struct {
	offers     []x402.PaymentRequirements
	extensions x402.Extensions

	mu      sync.Mutex
	encoded map[string]encodedChallenge // by resource URL and reason
}

// encodedChallenge is a challenge ready to send. Encoding the discovery
// metadata dominates the cost of a 402, and the challenge only varies by
// resource URL and reason, so each is encoded once.
type encodedChallenge struct {
	header string
	body   []byte
}

// maxEncoded bounds the cache: the resource URL is configured and the
// reasons are a small set, so this is a guard, not a working limit.
const maxEncoded = 256

// NewChallenge prepares the offers for payTo on the networks and the
// discovery metadata. requestSchema is the JSON Schema of the request body
// (from the OpenAPI document, so the two cannot drift).
func NewChallenge(networks []string, payTo string, maxTimeoutSeconds int, requestSchema json.RawMessage, table readiness.RuleTable) (*Challenge, error) {
	if !strings.HasPrefix(payTo, "0x") || !common.IsHexAddress(payTo) {
		return nil, fmt.Errorf("pay-to address %q is not a 0x-prefixed 20-byte hex address", payTo)
	}
	to := common.HexToAddress(payTo)
	c := &Challenge{}
	for _, n := range networks {
		asset, ok := x402.USDC(n)
		if !ok {
			return nil, fmt.Errorf("network %q has no known USDC asset", n)
		}
		offer, err := asset.Offer(PriceAmount, to, maxTimeoutSeconds)
		if err != nil {
			return nil, fmt.Errorf("offer on %s: %w", n, err)
		}
		c.offers = append(c.offers, offer)
	}
	if len(c.offers) == 0 {
		return nil, fmt.Errorf("at least one network required")
	}
	bazaar, err := bazaarExtension(requestSchema, table)
	if err != nil {
		return nil, err
	}
	c.extensions = x402.Extensions{
		"bazaar":          bazaar,
		paymentIdentifier: json.RawMessage(paymentIdentifierExtension),
	}
	return c, nil
}

// Offers returns our offers, which a payment must match.
func (c *Challenge) Offers() []x402.PaymentRequirements { return c.offers }

// PaymentRequired returns the challenge for resourceURL; reason is the
// `error` field (why the request was not served).
func (c *Challenge) PaymentRequired(resourceURL, reason string) x402.PaymentRequired {
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       reason,
		Resource:    x402.ResourceInfo{URL: resourceURL, Description: resourceDescription, MimeType: "application/json"},
		Accepts:     c.offers,
		Extensions:  c.extensions,
	}
}

// Encoded returns the challenge as the PAYMENT-REQUIRED header value and
// the JSON body.
func (c *Challenge) Encoded(resourceURL, reason string) (string, []byte, error) {
	key := resourceURL + "\x00" + reason
	c.mu.Lock()
	e, ok := c.encoded[key]
	c.mu.Unlock()
	if ok {
		return e.header, e.body, nil
	}
	pr := c.PaymentRequired(resourceURL, reason)
	header, err := x402.EncodeHeader(pr)
	if err != nil {
		return "", nil, err
	}
	body, err := json.Marshal(pr)
	if err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	if c.encoded == nil {
		c.encoded = map[string]encodedChallenge{}
	}
	if len(c.encoded) < maxEncoded {
		c.encoded[key] = encodedChallenge{header: header, body: body}
	}
	c.mu.Unlock()
	return header, body, nil
}

// paymentIdentifierExtension advertises optional payment ids, as the x402
// payment-identifier extension specifies.
const paymentIdentifierExtension = `{"info":{"required":false},"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"required":{"type":"boolean"},"id":{"type":"string","minLength":16,"maxLength":128}},"required":["required"]}}`

var paymentIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// paymentID returns the id a client attached with the payment-identifier
// extension, "" when it attached none.
func paymentID(p x402.PaymentPayload) (string, error) {
	raw, ok := p.Extensions[paymentIdentifier]
	if !ok {
		return "", nil
	}
	var ext struct {
		Info struct {
			ID *string `json:"id"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &ext); err != nil {
		return "", fmt.Errorf("the payment-identifier extension is not an object with info")
	}
	if ext.Info.ID == nil {
		return "", nil
	}
	if !paymentIDPattern.MatchString(*ext.Info.ID) {
		return "", fmt.Errorf("the payment identifier must be 16 to 128 characters of A-Z a-z 0-9 _ -")
	}
	return *ext.Info.ID, nil
}

// bazaarExtension describes the endpoint for discovery: a POST with a JSON
// body, an example request and the report it yields.
func bazaarExtension(requestSchema json.RawMessage, table readiness.RuleTable) (json.RawMessage, error) {
	exampleReq, err := decodeRequest([]byte(exampleRequest))
	if err != nil {
		return nil, fmt.Errorf("example request: %w", err)
	}
	example := readiness.Evaluate(table, exampleReq, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	ext := map[string]any{
		"info": map[string]any{
			"input": map[string]any{
				"type":     "http",
				"method":   "POST",
				"bodyType": "json",
				"body":     json.RawMessage(exampleRequest),
			},
			"output": map[string]any{
				"type":    "json",
				"example": map[string]any{"ok": true, "data": example, "payment": map[string]any{"protocol": "x402", "priceUsd": PriceUsd, "replayed": false}},
			},
		},
		"schema": map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": map[string]any{
				"input": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"type":     map[string]any{"type": "string", "const": "http"},
						"method":   map[string]any{"type": "string", "enum": []string{"POST"}},
						"bodyType": map[string]any{"type": "string", "enum": []string{"json"}},
						"body":     requestSchema,
					},
					"required":             []string{"type", "method", "bodyType", "body"},
					"additionalProperties": false,
				},
				"output": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"type":    map[string]any{"type": "string"},
						"example": map[string]any{"type": "object"},
					},
					"required": []string{"type"},
				},
			},
			"required": []string{"input"},
		},
	}
	return json.Marshal(ext)
}

const exampleRequest = `{"caseTrack":"ai_standard","claimantType":"organization","respondentType":"ai_agent","amountInDisputeUsd":1250,"remedy":"money_obligation","settlementRail":"bilateral_escrow","fastTrackClaimClass":"non_delivery","mutualConsentReported":true,"authorityToBindReported":true,"claimantEvidenceReady":true,"respondentEvidenceReady":true,"microClaimsTierConsentReported":false,"remedialJurisdictionOptInReported":true,"corpusAmountUsd":1250,"escrowWindowEndsAt":"2026-11-09T09:00:00Z"}`
