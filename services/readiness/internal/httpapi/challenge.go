package httpapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/x402"
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
//
// The challenge travels twice. The PAYMENT-REQUIRED header carries the
// offers, the resource and compact discovery metadata: the call's method
// and body type, and the request and report schemas by reference to the
// OpenAPI document the edge serves beside the resource. Every response's header block stays under 4 KiB so that
// it passes an ingress with default proxy buffers (nginx answers 502 "upstream
// sent too big header" otherwise). The 402 body carries the same offers with
// the full discovery metadata: the request schema inline and the example
// request and report.
type Challenge struct {
	offers []x402.PaymentRequirements
	body   x402.Extensions // full form, the same for every resource URL

	mu      sync.Mutex
	encoded map[string]encodedChallenge // by resource URL and reason
}

// Discovery is what the bazaar extension publishes about the resource. All
// of it comes from the OpenAPI document, so the two cannot drift.
type Discovery struct {
	// RequestSchema is the JSON Schema of the request body.
	RequestSchema json.RawMessage
	// ExampleRequest is a request body and ExampleResponse the 200 body a
	// paid call with it answers.
	ExampleRequest  json.RawMessage
	ExampleResponse json.RawMessage
}

// Names of the OpenAPI document's parts the header refers to.
const (
	openAPIPath          = "/openapi.json"
	requestSchemaPointer = "#/components/schemas/ReadinessRequest"
	reportSchemaPointer  = "#/components/schemas/ReadinessReportResponse"
)

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
// discovery metadata.
func NewChallenge(networks []string, payTo string, maxTimeoutSeconds int, discovery Discovery) (*Challenge, error) {
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
	if _, err := decodeRequest(discovery.ExampleRequest); err != nil {
		return nil, fmt.Errorf("example request: %w", err)
	}
	if !json.Valid(discovery.RequestSchema) || !json.Valid(discovery.ExampleResponse) {
		return nil, fmt.Errorf("the request schema and the example response must be JSON")
	}
	full, err := fullBazaar(discovery)
	if err != nil {
		return nil, err
	}
	c.body = x402.Extensions{"bazaar": full, paymentIdentifier: json.RawMessage(paymentIdentifierExtension)}
	return c, nil
}

// Offers returns our offers, which a payment must match.
func (c *Challenge) Offers() []x402.PaymentRequirements { return c.offers }

// PaymentRequired returns the challenge for resourceURL as the 402 body
// carries it, with the full discovery metadata; reason is the `error` field
// (why the request was not served).
func (c *Challenge) PaymentRequired(resourceURL, reason string) x402.PaymentRequired {
	return c.paymentRequired(resourceURL, reason, c.body)
}

func (c *Challenge) paymentRequired(resourceURL, reason string, ext x402.Extensions) x402.PaymentRequired {
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       reason,
		Resource:    x402.ResourceInfo{URL: resourceURL, Description: resourceDescription, MimeType: "application/json"},
		Accepts:     c.offers,
		Extensions:  ext,
	}
}

// Encoded returns the challenge as the PAYMENT-REQUIRED header value, with
// compact discovery metadata, and the JSON body, with the full form.
func (c *Challenge) Encoded(resourceURL, reason string) (string, []byte, error) {
	key := resourceURL + "\x00" + reason
	c.mu.Lock()
	e, ok := c.encoded[key]
	c.mu.Unlock()
	if ok {
		return e.header, e.body, nil
	}
	compact, err := compactBazaar(documentURL(resourceURL))
	if err != nil {
		return "", nil, err
	}
	header, err := x402.EncodeHeader(c.paymentRequired(resourceURL, reason,
		x402.Extensions{"bazaar": compact, paymentIdentifier: json.RawMessage(paymentIdentifierExtension)}))
	if err != nil {
		return "", nil, err
	}
	body, err := json.Marshal(c.PaymentRequired(resourceURL, reason))
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

// documentURL is the address of the OpenAPI document beside the resource:
// the edge serves both from the same origin.
func documentURL(resourceURL string) string {
	return strings.TrimSuffix(resourceURL, Path) + openAPIPath
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

// fullBazaar describes the endpoint for discovery in full: a POST with a
// JSON body, its schema inline, an example request and the report it yields.
func fullBazaar(d Discovery) (json.RawMessage, error) {
	return bazaar(bazaarParts{
		requestSchema:   d.RequestSchema,
		exampleSchema:   json.RawMessage(`{"type":"object"}`),
		exampleRequest:  d.ExampleRequest,
		exampleResponse: d.ExampleResponse,
	})
}

// compactBazaar is the bazaar extension sized for a header: the method and
// body type, and the request and report schemas as references into the
// OpenAPI document at docURL, which also holds the example exchange. The
// examples themselves are in the 402 body.
func compactBazaar(docURL string) (json.RawMessage, error) {
	ref := func(pointer string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"$ref": docURL + pointer})
		return b
	}
	return bazaar(bazaarParts{requestSchema: ref(requestSchemaPointer), exampleSchema: ref(reportSchemaPointer)})
}

// bazaarParts are what varies between the two forms of the extension; a
// nil example is left out.
type bazaarParts struct {
	requestSchema, exampleSchema    json.RawMessage
	exampleRequest, exampleResponse json.RawMessage
}

// bazaar is the x402 bazaar extension: info (the call and its examples) and
// schema (the JSON Schema of info).
func bazaar(p bazaarParts) (json.RawMessage, error) {
	input := map[string]any{"type": "http", "method": "POST", "bodyType": "json"}
	inputRequired := []string{"type", "method", "bodyType"}
	if p.exampleRequest != nil {
		input["body"] = p.exampleRequest
		inputRequired = append(inputRequired, "body")
	}
	output := map[string]any{"type": "json"}
	if p.exampleResponse != nil {
		output["example"] = p.exampleResponse
	}
	ext := map[string]any{
		"info": map[string]any{"input": input, "output": output},
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
						"body":     p.requestSchema,
					},
					"required":             inputRequired,
					"additionalProperties": false,
				},
				"output": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"type":    map[string]any{"type": "string"},
						"example": p.exampleSchema,
					},
					"required": []string{"type"},
				},
			},
			"required": []string{"input"},
		},
	}
	return json.Marshal(ext)
}
