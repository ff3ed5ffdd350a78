// Package resources is the MCP server's resources: an account's cases,
// each read through the API with the token the account's own is exchanged
// for (so the API's membership checks decide what an agent sees), and
// subscriptions to them, held on SEP-2575 subscriptions/listen streams and
// fed by the cases service's case events (docs/mcp.md, "Resources and
// subscriptions").
//
// Everything but a subscription stays stateless: a listen stream is one
// HTTP request held open on one replica, which keeps its subscriptions in
// memory for as long as the stream lasts. Every replica consumes the case
// events for itself and tells the streams it holds, so an event reaches a
// subscriber whichever replica it is connected to.
package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
)

// The URI templates of a case's resources. A case id is the platform's
// id (idPattern), so it never holds a '/' and no URI becomes another path.
const (
	CaseTemplate   = "pcourt://cases/{caseId}"
	DocketTemplate = "pcourt://cases/{caseId}/docket"
	AwardTemplate  = "pcourt://cases/{caseId}/award"
)

// idPattern is the platform's id, as the tools check a path argument.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// part is which of a case's resources a URI names.
type part string

const (
	partCase   part = ""
	partDocket part = "docket"
	partAward  part = "award"
)

// target is the case resource a URI names.
type target struct {
	caseID string
	part   part
}

// parseURI reads pcourt://cases/<caseId>[/docket|/award]; anything else
// is no resource of this server.
func parseURI(raw string) (target, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "pcourt" || u.Host != "cases" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return target{}, false
	}
	id, rest, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !idPattern.MatchString(id) || u.RawPath != "" {
		return target{}, false
	}
	t := target{caseID: id, part: part(rest)}
	switch t.part {
	case partCase, partDocket, partAward:
	default:
		return target{}, false
	}
	// Only the URI's one spelling: a subscription is held, and told, under
	// the URI the client named.
	if t.uri() != raw {
		return target{}, false
	}
	return t, true
}

// uri is the resource's URI.
func (t target) uri() string {
	if t.part == partCase {
		return "pcourt://cases/" + t.caseID
	}
	return "pcourt://cases/" + t.caseID + "/" + string(t.part)
}

// request is the API call that reads the resource: the case, the first
// page of its docket (the API's largest, 200 events), or its award.
func (t target) request() apiclient.Request {
	r := apiclient.Request{Method: http.MethodGet, Path: "/api/v2/cases/" + t.caseID, Query: url.Values{}}
	switch t.part {
	case partDocket:
		r.Path += "/docket"
		r.Query.Set("limit", "200")
	case partAward:
		r.Path += "/award"
	}
	return r
}

// Reader reads case resources through the API.
type Reader struct {
	API      *apiclient.Client
	Exchange *exchange.Exchanger
	Logger   *slog.Logger
}

// read returns the API's JSON for t, read with the API token the caller's
// token is exchanged for, or the API's refusal as a JSON-RPC error that
// carries its problem document unchanged.
func (r *Reader) read(ctx context.Context, callerToken string, t target) ([]byte, error) {
	token, err := r.apiToken(ctx, callerToken)
	if err != nil {
		return nil, err
	}
	call := t.request()
	call.Bearer = token
	answer, err := r.API.Do(ctx, call)
	if err != nil {
		return nil, r.failed(ctx, err)
	}
	return answer.Body, nil
}

// Read is the resources/read handler of every case template.
func (r *Reader) Read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	t, ok := parseURI(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	body, err := r.read(ctx, bearer(req.Extra), t)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: t.uri(), MIMEType: "application/json", Text: string(body)},
	}}, nil
}

// apiToken is the API token the caller's token is exchanged for (as the
// tools get theirs). The HTTP layer authenticated the caller's token.
func (r *Reader) apiToken(ctx context.Context, subject string) (string, error) {
	if subject == "" {
		return "", problemError(problem.New(problem.Unauthenticated, "Send the account's bearer token in the Authorization header."))
	}
	token, err := r.Exchange.APIToken(ctx, subject)
	var refused *exchange.Refused
	switch {
	case err == nil:
		return token, nil
	case errors.As(err, &refused) && refused.SubjectRefused():
		return "", problemError(problem.New(problem.InvalidCredential, "The account token is expired, revoked or not this server's; authorize again."))
	default:
		r.Logger.ErrorContext(ctx, "token exchange failed", "err", err)
		return "", problemError(problem.New(problem.Unavailable, "The account's token cannot be exchanged for the API right now; retry shortly."))
	}
}

// failed is the JSON-RPC error of an API call that got no 2xx: the API's
// problem document unchanged as its data, "<status> <code>: <detail>" as
// its message, as a tool returns it.
func (r *Reader) failed(ctx context.Context, err error) error {
	var p *apiclient.Problem
	switch {
	case errors.As(err, &p) && p.Body != nil:
		return &jsonrpc.Error{Code: rpcCode(p.Status), Message: fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail), Data: p.Body}
	case errors.As(err, &p):
		return problemError(problem.New(problem.BadGateway, p.Detail))
	default:
		r.Logger.ErrorContext(ctx, "API call failed", "err", err)
		return problemError(problem.New(problem.Unavailable, "The API could not be reached; retry shortly."))
	}
}

// problemError is one of the server's own problems as a JSON-RPC error, in
// the shape failed gives the API's.
func problemError(p *problem.Error) error {
	body, _ := json.Marshal(p.Body(""))
	return &jsonrpc.Error{Code: rpcCode(p.Code.Status), Message: fmt.Sprintf("%d %s: %s", p.Code.Status, p.Code.Name, p.Detail), Data: body}
}

// rpcCode is the JSON-RPC error code of an HTTP status: a resource the
// caller may not see (the API answers 404 for a case of another account,
// tenant or environment as for none) and a bad request are invalid params,
// as the MCP specification now has resource-not-found (the SDK's
// ResourceNotFoundError), anything else an internal error; the problem
// document in the error's data says exactly what.
func rpcCode(status int) int64 {
	switch status {
	case http.StatusNotFound, http.StatusBadRequest, http.StatusUnprocessableEntity:
		return jsonrpc.CodeInvalidParams
	default:
		return jsonrpc.CodeInternalError
	}
}

// bearer is the caller's token, from the HTTP request that carried the
// message.
func bearer(extra *mcp.RequestExtra) string {
	if extra == nil {
		return ""
	}
	token, _ := strings.CutPrefix(extra.Header.Get("Authorization"), "Bearer ")
	return token
}

// Templates are the resource templates of a case.
func Templates() []*mcp.ResourceTemplate {
	return []*mcp.ResourceTemplate{
		{URITemplate: CaseTemplate, Name: "case", Title: "A case you take part in", MIMEType: "application/json",
			Description: "The case as GET /api/v2/cases/{caseId} answers it for your account. Subscribe to it to be told of every case event."},
		{URITemplate: DocketTemplate, Name: "docket", Title: "A case's docket", MIMEType: "application/json",
			Description: "The first 200 events of the case's docket, as GET /api/v2/cases/{caseId}/docket?limit=200 answers them."},
		{URITemplate: AwardTemplate, Name: "award", Title: "A case's award", MIMEType: "application/json",
			Description: "The case's award once issued, as GET /api/v2/cases/{caseId}/award answers it (the API's problem before)."},
	}
}

// Register adds the case templates to the server, and answers
// resources/list with the account's cases, as GET /api/disputes lists
// them to its token (the cases the account takes part in; for a token
// bound to one case, that case alone).
func (r *Reader) Register(s *mcp.Server) {
	for _, t := range Templates() {
		s.AddResourceTemplate(t, r.Read)
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			return r.list(ctx, req)
		}
	})
}

// casesPage is how many cases one resources/list page lists: the API's
// page of its case list, whose cursor is the list's.
const casesPage = 50

// caseList is the website envelope of GET /api/disputes.
type caseList struct {
	Data struct {
		Cases []struct {
			CaseID         string `json:"caseId"`
			ExternalCaseID string `json:"externalCaseId"`
			Status         string `json:"status"`
		} `json:"cases"`
		NextCursor *string `json:"nextCursor"`
	} `json:"data"`
}

// list is the resources/list answer: one page of the account's cases,
// each as its case resource (its docket and award are read by their URIs,
// the templates), with the API's cursor as the list's.
func (r *Reader) list(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	token, err := r.apiToken(ctx, bearer(req.GetExtra()))
	if err != nil {
		return nil, err
	}
	call := apiclient.Request{Method: http.MethodGet, Path: "/api/disputes", Query: url.Values{"limit": {fmt.Sprint(casesPage)}}, Bearer: token}
	if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
		call.Query.Set("cursor", p.Cursor)
	}
	answer, err := r.API.Do(ctx, call)
	if err != nil {
		return nil, r.failed(ctx, err)
	}
	var page caseList
	if err := json.Unmarshal(answer.Body, &page); err != nil {
		return nil, problemError(problem.New(problem.BadGateway, "The API's case list could not be read."))
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, c := range page.Data.Cases {
		if !idPattern.MatchString(c.CaseID) {
			continue
		}
		t := target{caseID: c.CaseID}
		name := "case " + c.CaseID
		if c.ExternalCaseID != "" {
			name += " (" + c.ExternalCaseID + ")"
		}
		res.Resources = append(res.Resources, &mcp.Resource{URI: t.uri(), Name: name, Description: "status " + c.Status, MIMEType: "application/json"})
	}
	if page.Data.NextCursor != nil {
		res.NextCursor = *page.Data.NextCursor
	}
	return res, nil
}

// RefuseSubscribe is the stateless server's resources/subscribe: it keeps
// no session past the request, so nothing could be told there. A
// subscription is a subscriptions/listen stream (MCP 2026-07-28, SEP-2575),
// which the SDK's client opens for ClientSession.Subscribe.
func RefuseSubscribe(context.Context, *mcp.SubscribeRequest) error {
	return problemError(problem.New(problem.NotAvailable, "Subscribe with subscriptions/listen (MCP 2026-07-28): this server keeps no session to hold a resources/subscribe on."))
}

// NothingToUnsubscribe is the stateless server's resources/unsubscribe:
// it holds no subscription, so there is nothing to end (a listen stream
// ends when its client cancels it).
func NothingToUnsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }
