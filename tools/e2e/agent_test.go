package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pcourt/pcourt/api/apitest"
)

// walkVerifiedAgent is the acceptance walk of an autonomous agent through
// the ingress (docs/accounts.md): its operator, the partner orch,
// registers its account and a client; the unverified agent gets no token;
// the operator files the attestation; the agent gets a token by client
// credentials, prepares a draft for itself against the operator's
// organization, confirms it, and so opens the case, which it then reads;
// otherCase, a case of the operator's it takes no part in, it cannot.
func walkVerifiedAgent(t *testing.T, s *stack, orch *partner, otherCase string) {
	t.Helper()
	ctx := context.Background()
	// An OAuth client finds the authorization server from the API's own
	// metadata (RFC 9728), and the server names itself the same (RFC 8414).
	var resource struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getPublic(t, s.ingress+"/.well-known/oauth-protected-resource", &resource)
	require.Equal(t, s.ingress, resource.Resource, "the resource is the address partners reach, the tokens' audience")
	require.Equal(t, []string{s.ingress}, resource.AuthorizationServers)
	var server struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	getPublic(t, resource.AuthorizationServers[0]+"/.well-known/oauth-authorization-server", &server)
	require.Equal(t, s.ingress, server.Issuer)

	registered := orch.do(t, "POST", "/api/accounts", "e2e-"+randomHex(8), map[string]any{"kind": "autonomous_agent", "displayName": "Claims agent"})
	require.Equal(t, http.StatusCreated, registered.status, string(registered.body))
	var acct struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(registered.body, &acct))
	added := orch.do(t, "POST", "/api/accounts/"+acct.Data.ID+"/clients", "e2e-"+randomHex(8), map[string]any{"scopes": []string{"cases:read", "cases:act"}})
	require.Equal(t, http.StatusCreated, added.status, string(added.body))
	var client struct {
		Data struct {
			ClientID     string `json:"clientId"`
			ClientSecret string `json:"clientSecret"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(added.body, &client))
	cc := clientcredentials.Config{ClientID: client.Data.ClientID, ClientSecret: client.Data.ClientSecret,
		TokenURL: server.TokenEndpoint, AuthStyle: oauth2.AuthStyleInHeader}
	httpCtx := context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: 15 * time.Second})

	_, err := cc.Token(httpCtx)
	var refused *oauth2.RetrieveError
	require.ErrorAs(t, err, &refused, "an unverified agent gets no token")
	require.Equal(t, "unauthorized_client", refused.ErrorCode)

	attested := orch.do(t, "POST", "/api/accounts/"+acct.Data.ID+"/attestation", "", map[string]any{
		"model": "claims-model-7", "provider": "Acme Labs", "contact": "ops@acme.example", "acceptsResponsibility": true})
	require.Equal(t, http.StatusOK, attested.status, string(attested.body))
	tok, err := cc.Token(httpCtx)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.AccessToken, "pc_oat_sbx_"))
	agent := &partner{base: s.ingress, token: tok.AccessToken, http: &http.Client{Timeout: 15 * time.Second}}

	body := map[string]any{
		"externalCaseId": "agent-case-" + randomHex(4), "caseMode": "proceeding", "intakeMode": "claimant_initiated",
		"claimantAcceptanceIdentity": "agent-ops@acme.example",
		"confirmationPolicy":         map[string]any{"mode": "initiator_only"},
		"schedule":                   map[string]any{"profile": "standard"},
		"participants": []map[string]any{
			{"participantId": "p-agent", "side": "claimant", "principalId": "agent:claims", "principalKind": "autonomous_agent",
				"accountId": acct.Data.ID, "authorizationMode": "agent_credential", "initiator": true},
			{"participantId": "p-seller", "side": "respondent", "partnerId": partnerID, "principalId": "org-seller",
				"principalKind": "organization", "authorizationMode": "partner_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 4200, "remedy": "money_obligation", "summary": "The API credits bought were never granted."},
	}
	prepared := agent.do(t, "POST", "/api/filings", "e2e-"+randomHex(8), body)
	require.Equal(t, http.StatusCreated, prepared.status, string(prepared.body))
	d, err := parseDraft(prepared.body)
	require.NoError(t, err)
	statement := ""
	for _, c := range d.Confirmations {
		if c.ParticipantID == "p-agent" {
			statement = c.ConfirmationStatement
		}
	}
	confirmation := map[string]any{"participantId": "p-agent", "draftDigest": d.DraftDigest, "confirmationStatement": statement,
		"actorId": acct.Data.ID, "principalId": "agent:claims", "confirmationMethod": "protocol_act", "confirmationReference": "ref-p-agent"}
	opened := agent.do(t, "POST", "/api/filings/"+d.DraftID+"/confirmations", "e2e-"+randomHex(8), confirmation)
	require.Equal(t, http.StatusCreated, opened.status, string(opened.body))
	id := parseCaseID(opened.body)
	require.NotEmpty(t, id)

	// The cases service learns of the opening from Kafka: the first reads
	// may come before it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, _, err := agent.send(ctx, "GET", "/api/v2/cases/"+id, "", nil)
		if err == nil && r.status == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "the agent's case never answered 200 (last: %v %d %s)", err, r.status, r.body)
	}
	r := agent.do(t, "GET", "/api/v2/cases/"+id, "", nil)
	require.Contains(t, string(r.body), `"accountId":"`+acct.Data.ID+`"`)

	// The operator's partner sees the case it answers for; the agent no
	// case it takes no part in.
	require.Equal(t, http.StatusOK, orch.do(t, "GET", "/api/v2/cases/"+id, "", nil).status)
	elsewhere := agent.do(t, "GET", "/api/v2/cases/"+otherCase, "", nil)
	require.Equal(t, http.StatusNotFound, elsewhere.status, string(elsewhere.body))

	walkAgentThroughMCP(t, s, cc, id, otherCase)
}

// walkAgentThroughMCP has the agent read its case through the MCP server
// (docs/mcp.md), both replicas of which sit behind the edge and nginx: the
// server's 401 names its metadata, which names the authorization server;
// a token for resource <ingress>/mcp gets the Go SDK's client in, and its
// tools, exchanging that token for the API's, read the agent's case and
// not another.
func walkAgentThroughMCP(t *testing.T, s *stack, cc clientcredentials.Config, caseID, otherCase string) {
	t.Helper()
	ctx := context.Background()
	hc := &http.Client{Timeout: 15 * time.Second}
	resp, err := hc.Post(s.ingress+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+s.ingress+`/.well-known/oauth-protected-resource/mcp"`)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getPublic(t, s.ingress+"/.well-known/oauth-protected-resource/mcp", &meta)
	require.Equal(t, s.ingress+"/mcp", meta.Resource)
	require.Equal(t, []string{s.ingress}, meta.AuthorizationServers)

	cc.EndpointParams = url.Values{"resource": {meta.Resource}}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	require.NoError(t, err)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: meta.Resource, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Timeout: 15 * time.Second, Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(tok)}},
	}, nil)
	require.NoError(t, err)
	defer session.Close()
	for _, tc := range []struct {
		caseID, code string
	}{{caseID, ""}, {otherCase, "case_not_found_or_opening"}} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "get_case", Arguments: map[string]any{"caseId": tc.caseID}})
		require.NoError(t, err)
		raw, _ := json.Marshal(res.StructuredContent)
		var p struct{ Code string }
		require.NoError(t, json.Unmarshal(raw, &p), "%s", raw)
		require.Equal(t, tc.code != "", res.IsError, "%s", raw)
		require.Equal(t, tc.code, p.Code, "%s", raw)
		if tc.code == "" {
			require.Contains(t, string(raw), caseID)
		}
	}
}

// getPublic reads a public JSON document through the ingress, checked
// against the OpenAPI document, into out.
func getPublic(t *testing.T, url string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, body := apitest.Do(t, &http.Client{Timeout: 15 * time.Second}, req)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.NoError(t, json.Unmarshal(body, out))
}
