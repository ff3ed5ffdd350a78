package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
	"github.com/pcourt/pcourt/services/mcp/internal/httpapi"
	"github.com/pcourt/pcourt/services/mcp/internal/resources"
	"github.com/pcourt/pcourt/services/mcp/internal/tools"
)

const (
	public   = "https://pcourt.test"
	resource = public + httpapi.Path
)

// stack is the MCP server's HTTP surface on a real Redis. Its API and
// token endpoint are an address where nothing listens: these tests stop
// before any call (the walk through the real services is
// tools/devstack's TestAnAgentWalksACaseToAnAwardThroughMCP).
type stack struct {
	url   string
	store *auth.Store
}

func newStack(t *testing.T) stack {
	t.Helper()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	nowhere, _ := url.Parse("http://127.0.0.1:1")
	reader := &resources.Reader{
		API:      apiclient.New(nowhere, http.DefaultClient),
		Exchange: exchange.New(exchange.Config{TokenURL: nowhere.String() + "/oauth/token", ClientID: "ocl_mcp", ClientSecret: "s", Resource: public}, http.DefaultClient, nil),
		Logger:   logger,
	}
	server, err := tools.NewServer("test", tools.Deps{
		API:         reader.API,
		Exchange:    reader.Exchange,
		Credentials: store,
		Meter:       metricnoop.NewMeterProvider(),
		Logger:      logger,
		Resources:   reader,
	})
	require.NoError(t, err)
	hub, err := resources.NewHub(resources.DefaultConfig(), reader, store, metricnoop.NewMeterProvider(), logger)
	require.NoError(t, err)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "mcp", Logger: logger})
	require.NoError(t, httpapi.Register(s.Router(), httpapi.Config{
		Resource: resource, MetadataURL: public + httpapi.MetadataPath, AuthorizationServer: public,
	}, httpapi.Deps{Credentials: store, Server: server, Subscriptions: hub}))
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	return stack{url: ts.URL, store: store}
}

// bearerTransport sends one token with every request, as an MCP client
// that holds one does.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, s stack, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.url + httpapi.Path, HTTPClient: &http.Client{Transport: bearerTransport{token}}, DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// Every exchange of these tests is validated against openapi.yaml
// (apitest), the MCP server's operations under the mcp tag.

// The metadata names the server as the resource, the accounts service
// (the public URL, its issuer) as the authorization server, and the
// account scopes.
func TestTheProtectedResourceMetadataNamesTheAuthorizationServer(t *testing.T) {
	s := newStack(t)
	req, err := http.NewRequest(http.MethodGet, s.url+httpapi.MetadataPath, nil)
	require.NoError(t, err)
	resp, body := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, 200, resp.StatusCode)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	require.NoError(t, json.Unmarshal(body, &meta))
	require.Equal(t, resource, meta.Resource)
	require.Equal(t, []string{public}, meta.AuthorizationServers)
	require.Equal(t, []string{"cases:read", "cases:act", "evidence:file", "readiness:buy", "executions:report"}, meta.ScopesSupported)
	require.Equal(t, []string{"header"}, meta.BearerMethods)
}

// Only an account token issued for this server gets in: a request without
// one, or with one for the API, is 401 with the challenge naming the
// metadata (where an MCP client starts authorizing); a partner's
// credential is 403.
func TestOnlyAnAccountTokenForThisServerGetsIn(t *testing.T) {
	s := newStack(t)
	forAPI, _ := authtest.MintAccountToken(t, s.store, "acct_agent1", public, []auth.Scope{auth.ScopeCasesRead})
	partner, _ := authtest.Mint(t, s.store, auth.RoleClaimantAgent)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "", 401, "unauthenticated"},
		{"a token for the API", forAPI, 401, "invalid_credential"},
		{"a partner's credential", partner, 403, "account_token_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, s.url+httpapi.Path, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, body := apitest.Do(t, http.DefaultClient, req)
			require.Equal(t, tc.status, resp.StatusCode)
			var p struct{ Code string }
			require.NoError(t, json.Unmarshal(body, &p))
			require.Equal(t, tc.code, p.Code)
			if tc.status == 401 {
				require.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+public+httpapi.MetadataPath+`"`)
			}
		})
	}
}

// The tools are the catalogue's, each with an input schema that resolves
// as JSON Schema 2020-12 (the body's schema and every component it refers
// to are under $defs), so a client validates its arguments before calling.
func TestEveryToolHasAnInputSchemaThatResolves(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.store, "acct_agent1", resource, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct})
	session := connect(t, s, token)
	listed, err := session.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var schema jsonschema.Schema
		require.NoError(t, json.Unmarshal(raw, &schema), tool.Name)
		_, err = schema.Resolve(nil)
		require.NoError(t, err, "the input schema of %s does not resolve", tool.Name)
		require.Equal(t, "object", schema.Type, tool.Name)
	}
	for _, want := range []string{"prepare_draft", "confirm_draft", "get_case", "file_answer", "file_submission", "confirm_record",
		"get_decision_status", "answer_pre_award_review", "get_award", "verify_award", "consent_to_award", "report_execution", "buy_readiness_report"} {
		require.True(t, slices.Contains(names, want), "no tool %s among %v", want, names)
	}
}

// A tool refuses arguments its schema does not allow before it calls
// anything: an id that is not one (it would become a path), an argument
// the operation does not take.
func TestAToolRefusesArgumentsItDoesNotTake(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.store, "acct_agent1", resource, []auth.Scope{auth.ScopeCasesRead})
	session := connect(t, s, token)
	for name, args := range map[string]map[string]any{
		"a path in place of an id": {"caseId": "../../api/accounts"},
		"an argument it lacks":     {"caseId": "cs_1", "partnerId": "p"},
		"no case at all":           {},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_case", Arguments: args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Equal(t, "invalid_tool_arguments", problemCode(t, res))
		})
	}
}

// When the accounts service cannot be reached, a tool answers the API's
// 503 problem, unavailable, and calls nothing.
func TestAToolAnswersUnavailableWhenItsTokenCannotBeExchanged(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.store, "acct_agent1", resource, []auth.Scope{auth.ScopeCasesRead})
	session := connect(t, s, token)
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_case", Arguments: map[string]any{"caseId": "cs_1"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "unavailable", problemCode(t, res))
}

// The paid report needs readiness:buy, checked by the server itself: its
// API operation takes no token (the payer is a wallet).
func TestThePaidReportNeedsTheReadinessScope(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.store, "acct_agent1", resource, []auth.Scope{auth.ScopeCasesRead})
	session := connect(t, s, token)
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "buy_readiness_report", Arguments: map[string]any{"body": map[string]any{}}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "forbidden", problemCode(t, res))
}

func problemCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var p struct{ Code string }
	require.NoError(t, json.Unmarshal(raw, &p))
	return p.Code
}
