package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
)

// The paid readiness report over MCP follows x402's MCP transport: a call
// without payment returns the API's payment requirements as the tool's
// error (isError, the PaymentRequired document as structured content);
// the caller signs one of them with its own wallet and calls again with
// the PaymentPayload in _meta["x402/payment"]; the report comes back with
// the settlement in _meta["x402/payment-response"]. The MCP server only
// carries the payment to the API (its PAYMENT-SIGNATURE header) and back:
// the payer is the caller's wallet, and the API's payment journal decides,
// as for any payer, that one payment pays for one report once.
const (
	metaPayment         = "x402/payment"
	metaPaymentResponse = "x402/payment-response"
)

// readinessOperation is the paid report's operation in the document.
const readinessOperation = "getDisputeReadiness"

func readinessTool(op operation) *mcp.Tool {
	return &mcp.Tool{
		Name:  "buy_readiness_report",
		Title: "Buy a dispute-readiness report",
		Description: op.Summary + ". " + op.Description + " (POST " + op.Path + ", paid over x402: a call without payment returns the " +
			"payment requirements as its error; call again with the signed PaymentPayload in _meta[\"" + metaPayment + "\"]; " +
			"the settlement comes back in _meta[\"" + metaPaymentResponse + "\"]; scope readiness:buy)",
		InputSchema: op.InputSchema,
		Annotations: &mcp.ToolAnnotations{Title: "Buy a dispute-readiness report", DestructiveHint: new(false), OpenWorldHint: new(true)},
	}
}

func (ts *toolset) buyReadiness(op operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if perr := ts.requireScope(ctx, req, auth.ScopeReadinessBuy); perr != nil {
			return problemResult(perr), nil
		}
		call, perr := op.request(req.Params.Arguments)
		if perr != nil {
			return problemResult(perr), nil
		}
		if payment, ok := req.Params.Meta[metaPayment]; ok {
			signature, err := x402.EncodeHeader(payment)
			if err != nil {
				return problemResult(problem.Newf(InvalidArguments, "_meta[%q] cannot be sent as a payment: %v.", metaPayment, err)), nil
			}
			call.Header = http.Header{x402.HeaderPaymentSignature: {signature}}
		}
		answer, err := ts.API.Do(ctx, call)
		var p *apiclient.Problem
		if errors.As(err, &p) && p.Status == http.StatusPaymentRequired {
			var required x402.PaymentRequired
			if derr := x402.DecodeHeader(p.Header.Get(x402.HeaderPaymentRequired), &required); derr != nil {
				return problemResult(problem.New(UnexpectedAnswer, "The API asked for payment without usable payment requirements.")), nil
			}
			body, _ := json.Marshal(required)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
		}
		if err != nil {
			return ts.failed(ctx, err), nil
		}
		res := answerResult(answer)
		if h := answer.Header.Get(x402.HeaderPaymentResponse); h != "" {
			var settled x402.SettleResponse
			if err := x402.DecodeHeader(h, &settled); err == nil {
				res.Meta = mcp.Meta{metaPaymentResponse: settled}
			}
		}
		return res, nil
	}
}

// requireScope refuses a caller whose token lacks scope, as the API's
// RequireScope does, for a tool whose API operation takes no account token
// (the paid report's payer is a wallet) but which acts for the account.
func (ts *toolset) requireScope(ctx context.Context, req *mcp.CallToolRequest, scope auth.Scope) *problem.Error {
	subject := bearer(req)
	cred, err := ts.Credentials.AuthenticateHash(ctx, auth.HashToken(subject))
	switch {
	case errors.Is(err, auth.ErrInvalidCredential):
		return problem.New(problem.InvalidCredential, "The account token is unknown, expired or revoked; authorize again.")
	case err != nil:
		return problem.New(problem.Unavailable, "Credentials cannot be checked right now; retry shortly.").Wrap(err)
	case !cred.HasScope(scope):
		return problem.Newf(problem.Forbidden, "This tool needs the %s scope, which the token does not carry.", scope)
	}
	return nil
}
