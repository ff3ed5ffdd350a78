// Package tools is the MCP server's tools: each mirrors one API operation
// (its input schema is the operation's parameters and body schema, read
// from the OpenAPI document), calls it through the edge with a token for
// the API that the account's own token is exchanged for, and returns the
// API's answer, or the API's problem as the tool's error, unchanged. Three
// tools are more than a mirror: verify_award checks an award offline as any
// holder would, buy_readiness_report carries the x402 challenge and
// payment of the paid report, and upload_exhibit sends a file given as
// base64 as the API's multipart upload.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
	"github.com/pcourt/pcourt/services/mcp/internal/resources"
)

// The MCP server's own problem codes; docs/problems.md lists them. Every
// other problem a tool returns is the API's.
var (
	InvalidArguments = problem.Code{Name: "invalid_tool_arguments", Status: http.StatusBadRequest, Title: "Invalid tool arguments"}
	AccountOnly      = problem.Code{Name: "account_token_required", Status: http.StatusForbidden, Title: "Account token required"}
	AwardNotVerified = problem.Code{Name: "award_not_verified", Status: http.StatusUnprocessableEntity, Title: "Award not verified"}
	UnexpectedAnswer = problem.Code{Name: "unexpected_api_answer", Status: http.StatusBadGateway, Title: "Unexpected answer of the API"}
)

// Codes returns the MCP server's problem codes, the rows of owner mcp in
// docs/problems.md.
func Codes() []problem.Code {
	return []problem.Code{InvalidArguments, AccountOnly, AwardNotVerified, UnexpectedAnswer}
}

// Deps are what the tools call.
type Deps struct {
	API      *apiclient.Client
	Exchange *exchange.Exchanger
	// Credentials authenticates the caller's token where a tool checks a
	// scope itself (the paid report, whose API operation takes no token).
	Credentials *auth.Store
	// Meter counts the tool calls (pcourt_mcp_tool_calls_total).
	Meter  metric.MeterProvider
	Logger *slog.Logger
	// Resources reads the account's cases as resources; nil serves none.
	Resources *resources.Reader
}

// NewServer returns the MCP server, every tool of the catalogue added.
func NewServer(version string, d Deps) (*mcp.Server, error) {
	ids := []string{readinessOperation}
	for _, t := range catalogue {
		ids = append(ids, t.Operation)
	}
	doc, err := api.JSON()
	if err != nil {
		return nil, err
	}
	ops, err := readOperations(doc, ids)
	if err != nil {
		return nil, err
	}
	opts := &mcp.ServerOptions{Instructions: instructions, Logger: d.Logger}
	if d.Resources != nil {
		// Advertised, and refused here: a subscription is held on its
		// own listen stream's server (internal/resources).
		opts.SubscribeHandler, opts.UnsubscribeHandler = resources.RefuseSubscribe, resources.NothingToUnsubscribe
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "pcourt", Title: "pcourt", Version: version}, opts)
	calls, err := d.Meter.Meter(instrumentationName).Int64Counter("pcourt.mcp.tool.calls",
		metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls by tool and by the problem code of a failed one (ok when it succeeded)."))
	if err != nil {
		return nil, err
	}
	ts := &toolset{Deps: d}
	add := func(t *mcp.Tool, h mcp.ToolHandler) { s.AddTool(t, counted(calls, t.Name, h)) }
	for _, spec := range catalogue {
		op := ops[spec.Operation]
		add(spec.tool(op), ts.mirror(op))
	}
	add(verifyAwardTool, ts.verifyAward)
	add(uploadExhibitTool, ts.uploadExhibit)
	paid := ops[readinessOperation]
	add(readinessTool(paid), ts.buyReadiness(paid))
	if d.Resources != nil {
		d.Resources.Register(s)
	}
	return s, nil
}

const instrumentationName = "github.com/pcourt/pcourt/services/mcp/internal/tools"

// counted counts each call of the tool by its outcome: ok, or the code of
// the problem its error carries (the API's or the server's; a tool's
// catalogue and the problem codes are both bounded, so are the series).
// The paid report's price, a PaymentRequired and not a problem, counts as
// payment_required.
func counted(calls metric.Int64Counter, tool string, h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := h(ctx, req)
		code := "ok"
		if res != nil && res.IsError {
			var p struct {
				Code        string          `json:"code"`
				X402Version int             `json:"x402Version"`
				Accepts     json.RawMessage `json:"accepts"`
			}
			raw, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(raw, &p)
			switch {
			case p.Code != "":
				code = p.Code
			case p.Accepts != nil:
				code = "payment_required"
			default:
				code = "unknown"
			}
		}
		calls.Add(ctx, 1, metric.WithAttributes(attribute.String("tool", tool), attribute.String("code", code)))
		return res, err
	}
}

// instructions tell the model what the server is for.
const instructions = `pcourt runs arbitration-style dispute cases. These tools act for the account your token belongs to, within its scopes: prepare and confirm case drafts, take part in your cases (answer, submissions, messages, exhibits and the evidence's acts, the record, the pre-award review, consent to the award, executions), read and verify awards offline, and buy a readiness report over x402. Every command takes an idempotencyKey: reuse it to retry the same act, never for another. A failed call returns the API's problem document (its code says what to fix).`

type toolset struct{ Deps }

// mirror is the handler of a tool that mirrors op.
func (ts *toolset) mirror(op operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		call, perr := op.request(req.Params.Arguments)
		if perr != nil {
			return problemResult(perr), nil
		}
		token, perr := ts.apiToken(ctx, req)
		if perr != nil {
			return problemResult(perr), nil
		}
		call.Bearer = token
		answer, err := ts.API.Do(ctx, call)
		if err != nil {
			return ts.failed(ctx, err), nil
		}
		return answerResult(answer), nil
	}
}

// apiToken is the API token the caller's own token is exchanged for. The
// HTTP layer authenticated the caller's token before the request reached
// the server, so it is there.
func (ts *toolset) apiToken(ctx context.Context, req *mcp.CallToolRequest) (string, *problem.Error) {
	subject := bearer(req)
	if subject == "" {
		return "", problem.New(problem.Unauthenticated, "Send the account's bearer token in the Authorization header.")
	}
	token, err := ts.Exchange.APIToken(ctx, subject)
	var refused *exchange.Refused
	switch {
	case err == nil:
		return token, nil
	case errors.As(err, &refused) && refused.SubjectRefused():
		return "", problem.New(problem.InvalidCredential, "The account token is expired, revoked or not this server's; authorize again.")
	default:
		ts.Logger.ErrorContext(ctx, "token exchange failed", "err", err)
		return "", problem.New(problem.Unavailable, "The account's token cannot be exchanged for the API right now; retry shortly.").Wrap(err)
	}
}

// bearer is the caller's token, from the HTTP request that carried the
// call.
func bearer(req *mcp.CallToolRequest) string {
	if req.Extra == nil {
		return ""
	}
	token, _ := strings.CutPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
	return token
}

// failed is the result of a call that got no 2xx: the API's problem, or
// one of the MCP server's when the API could not be reached or answered
// without one.
func (ts *toolset) failed(ctx context.Context, err error) *mcp.CallToolResult {
	var p *apiclient.Problem
	switch {
	case errors.As(err, &p) && p.Body != nil:
		return &mcp.CallToolResult{
			IsError:           true,
			Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail)}},
			StructuredContent: p.Body,
		}
	case errors.As(err, &p):
		return problemResult(problem.New(UnexpectedAnswer, p.Detail))
	default:
		ts.Logger.ErrorContext(ctx, "API call failed", "err", err)
		return problemResult(problem.New(problem.Unavailable, "The API could not be reached; retry shortly.").Wrap(err))
	}
}

// answerResult is a 2xx answer: its JSON as the structured content, and as
// text for clients that read only text.
func answerResult(a apiclient.Answer) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(a.Body)}}}
	if isObject(a.Body) {
		res.StructuredContent = json.RawMessage(a.Body)
	}
	return res
}

func isObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// problemResult is one of the MCP server's own problems as a tool error,
// in the API's problem shape.
func problemResult(p *problem.Error) *mcp.CallToolResult {
	body, _ := json.Marshal(p.Body(""))
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s: %s", p.Code.Status, p.Code.Name, p.Detail)}},
		StructuredContent: json.RawMessage(body),
	}
}

var idRE = regexp.MustCompile(idPattern)

// request is the call a tool's arguments make, or the first thing wrong
// with them. What the API checks (the body, a required Idempotency-Key)
// is left to it, so the caller gets the API's own problem for it.
func (op operation) request(raw json.RawMessage) (apiclient.Request, *problem.Error) {
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return apiclient.Request{}, problem.New(InvalidArguments, "The arguments are not a JSON object.")
		}
	}
	properties := op.InputSchema["properties"].(map[string]any)
	for name := range args {
		if _, ok := properties[name]; !ok {
			return apiclient.Request{}, problem.Newf(InvalidArguments, "%s takes no argument %q.", op.ID, name)
		}
	}
	call := apiclient.Request{Method: op.Method, Path: op.Path, Query: url.Values{}}
	for _, p := range op.PathParams {
		var id string
		if err := json.Unmarshal(args[argName(p)], &id); err != nil || !idRE.MatchString(id) {
			return apiclient.Request{}, problem.Newf(InvalidArguments, "%s must be an id: 1 to 160 characters of A-Z a-z 0-9 . _ : -.", argName(p))
		}
		call.Path = strings.Replace(call.Path, "{"+p+"}", id, 1)
	}
	for _, q := range op.QueryParams {
		v, ok := args[q]
		if !ok {
			continue
		}
		var scalar any
		if err := json.Unmarshal(v, &scalar); err != nil {
			return apiclient.Request{}, problem.Newf(InvalidArguments, "%s is not JSON.", q)
		}
		switch s := scalar.(type) {
		case string:
			call.Query.Set(q, s)
		case float64, bool:
			call.Query.Set(q, string(v))
		default:
			return apiclient.Request{}, problem.Newf(InvalidArguments, "%s must be a string, a number or a boolean.", q)
		}
	}
	if v, ok := args[argIdempotencyKey]; ok {
		if err := json.Unmarshal(v, &call.IdempotencyKey); err != nil {
			return apiclient.Request{}, problem.New(InvalidArguments, "idempotencyKey must be a string.")
		}
	}
	// A missing body is sent as none: the API answers it with its own
	// problem.
	call.Body = args[argBody]
	return call, nil
}

// strictArguments decodes a tool's arguments into v, refusing members v
// does not name.
func strictArguments(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the arguments")
	}
	return nil
}
