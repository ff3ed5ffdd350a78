package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// walkAgentsToAnAwardThroughMCP is the MCP acceptance walk (docs/mcp.md),
// through the ingress: two autonomous agents, each registered and attested
// by the stack's partner (their operator), each with its own OAuth client,
// take a case from its draft to a verified award through the MCP server's
// tools alone. Each agent's MCP client (the official Go SDK's) starts with
// no token, is refused (401, the challenge naming the server's protected
// resource metadata), finds the authorization server from the metadata
// and gets a token for the MCP server by client credentials. The tribunal
// (the stack's reference adjudicator and the reviewer of credentials.env)
// decides as in the demo; the reviewer's acts are the API's, as no account
// has tribunal powers. otherCase, a case the agents take no part in, stays
// invisible to them.
//
// public is the stack's public URL (the edge's, which the services are
// configured with); the agents' HTTP client dials it at the ingress, as a
// public name resolves to a cluster's ingress, so every byte of the walk
// crosses nginx.
func walkAgentsToAnAwardThroughMCP(t *testing.T, ingress, public, dir, otherCase string) {
	t.Helper()
	orchestrator := credentialsEnv(t, dir, "PCOURT_ORCHESTRATOR_TOKEN")
	reviewer := credentialsEnv(t, dir, "PCOURT_REVIEWER_TOKEN")
	api := &apiCaller{t: t, base: ingress, hc: &http.Client{Timeout: 20 * time.Second}}
	hc := throughIngress(t, public, ingress)

	buyer := registerVerifiedAgent(t, api, orchestrator, "Buyer's claims agent", "cases:read", "cases:act", "readiness:buy")
	seller := registerVerifiedAgent(t, api, orchestrator, "Seller's support agent", "cases:read", "cases:act")
	claimant := connectMCP(t, hc, public, buyer)
	respondent := connectMCP(t, hc, public, seller)

	// Before it files, the buyer's agent buys a readiness report through
	// the MCP server over x402: the unpaid call's error is the payment
	// requirements; its wallet (the development payer the local
	// facilitator funds) signs one, and the paid call returns the report
	// with the settlement in _meta. The seller's agent, without
	// readiness:buy, is refused before anything is asked of the API.
	buyReadinessThroughMCP(t, claimant, respondent)

	// The draft: both sides are the agents' accounts; each confirms the
	// exact digest; the last confirmation opens the case.
	var draft struct{ Data draftView }
	claimant.call("prepare_draft", map[string]any{"idempotencyKey": newKey(), "body": map[string]any{
		"externalCaseId":     "mcp-" + newKey()[:8],
		"caseMode":           "proceeding",
		"intakeMode":         "bilateral_api",
		"confirmationPolicy": map[string]any{"mode": "all_participants"},
		"procedure":          map[string]any{"profile": "custom_bounded", "answerRequired": true, "evidenceRounds": 1, "rebuttalRounds": 0, "filingsPerSidePerStage": 1},
		"participants": []map[string]any{
			{"participantId": "buyer", "side": "claimant", "principalId": "agent:buyer", "principalKind": "autonomous_agent",
				"accountId": buyer.accountID, "authorizationMode": "agent_credential", "initiator": true},
			{"participantId": "seller", "side": "respondent", "principalId": "agent:seller", "principalKind": "autonomous_agent",
				"accountId": seller.accountID, "authorizationMode": "agent_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 4200, "remedy": "money_obligation", "summary": "The API credits the buyer's agent paid for were never granted."},
	}}, &draft)
	require.Equal(t, 1, buyer.handler.authorizations, "the first request was refused and the client authorized once, from the challenge")

	confirm := func(session *agentSession, a agentAccount, participant, principal string) map[string]any {
		var seen struct{ Data draftView }
		session.call("get_draft", map[string]any{"draftId": draft.Data.DraftID}, &seen)
		require.Equal(t, draft.Data.DraftDigest, seen.Data.DraftDigest)
		body := seen.Data.confirmation(participant, a.accountID, principal)
		require.NotEmpty(t, body["confirmationStatement"], "the draft shows %s its statement", participant)
		var out map[string]any
		session.call("confirm_draft", map[string]any{"draftId": draft.Data.DraftID, "idempotencyKey": newKey(), "body": body}, &out)
		return out
	}
	confirm(claimant, buyer, "buyer", "agent:buyer")
	opened := confirm(respondent, seller, "seller", "agent:seller")
	caseID, _ := opened["data"].(map[string]any)["caseId"].(string)
	require.NotEmpty(t, caseID, "the last confirmation opened the case: %v", opened)

	// The opening reaches the cases service as an event: until then the
	// case is case_not_found_or_opening.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, _ := respondent.try("get_case", map[string]any{"caseId": caseID})
		if code == "" {
			break
		}
		require.Equal(t, "case_not_found_or_opening", code)
		require.True(t, time.Now().Before(deadline), "case %s never opened", caseID)
	}

	// The procedure, each side through its own tools.
	respondent.call("file_answer", map[string]any{"caseId": caseID, "idempotencyKey": newKey(),
		"body": map[string]any{"text": "The credits were granted on 2026-11-02; the ledger entry is attached."}}, nil)
	claimant.call("file_submission", map[string]any{"caseId": caseID, "idempotencyKey": newKey(),
		"body": map[string]any{"text": "Invoice 2026-118 was paid on 2026-10-30; the balance never changed."}}, nil)
	respondent.call("file_submission", map[string]any{"caseId": caseID, "idempotencyKey": newKey(),
		"body": map[string]any{"text": "Ledger: 4200 credits granted 2026-11-02T09:14Z."}}, nil)
	for _, s := range []*agentSession{claimant, respondent} {
		s.call("confirm_record", map[string]any{"caseId": caseID, "idempotencyKey": newKey(), "body": map[string]any{}}, nil)
	}

	// The tribunal: the reference adjudicator proposes; the reviewer
	// agrees, attests and opens the pre-award review (the API's tribunal
	// routes, which no account token reaches).
	waitForDecisionStage(t, claimant, caseID, "review")
	site := "/api/disputes/" + caseID
	api.do("POST", site+"/reviewer-opinion", reviewer, map[string]any{"opinion": "agree"}, 200)
	api.do("POST", site+"/reviewer-attestation", reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}, 200)
	api.do("POST", site+"/pre-award-review", reviewer, map[string]any{}, 200)
	var review map[string]any
	claimant.call("get_pre_award_review", map[string]any{"caseId": caseID}, &review)
	for _, s := range []*agentSession{claimant, respondent} {
		s.call("answer_pre_award_review", map[string]any{"caseId": caseID, "idempotencyKey": newKey(),
			"body": map[string]any{"clericalErrors": []string{}}}, nil)
	}
	var signed struct {
		Data struct {
			Decision  string `json:"decision"`
			AwardHash string `json:"awardHash"`
		} `json:"data"`
	}
	api.decode(api.do("POST", site+"/signoff", reviewer, map[string]any{}, 200), &signed)
	require.Equal(t, "awarded", signed.Data.Decision)

	// Each side reads the award and verifies it offline through the tool.
	for _, s := range []*agentSession{claimant, respondent} {
		var view struct {
			Data struct {
				AwardHash string `json:"awardHash"`
			} `json:"data"`
		}
		s.call("get_award", map[string]any{"caseId": caseID}, &view)
		require.Equal(t, signed.Data.AwardHash, view.Data.AwardHash)
		var verified struct {
			Verified  bool   `json:"verified"`
			CaseID    string `json:"caseId"`
			AwardHash string `json:"awardHash"`
		}
		s.call("verify_award", map[string]any{"caseId": caseID}, &verified)
		require.True(t, verified.Verified)
		require.Equal(t, caseID, verified.CaseID)
		require.Equal(t, signed.Data.AwardHash, verified.AwardHash)
	}

	// What the agents cannot do: see a case they take no part in, open
	// the pre-award review or sign off (tribunal powers), or use the MCP
	// server's token on the API itself (it is for another audience).
	code, _ := claimant.try("get_case", map[string]any{"caseId": otherCase})
	require.Equal(t, "case_not_found_or_opening", code, "another case is invisible to the agent")
	token, err := buyer.handler.source.Token()
	require.NoError(t, err)
	refused := api.do("GET", "/api/v2/cases/"+caseID, token.AccessToken, nil, 401)
	require.Contains(t, string(refused), "invalid_credential", "a token for the MCP server is refused by the API")
}

// buyReadinessThroughMCP buys the example readiness report through the
// buyer's MCP session, and finds the seller's refused for want of
// readiness:buy.
func buyReadinessThroughMCP(t *testing.T, buyer, seller *agentSession) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "readiness-request.json"))
	require.NoError(t, err)
	var request map[string]any
	require.NoError(t, json.Unmarshal(raw, &request))
	args := map[string]any{"body": request}

	code, _ := seller.try("buy_readiness_report", args)
	require.Equal(t, "forbidden", code, "no readiness:buy, no report")

	res, err := buyer.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "buy_readiness_report", Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "the unpaid call is refused with the price")
	challengeJSON, _ := json.Marshal(res.StructuredContent)
	var challenge x402.PaymentRequired
	require.NoError(t, json.Unmarshal(challengeJSON, &challenge), "%s", challengeJSON)
	require.NotEmpty(t, challenge.Accepts)
	payment, err := x402.NewExactPayment(localfacilitator.DevAccounts()[0].Key, challenge.Accepts[0], time.Now(), rand.Reader)
	require.NoError(t, err)
	payment.Resource = &challenge.Resource

	paid, err := buyer.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "buy_readiness_report", Arguments: args,
		Meta: mcp.Meta{"x402/payment": payment}})
	require.NoError(t, err)
	report, _ := json.Marshal(paid.StructuredContent)
	require.False(t, paid.IsError, "the paid call: %s", report)
	require.Contains(t, string(report), `"readyToFile"`)
	settlement, _ := json.Marshal(paid.Meta["x402/payment-response"])
	var settled x402.SettleResponse
	require.NoError(t, json.Unmarshal(settlement, &settled), "%s", settlement)
	require.True(t, settled.Success, "%s", settlement)
	require.Equal(t, localfacilitator.DevAccounts()[0].Address.Hex(), settled.Payer)
}

// agentAccount is a verified agent account with one OAuth client.
type agentAccount struct {
	accountID, clientID, clientSecret string
	handler                           *agentOAuth
}

// registerVerifiedAgent registers an agent account as its operator, adds
// its client with scopes, and attests it.
func registerVerifiedAgent(t *testing.T, api *apiCaller, operator, name string, scopes ...string) agentAccount {
	t.Helper()
	var acct struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	api.decode(api.doKey("POST", "/api/accounts", operator, newKey(), map[string]any{"kind": "autonomous_agent", "displayName": name}, 201), &acct)
	var client struct {
		Data struct {
			ClientID     string `json:"clientId"`
			ClientSecret string `json:"clientSecret"`
		} `json:"data"`
	}
	api.decode(api.doKey("POST", "/api/accounts/"+acct.Data.ID+"/clients", operator, newKey(),
		map[string]any{"scopes": scopes}, 201), &client)
	api.do("POST", "/api/accounts/"+acct.Data.ID+"/attestation", operator, map[string]any{
		"model": "support-model-3", "provider": "Acme Labs", "contact": "ops@acme.example", "acceptsResponsibility": true}, 200)
	return agentAccount{accountID: acct.Data.ID, clientID: client.Data.ClientID, clientSecret: client.Data.ClientSecret, handler: &agentOAuth{scopes: scopes}}
}

// agentOAuth is the agent's OAuth handler for the SDK's transport: on a
// 401 it reads the protected resource metadata the challenge names (RFC
// 9728), the authorization server's metadata (RFC 8414), and gets a token
// by client credentials naming the MCP server as the resource (RFC 8707),
// as the MCP authorization specification requires of clients. (The SDK's
// own client-credentials handler, extauth, sends no resource parameter,
// so its tokens would be the API's, which the MCP server refuses.)
type agentOAuth struct {
	clientID, clientSecret string
	scopes                 []string // what it asks: all its client holds
	hc                     *http.Client
	source                 oauth2.TokenSource
	authorizations         int
}

func (h *agentOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return h.source, nil }

func (h *agentOAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	h.authorizations++
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return err
	}
	metadataURL := ""
	for _, c := range challenges {
		if c.Scheme == "bearer" {
			metadataURL = c.Params["resource_metadata"]
		}
	}
	if metadataURL == "" {
		return fmt.Errorf("the %d challenge names no resource_metadata: %q", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}
	resource := req.URL.String()
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, metadataURL, resource, h.hc)
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.hc)
	if err != nil {
		return err
	}
	if asm == nil {
		return errors.New("the authorization server publishes no metadata")
	}
	cc := clientcredentials.Config{ClientID: h.clientID, ClientSecret: h.clientSecret, TokenURL: asm.TokenEndpoint,
		Scopes: h.scopes, EndpointParams: url.Values{"resource": {prm.Resource}}, AuthStyle: oauth2.AuthStyleInHeader}
	h.source = cc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, h.hc))
	_, err = h.source.Token()
	return err
}

// agentSession is one agent's MCP session.
type agentSession struct {
	t       *testing.T
	session *mcp.ClientSession
}

func connectMCP(t *testing.T, hc *http.Client, public string, a agentAccount) *agentSession {
	t.Helper()
	a.handler.clientID, a.handler.clientSecret, a.handler.hc = a.clientID, a.clientSecret, hc
	client := mcp.NewClient(&mcp.Implementation{Name: "devstack-agent", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: public + "/mcp", HTTPClient: hc, OAuthHandler: a.handler, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return &agentSession{t: t, session: session}
}

// call calls a tool that must succeed and decodes its structured result
// into out (nil: not decoded).
func (s *agentSession) call(tool string, args map[string]any, out any) {
	s.t.Helper()
	res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(s.t, err, tool)
	raw, _ := json.Marshal(res.StructuredContent)
	require.False(s.t, res.IsError, "%s: %s", tool, raw)
	if out != nil {
		require.NoError(s.t, json.Unmarshal(raw, out), "%s: %s", tool, raw)
	}
}

// try calls a tool and returns the problem code of its error ("" when it
// succeeded) and its structured result.
func (s *agentSession) try(tool string, args map[string]any) (string, []byte) {
	s.t.Helper()
	res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(s.t, err, tool)
	raw, _ := json.Marshal(res.StructuredContent)
	if !res.IsError {
		return "", raw
	}
	var p struct{ Code string }
	require.NoError(s.t, json.Unmarshal(raw, &p), "%s: %s", tool, raw)
	return p.Code, raw
}

// waitForDecisionStage polls get_decision_status until stage.
func waitForDecisionStage(t *testing.T, s *agentSession, caseID, stage string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var status struct {
			Data struct {
				Stage string `json:"stage"`
			} `json:"data"`
		}
		s.call("get_decision_status", map[string]any{"caseId": caseID}, &status)
		if status.Data.Stage == stage {
			return
		}
		require.NotEqual(t, "human_attention", status.Data.Stage)
		require.True(t, time.Now().Before(deadline), "case %s stayed in stage %s", caseID, status.Data.Stage)
		time.Sleep(500 * time.Millisecond)
	}
}

// throughIngress is an HTTP client that reaches public's host at the
// ingress: as a public name resolves to a cluster's ingress.
func throughIngress(t *testing.T, public, ingress string) *http.Client {
	t.Helper()
	pu, err := url.Parse(public)
	require.NoError(t, err)
	iu, err := url.Parse(ingress)
	require.NoError(t, err)
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == pu.Host {
			addr = iu.Host
		}
		return dialer.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// apiCaller calls the API with a bearer credential, requiring a status.
type apiCaller struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (a *apiCaller) do(method, path, token string, body any, want int) []byte {
	a.t.Helper()
	key := ""
	if method == http.MethodPost {
		key = newKey()
	}
	return a.doKey(method, path, token, key, body, want)
}

func (a *apiCaller) doKey(method, path, token, key string, body any, want int) []byte {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(a.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	require.NoError(a.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.hc.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	require.Equal(a.t, want, resp.StatusCode, "%s %s: %s", method, path, raw)
	return raw
}

func (a *apiCaller) decode(raw []byte, out any) {
	a.t.Helper()
	require.NoError(a.t, json.Unmarshal(raw, out), string(raw))
}

func newKey() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "mcp-" + strings.ToLower(hex.EncodeToString(b))
}
