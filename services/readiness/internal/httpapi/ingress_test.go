package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/x402client"
	"github.com/pcourt/pcourt/services/readiness/internal/httpapi"
)

// Every kind of answer keeps its header block under 4 KiB, so that it
// passes an ingress with default proxy buffers: the challenge (with the
// failed settlement too), the paid report and the problems.
func TestEveryAnswerFitsADefaultProxyBuffer(t *testing.T) {
	s := newStack(t)
	offer := s.offer(t)
	paid := encode(t, s.sign(t, offer, nil))
	tests := []struct {
		name   string
		body   []byte
		header string
		status int
	}{
		{"challenge", validBody, "", 402},
		{"refused payment", validBody, encode(t, s.sign(t, offer, func(o *x402.PaymentRequirements) { o.Network = "eip155:1" })), 402},
		{"paid report", validBody, paid, 200},
		{"replayed report", validBody, paid, 200},
		{"bad body", []byte(`{"claimantType":`), "", 400},
		{"bad payment", validBody, "not-base64!", 400},
		{"conflict", []byte(strings.Replace(string(validBody), `40000`, `40001`, 1)), paid, 409},
		{"oversize body", bytes.Repeat([]byte("a"), 2<<20), "", 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.url+httpapi.Path, bytes.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set(x402.HeaderPaymentSignature, tc.header)
			}
			if len(tc.body) > httpapi.MaxBodyBytes {
				req.Header.Set("Expect", "100-continue") // refused on its Content-Length: the body is never sent
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			t.Logf("%d: header block %d bytes", resp.StatusCode, headerBlock(t, resp))
			requireHeaderFits(t, resp)
		})
	}
	// The largest challenge, with the failed settlement in PAYMENT-RESPONSE
	// beside it, is checked by TestSettlementRefusedAfterVerification: the
	// harness checks the bound on every exchange.
}

// The header carries the compact challenge, the body the full one: the
// same offers and resource, the bazaar extension with its schemas by
// reference to the OpenAPI document the edge serves beside the resource.
func TestChallengeHeaderIsCompactAndTheBodyFull(t *testing.T) {
	s := newStack(t)
	a := s.post(t, validBody, "")
	require.Equal(t, 402, a.status)
	var body x402.PaymentRequired
	require.NoError(t, json.Unmarshal(a.body, &body))
	require.Equal(t, body.Resource, a.required.Resource)
	require.Equal(t, body.Accepts, a.required.Accepts)
	require.JSONEq(t, string(body.Extensions["payment-identifier"]), string(a.required.Extensions["payment-identifier"]))

	type bazaar struct {
		Info struct {
			Input struct {
				Method string          `json:"method"`
				Body   json.RawMessage `json:"body"`
			} `json:"input"`
			Output struct {
				Type    string          `json:"type"`
				Example json.RawMessage `json:"example"`
			} `json:"output"`
		} `json:"info"`
		Schema struct {
			Properties struct {
				Input struct {
					Properties struct {
						Body json.RawMessage `json:"body"`
					} `json:"properties"`
				} `json:"input"`
				Output struct {
					Properties struct {
						Example json.RawMessage `json:"example"`
					} `json:"properties"`
				} `json:"output"`
			} `json:"properties"`
		} `json:"schema"`
	}
	var compact, full bazaar
	require.NoError(t, json.Unmarshal(a.required.Extensions["bazaar"], &compact))
	require.NoError(t, json.Unmarshal(body.Extensions["bazaar"], &full))

	require.Equal(t, "POST", compact.Info.Input.Method)
	require.Empty(t, compact.Info.Input.Body, "the example request is in the body and the OpenAPI document")
	request, err := api.Example("ReadinessRequestExample")
	require.NoError(t, err)
	require.JSONEq(t, string(request), string(full.Info.Input.Body))
	require.JSONEq(t, `{"$ref":"`+publicBase+`/openapi.json#/components/schemas/ReadinessRequest"}`, string(compact.Schema.Properties.Input.Properties.Body))
	require.JSONEq(t, `{"$ref":"`+publicBase+`/openapi.json#/components/schemas/ReadinessReportResponse"}`, string(compact.Schema.Properties.Output.Properties.Example))
	require.Empty(t, compact.Info.Output.Example, "the example report is in the body only")

	schema, err := api.Schema("ReadinessRequest")
	require.NoError(t, err)
	require.JSONEq(t, string(schema), string(full.Schema.Properties.Input.Properties.Body), "the body publishes the request schema inline")
	example, err := api.Example("ReadinessReportExample")
	require.NoError(t, err)
	require.JSONEq(t, string(example), string(full.Info.Output.Example))
}

// Our x402 client, which reads PAYMENT-REQUIRED as the reference client
// does, pays the compact challenge as it is and gets the report.
func TestTheClientPaysTheCompactChallenge(t *testing.T) {
	s := newStack(t)
	client, err := x402client.New(x402client.Config{Key: s.payer, Networks: []string{testnet}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.url+httpapi.Path, nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Pay(context.Background(), req, validBody)
	require.NoError(t, err)
	require.Equal(t, 200, res.Response.StatusCode, string(res.Body))
	require.True(t, res.Settlement.Success)
	require.Contains(t, res.Payment.Extensions, "bazaar", "the payment echoes the header's extensions")
	requireHeaderFits(t, res.Response)
}

// The discovery example is true: a paid call with the example request
// answers the example report, whenever it is made.
func TestDiscoveryExampleIsTheReportOfTheExampleRequest(t *testing.T) {
	s := newStack(t)
	request, err := api.Example("ReadinessRequestExample")
	require.NoError(t, err)
	shown, err := api.Example("ReadinessReportExample")
	require.NoError(t, err)

	a := s.post(t, request, encode(t, s.sign(t, s.offer(t), nil)))
	require.Equal(t, 200, a.status, string(a.body))
	var want reportBody
	require.NoError(t, json.Unmarshal(shown, &want))
	require.JSONEq(t, string(want.Data), string(a.report.Data), "the report of the example request is the shown one")
	require.Equal(t, want.OK, a.report.OK)
	require.Equal(t, want.Payment.Protocol, a.report.Payment.Protocol)
	require.Equal(t, want.Payment.PriceUsd, a.report.Payment.PriceUsd)
	require.Equal(t, want.Payment.Replayed, a.report.Payment.Replayed)
	require.Equal(t, want.Payment.Network, a.report.Payment.Network)
	require.NotContains(t, string(request), "escrowWindowEndsAt", "no time-dependent input: the example holds at any date")
}

// A body far over every limit is refused naming the route's own limit,
// not the server's larger default.
func TestOversizeBodyNamesTheRouteLimit(t *testing.T) {
	s := newStack(t)
	req, err := http.NewRequest(http.MethodPost, s.url+httpapi.Path, bytes.NewReader(bytes.Repeat([]byte("a"), 2<<20)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue") // refused on its Content-Length: the body is never sent
	resp, body := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, 413, resp.StatusCode)
	var p struct{ Code, Detail string }
	require.NoError(t, json.Unmarshal(body, &p))
	require.Equal(t, "body_too_large", p.Code)
	require.Contains(t, p.Detail, "16384 bytes")
	require.NotContains(t, p.Detail, "1048576")
}
