package resources_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/problem"
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
	wait     = 20 * time.Second
)

// world is one platform: a real Redis holding the credentials and the
// case memberships, the test broker, an API behind them and any number of
// MCP replicas, each consuming the case events in a group of its own.
type world struct {
	store   *auth.Store
	api     *httptest.Server
	brokers []string
	events  *kafka.Producer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	brokers := kafkatest.StartBroker(t)
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, ClientID: "cases"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	w := &world{store: store, brokers: brokers, events: producer}
	w.api = httptest.NewServer(caseAPI(t, store))
	t.Cleanup(w.api.Close)
	return w
}

var caseNotFound = problem.Code{Name: "case_not_found_or_opening", Status: http.StatusNotFound, Title: "Case not found"}

// caseAPI stands in for the edge and the services behind it on the routes
// the resources use, with the platform's own checks (libs/auth on the same
// Redis): the token endpoint's exchange (RFC 8693: the MCP server's
// client, a subject token for the MCP audience, a token for the API's with
// the same account, scopes and case), and GET /api/v2/cases/{caseId}, its
// docket and award for an account with a membership of either side.
func caseAPI(t *testing.T, store *auth.Store) http.Handler {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.POST("/oauth/token", func(c *gin.Context) {
		id, secret, ok := c.Request.BasicAuth()
		if !ok || id != "ocl_mcp" || secret != "s" {
			c.JSON(401, gin.H{"error": "invalid_client"})
			return
		}
		subject, err := store.Authenticate(c, c.PostForm("subject_token"))
		if err != nil || subject.Audience != resource || c.PostForm("grant_type") != exchange.GrantType || c.PostForm("resource") != public {
			c.JSON(400, gin.H{"error": "invalid_grant"})
			return
		}
		token, _, err := store.MintAccountToken(c, auth.AccountTokenRequest{
			Tenant: subject.Tenant, Environment: subject.Environment, AccountID: subject.AccountID, ClientID: subject.ClientID,
			Scopes: subject.Scopes, Audience: public, CaseID: subject.CaseID, Lifetime: 5 * time.Minute, NotAfter: subject.ExpiresAt,
		})
		require.NoError(t, err)
		c.JSON(200, gin.H{"access_token": token, "issued_token_type": exchange.AccessTokenType, "token_type": "Bearer", "expires_in": 300})
	})
	member := func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		for _, side := range []auth.Side{auth.Claimant, auth.Respondent} {
			if store.AuthorizeSide(c, cred, "case:"+c.Param("caseId"), side, "") == nil {
				c.Next()
				return
			}
		}
		problem.Write(c, problem.New(caseNotFound, "No such case, or not one you take part in."))
	}
	// GET /api/disputes lists, in the website envelope, the cases of the
	// stand-in's world the account may read (a bound token: its case).
	r.GET("/api/disputes", auth.Middleware(store, auth.AcceptAccountTokens(public)), auth.RequireScope(auth.ScopeCasesRead), func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		listed := []gin.H{}
		for _, id := range []string{"cs_a", "cs_b", "cs_c"} {
			for _, side := range []auth.Side{auth.Claimant, auth.Respondent} {
				if cred.MayTouch("case:"+id) && store.AuthorizeSide(c, cred, "case:"+id, side, "") == nil {
					listed = append(listed, gin.H{"caseId": id, "externalCaseId": "ext-" + id, "status": "open"})
					break
				}
			}
		}
		c.JSON(200, gin.H{"ok": true, "data": gin.H{"cases": listed, "nextCursor": nil}})
	})
	cases := r.Group("/api/v2/cases/:caseId", auth.Middleware(store, auth.AcceptAccountTokens(public)), auth.RequireScope(auth.ScopeCasesRead), member)
	cases.GET("", func(c *gin.Context) {
		c.JSON(200, gin.H{"data": gin.H{"caseId": c.Param("caseId"), "status": "open"}, "requestId": "req_1"})
	})
	cases.GET("/docket", func(c *gin.Context) {
		c.JSON(200, gin.H{"data": gin.H{"events": []any{}, "nextCursor": nil, "limit": c.Query("limit")}, "requestId": "req_2"})
	})
	return r
}

// replica is one MCP server: its hub and the URL of its /mcp.
type replica struct {
	hub *resources.Hub
	url string
}

func (w *world) replica(t *testing.T, group string, cfg resources.Config) replica {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	base, _ := url.Parse(w.api.URL)
	reader := &resources.Reader{
		API:      apiclient.New(base, http.DefaultClient),
		Exchange: exchange.New(exchange.Config{TokenURL: w.api.URL + "/oauth/token", ClientID: "ocl_mcp", ClientSecret: "s", Resource: public}, http.DefaultClient, nil),
		Logger:   logger,
	}
	server, err := tools.NewServer("test", tools.Deps{
		API: reader.API, Exchange: reader.Exchange, Credentials: w.store,
		Meter: metricnoop.NewMeterProvider(), Logger: logger, Resources: reader,
	})
	require.NoError(t, err)
	hub, err := resources.NewHub(cfg, reader, w.store, metricnoop.NewMeterProvider(), logger)
	require.NoError(t, err)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "mcp", Logger: logger})
	require.NoError(t, httpapi.Register(s.Router(), httpapi.Config{
		Resource: resource, MetadataURL: public + httpapi.MetadataPath, AuthorizationServer: public,
	}, httpapi.Deps{Credentials: w.store, Server: server, Subscriptions: hub}))
	ts := httptest.NewServer(s.Router())

	dlq, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: w.brokers, ClientID: "mcp"})
	require.NoError(t, err)
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{Brokers: w.brokers, ClientID: "mcp", GroupID: group, Topic: resources.Topic},
		hub.HandleCaseEvent, dlq, logger, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Add(2)
	go func() { defer running.Done(); _ = consumer.Run(ctx) }()
	go func() { defer running.Done(); _ = hub.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		running.Wait()
		ts.Close()
		_ = dlq.Close()
	})
	return replica{hub: hub, url: ts.URL + httpapi.Path}
}

// member is an account whose agent holds a token for the MCP server and a
// membership of the claimant side of each of cases.
func (w *world) member(t *testing.T, accountID string, cases ...string) string {
	t.Helper()
	for _, id := range cases {
		require.NoError(t, w.store.Grant(context.Background(), auth.Membership{
			Resource: "case:" + id, Side: auth.Claimant, Subject: auth.AccountSubject(accountID), ExpiresAt: time.Now().Add(time.Hour),
		}))
	}
	token, _ := authtest.MintAccountToken(t, w.store, accountID, resource, []auth.Scope{auth.ScopeCasesRead})
	return token
}

// publish writes a case event as the cases service's relay does.
func (w *world) publish(t *testing.T, caseID string, sequence int) {
	t.Helper()
	eventID := fmt.Sprintf("evt_%s_%d", caseID, sequence)
	value, err := json.Marshal(map[string]any{
		"schemaVersion": api.CaseEventEnvelopeSchema, "recipients": []any{},
		"event": map[string]any{"schemaVersion": api.CaseEventSchema, "eventId": eventID, "sequence": sequence, "type": "case.message_posted",
			"occurredAt": "2026-01-02T03:04:05.000Z", "caseId": caseID, "externalCaseId": "ext", "actionRequired": false},
	})
	require.NoError(t, err)
	require.NoError(t, w.events.Publish(context.Background(), kafka.Message{
		Topic: resources.Topic, Key: caseID, EventID: eventID, Schema: api.CaseEventEnvelopeSchema, Value: value,
	}))
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// agent is an MCP client (the SDK's) and the updates it was told.
type agent struct {
	session *mcp.ClientSession
	updates chan string
}

func connect(t *testing.T, endpoint, token string) agent {
	t.Helper()
	updates := make(chan string, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	})
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{token}}, DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return agent{session: session, updates: updates}
}

// subscribe subscribes and waits until the replica holds the subscription.
func (a agent) subscribe(t *testing.T, r replica, caseID string, held int) {
	t.Helper()
	require.NoError(t, a.session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "pcourt://cases/" + caseID}))
	require.Eventually(t, func() bool { return r.hub.Subscribed(caseID) == held }, wait, 10*time.Millisecond)
}

func (a agent) requireUpdate(t *testing.T, uri string) {
	t.Helper()
	select {
	case got := <-a.updates:
		require.Equal(t, uri, got)
	case <-time.After(wait):
		t.Fatalf("no update of %s", uri)
	}
}

func (a agent) requireNoUpdate(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case got := <-a.updates:
		t.Fatalf("an update of %s it was not to be told", got)
	case <-time.After(within):
	}
}

// A case the account takes part in is a resource, read through the API
// with the exchanged token; another's case is the API's own 404 problem,
// as a tool returns it, and no URI but a case's is read at all.
func TestAnAgentReadsItsCaseAndNotAnothers(t *testing.T) {
	w := newWorld(t)
	r := w.replica(t, "mcp-a", resources.DefaultConfig())
	a := connect(t, r.url, w.member(t, "acct_a", "cs_a"))
	w.member(t, "acct_b", "cs_b")

	templates, err := a.session.ListResourceTemplates(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 3)

	read, err := a.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pcourt://cases/cs_a"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	require.JSONEq(t, `{"data":{"caseId":"cs_a","status":"open"},"requestId":"req_1"}`, read.Contents[0].Text)
	docket, err := a.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pcourt://cases/cs_a/docket"})
	require.NoError(t, err)
	require.Contains(t, docket.Contents[0].Text, `"limit":"200"`)

	_, err = a.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pcourt://cases/cs_b"})
	var rpc *jsonrpc.Error
	require.ErrorAs(t, err, &rpc)
	require.Contains(t, rpc.Message, "404 case_not_found_or_opening")
	var p struct{ Code string }
	require.NoError(t, json.Unmarshal(rpc.Data, &p))
	require.Equal(t, "case_not_found_or_opening", p.Code)

	for _, uri := range []string{"pcourt://cases/../accounts", "pcourt://cases/cs_a/", "https://pcourt.test/api/v2/cases/cs_a"} {
		_, err = a.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		require.Error(t, err, uri)
	}
}

// resources/list lists the account's cases, as GET /api/disputes lists
// them to its token: every case it takes part in, a bound token's case
// alone, another account's none.
func TestTheListIsTheAccountsCases(t *testing.T) {
	w := newWorld(t)
	r := w.replica(t, "mcp-a", resources.DefaultConfig())
	uris := func(token string) []string {
		t.Helper()
		listed, err := connect(t, r.url, token).session.ListResources(context.Background(), nil)
		require.NoError(t, err)
		out := []string{}
		for _, res := range listed.Resources {
			out = append(out, res.URI)
		}
		return out
	}
	require.Equal(t, []string{"pcourt://cases/cs_a", "pcourt://cases/cs_b"}, uris(w.member(t, "acct_a", "cs_a", "cs_b")))
	bound, _ := authtest.MintAccountToken(t, w.store, "acct_a", resource, []auth.Scope{auth.ScopeCasesRead},
		func(req *auth.AccountTokenRequest) { req.CaseID = "cs_b" })
	require.Equal(t, []string{"pcourt://cases/cs_b"}, uris(bound))
	require.Empty(t, uris(w.member(t, "acct_other")), "another account's list holds none of acct_a's cases")
}

// A subscriber is told when an event of its case is published; after it
// unsubscribes it is told nothing more.
func TestASubscriberIsToldOfItsCasesEventsUntilItUnsubscribes(t *testing.T) {
	w := newWorld(t)
	r := w.replica(t, "mcp-a", resources.DefaultConfig())
	a := connect(t, r.url, w.member(t, "acct_a", "cs_a"))
	a.subscribe(t, r, "cs_a", 1)

	w.publish(t, "cs_a", 1)
	a.requireUpdate(t, "pcourt://cases/cs_a")

	require.NoError(t, a.session.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: "pcourt://cases/cs_a"}))
	require.Eventually(t, func() bool { return r.hub.Subscribed("cs_a") == 0 }, wait, 10*time.Millisecond)
	w.publish(t, "cs_a", 2)
	a.requireNoUpdate(t, 500*time.Millisecond)
}

// Two replicas share the broker and each consumes every event: the one
// that holds the subscriber's stream tells it, exactly once, and the
// other, whose stream subscribed to another case, tells its own nothing.
func TestTwoReplicasTellExactlyTheSubscribersStream(t *testing.T) {
	w := newWorld(t)
	one := w.replica(t, "mcp-one", resources.DefaultConfig())
	two := w.replica(t, "mcp-two", resources.DefaultConfig())
	a := connect(t, one.url, w.member(t, "acct_a", "cs_a"))
	b := connect(t, two.url, w.member(t, "acct_b", "cs_b"))
	a.subscribe(t, one, "cs_a", 1)
	b.subscribe(t, two, "cs_b", 1)
	require.Zero(t, two.hub.Subscribed("cs_a"))

	w.publish(t, "cs_a", 1)
	a.requireUpdate(t, "pcourt://cases/cs_a")
	w.publish(t, "cs_b", 1)
	b.requireUpdate(t, "pcourt://cases/cs_b")
	a.requireNoUpdate(t, 500*time.Millisecond)
	b.requireNoUpdate(t, 0)
}

// listen opens a subscriptions/listen stream by hand, as any client of
// MCP 2026-07-28 may, and returns its answer as it comes.
func listen(t *testing.T, endpoint, token string, uris ...string) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
		"notifications": map[string]any{"resourceSubscriptions": uris},
	}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// Another account's subscription to a case it takes no part in is
// refused with the API's 404 problem, and the replica holds nothing for
// it: an event of that case tells that account nothing.
func TestAnotherAccountsSubscriptionIsRefused(t *testing.T) {
	w := newWorld(t)
	r := w.replica(t, "mcp-a", resources.DefaultConfig())
	w.member(t, "acct_a", "cs_a")
	outsider := w.member(t, "acct_b", "cs_b")

	resp := listen(t, r.url, outsider, "pcourt://cases/cs_a")
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(answer), "case_not_found_or_opening")
	require.Zero(t, r.hub.Subscribed("cs_a"))

	b := connect(t, r.url, outsider)
	require.NoError(t, b.session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "pcourt://cases/cs_a"}))
	w.publish(t, "cs_a", 1)
	b.requireNoUpdate(t, 500*time.Millisecond)
	require.Zero(t, r.hub.Subscribed("cs_a"))
}

// An account holds at most MaxPerAccount subscriptions on a replica, and
// the replica at most MaxStreams streams.
func TestSubscriptionsAreBounded(t *testing.T) {
	w := newWorld(t)
	cfg := resources.DefaultConfig()
	cfg.MaxPerAccount, cfg.MaxStreams = 1, 2
	r := w.replica(t, "mcp-a", cfg)
	token := w.member(t, "acct_a", "cs_a", "cs_b")
	a := connect(t, r.url, token)
	a.subscribe(t, r, "cs_a", 1)

	answer, err := io.ReadAll(listen(t, r.url, token, "pcourt://cases/cs_b").Body)
	require.NoError(t, err)
	require.Contains(t, string(answer), "rate_limited")
	require.Zero(t, r.hub.Subscribed("cs_b"))

	other := w.member(t, "acct_c", "cs_c")
	second := listen(t, r.url, other, "pcourt://cases/cs_c")
	require.Equal(t, http.StatusOK, second.StatusCode)
	require.Eventually(t, func() bool { return r.hub.Subscribed("cs_c") == 1 }, wait, 10*time.Millisecond)
	third := listen(t, r.url, other, "pcourt://cases/cs_c")
	require.Equal(t, http.StatusServiceUnavailable, third.StatusCode)
}

// A subscriber that never reads its stream holds up nobody: the events of
// its case keep coming, and another subscriber is told of its own.
func TestASlowSubscriberDoesNotHoldUpOthers(t *testing.T) {
	w := newWorld(t)
	r := w.replica(t, "mcp-a", resources.DefaultConfig())
	slow := listen(t, r.url, w.member(t, "acct_s", "cs_s"), "pcourt://cases/cs_s")
	require.Equal(t, http.StatusOK, slow.StatusCode)
	require.Eventually(t, func() bool { return r.hub.Subscribed("cs_s") == 1 }, wait, 10*time.Millisecond)
	a := connect(t, r.url, w.member(t, "acct_a", "cs_a"))
	a.subscribe(t, r, "cs_a", 1)

	for i := 1; i <= 50; i++ {
		w.publish(t, "cs_s", i)
	}
	w.publish(t, "cs_a", 1)
	a.requireUpdate(t, "pcourt://cases/cs_a")

	// The slow stream was told too, when it reads at last: its updates
	// were coalesced, never queued without bound.
	line, err := bufio.NewReader(slow.Body).ReadString('\n')
	require.NoError(t, err)
	require.NotEmpty(t, line)
}
