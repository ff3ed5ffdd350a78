package respond_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// stack is the cases service's public surface as main wires it (the API
// and the hosted page over one flow) on a real redis-server and real HTTP.
type stack struct {
	url    string
	rdb    *redis.Client
	cases  *store.Cases
	opened *events.Opened
	// files is the exhibits' object store (a directory), exhibits the
	// evidence use cases over it, as main wires them.
	files    *objectstore.Dir
	exhibits *evidenceflow.Service
	// credentials holds the credentials, memberships and people's account
	// sessions (libs/auth), as the accounts service starts them.
	credentials *auth.Store
	// claimant is a platform orchestrator of the filing partner, which
	// reads the case and its docket through the API.
	claimant string
	// client follows no redirect and keeps no cookie: the tests see every
	// answer and say which cookie each request carries.
	client *http.Client

	mu sync.Mutex
	// seen is every request as it reached the server: its request line
	// and headers, which is what an access log or a proxy could keep.
	seen []*http.Request
}

// requests returns the requests the server has received so far.
func (s *stack) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newStack(t testing.TB, edit ...func(*respond.Config)) *stack {
	t.Helper()
	rdb := redistest.NewClient(t)
	logger := discard()
	acfg := auth.DefaultStoreConfig()
	acfg.PerCredential = ratelimit.Off
	credentials := auth.NewStore(rdb, acfg)
	s := &stack{rdb: rdb, cases: newCases(t, rdb)}
	s.opened = events.NewOpened(caseflow.New(s.cases, nil), logger)
	s.claimant, _ = authtest.Mint(t, credentials, auth.RolePlatformOrchestrator)
	journal, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:cases"), logger)
	require.NoError(t, err)

	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "cases", Logger: logger, Mapper: httpapi.Problem})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Clone(context.Background()))
		s.mu.Unlock()
		srv.Router().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	flow := caseflow.New(s.cases, nil)
	files, err := objectstore.NewDir(t.TempDir())
	require.NoError(t, err)
	s.files = files
	s.exhibits = evidenceflow.New(flow, s.cases, files, t.TempDir(), nil)
	// The API's public base is the page's: the website routes' same-origin
	// check hears the site's own pages.
	base, err := x402.ParsePublicBase(ts.URL)
	require.NoError(t, err)
	httpapi.Register(srv.Router(), httpapi.Deps{Credentials: credentials, Cases: s.cases, Flow: flow, Journal: journal, Logger: logger, Evidence: s.exhibits, PublicBase: base})
	cfg := respond.DefaultConfig()
	cfg.PublicBaseURL = ts.URL // the page's own origin, as the ingress's address is in production
	cfg.SessionTTL = time.Hour
	for _, e := range edit {
		e(&cfg)
	}
	s.credentials = credentials
	require.NoError(t, respond.Register(srv.Router(), cfg, respond.Deps{Cases: s.cases, Flow: flow, Logger: logger, Exhibits: s.exhibits, Credentials: credentials}))
	s.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return s
}

var caseCounter atomic.Int64

// opened is a case as filings opens it, with the login token shown once
// in showOnce.respondentLoginPath.
type opened struct {
	id    string
	login string
}

// open applies a new case's case-opened fact as the consumer does: the
// claimant confirmed, the respondent (partner-r, no immutable agent) did
// not and is to join.
func (s *stack) open(t testing.TB, edits ...func(payload map[string]any)) opened {
	t.Helper()
	o := opened{id: fmt.Sprintf("cs_respond_%d_%d", time.Now().UnixNano()%1e6, caseCounter.Add(1)), login: auth.NewToken("pc_login_")}
	at := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	payload := map[string]any{
		"schemaVersion": "filings-case-opened-v2",
		"eventId":       "case-opened:" + o.id, "openedAt": at,
		"caseId": o.id, "externalCaseId": "ext-" + o.id,
		"tenant": "tenant-test", "environment": "sandbox", "partnerId": "partner-test",
		"draftId": "draft-" + o.id, "draftDigest": strings.Repeat("2", 64),
		"rules": map[string]any{"version": "pcourt-rules-2026-11", "hash": strings.Repeat("1", 64)},
		"procedure": map[string]any{
			"profile": "standard", "answerRequired": true, "evidenceRounds": 1,
			"rebuttalRounds": 0, "filingsPerSidePerStage": 1, "recordConfirmationRequired": true,
		},
		"participants": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "partnerId": "partner-test", "principalId": "org-acme", "principalKind": "organization",
				"authorizationMode": "partner_credential", "initiator": true, "joined": true},
			// A hosted respondent: no partner acts for it; the page's join binds it.
			{"participantId": "p-respondent", "side": "respondent", "partnerId": "partner-test", "hosted": true, "principalId": "org-beta", "principalKind": "organization",
				"authorizationMode": "partner_credential", "initiator": false, "joined": false},
		},
		"confirmations": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "required": true, "status": "confirmed", "confirmedAt": at},
			{"participantId": "p-respondent", "side": "respondent", "required": false, "status": "not_required"},
		},
		"fee": map[string]any{"feeId": "fee-" + o.id, "currency": "USD", "amountMinor": 2500, "tier": "single_arbiter", "collection": "invoice_after_opening", "status": "quoted"},
		"capabilityHashes": map[string]any{
			"respondent_invite": auth.HashToken(auth.NewToken("pc_inv_")), "respondent_login": auth.HashToken(o.login),
		},
	}
	for _, edit := range edits {
		edit(payload)
	}
	addRecipients(payload)
	value, err := json.Marshal(payload)
	require.NoError(t, err)
	apitest.Event(t, api.CaseOpenedSchema+".schema.json", value)
	require.NoError(t, s.opened.Handle(context.Background(), kafka.Message{
		Topic: api.CaseOpenedTopic, Key: o.id, EventID: "case-opened:" + o.id, Schema: api.CaseOpenedSchema, Value: value,
	}))
	return o
}

// addRecipients names each side's partners as filings does: every
// participant's partnerId (for a hosted respondent, the partner that
// delivers its invitation), each once.
func addRecipients(payload map[string]any) {
	recipients := map[string][]map[string]any{"claimant": {}, "respondent": {}}
	seen := map[string]bool{}
	for _, p := range payload["participants"].([]map[string]any) {
		side, partner := p["side"].(string), p["partnerId"].(string)
		if seen[side+"/"+partner] {
			continue
		}
		seen[side+"/"+partner] = true
		recipients[side] = append(recipients[side], map[string]any{"tenant": payload["tenant"], "environment": payload["environment"], "partnerId": partner})
	}
	payload["recipients"] = recipients
}

// reply is one answer of the page.
type reply struct {
	status int
	header http.Header
	body   string
	// refusal is the code a refusal page carries in data-refusal, or a
	// problem's code.
	refusal string
	// problem is a refusal answered as application/problem+json.
	problem problem.Body
}

var refusalCode = regexp.MustCompile(`data-refusal="([a-z_]+)"`)

func (s *stack) send(t testing.TB, req *http.Request) reply {
	t.Helper()
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if m := refusalCode.FindStringSubmatch(r.body); m != nil {
		r.refusal = m[1]
	}
	if resp.Header.Get("Content-Type") == "application/problem+json" {
		// A refusal the page's module asked for in JSON.
		require.NoError(t, json.Unmarshal(b, &r.problem), r.body)
		r.refusal = r.problem.Code
	}
	return r
}

// sameOrigin are the headers Chromium sends with a form post of the page
// itself: under Referrer-Policy no-referrer its Origin is "null", and
// Sec-Fetch-Site says where the post came from.
var sameOrigin = []string{"Origin", "null", "Sec-Fetch-Site", "same-origin"}

// post sends a form. session is the session cookie's value ("" for none);
// headers are name, value pairs.
func (s *stack) post(t testing.TB, path, session string, form url.Values, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: session})
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.send(t, req)
}

// get reads a page with the session cookie session ("" for none).
func (s *stack) get(t testing.TB, path, session string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	if session != "" {
		req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: session})
	}
	return s.send(t, req)
}

// confirmed is the form the confirmation page's "Sign in as …" button
// posts: the token and the button's name and value.
func confirmed(login string) url.Values {
	return url.Values{"login": {login}, respond.ConfirmField: {respond.ConfirmValue}}
}

// signIn exchanges the case's login token, as the confirmation page's
// button does, and returns the session cookie's value.
func (s *stack) signIn(t testing.TB, o opened) string {
	t.Helper()
	r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	ck := sessionCookie(t, r)
	require.NotNil(t, ck, "the exchange sets the session cookie")
	return ck.Value
}

func sessionCookie(t testing.TB, r reply) *http.Cookie {
	t.Helper()
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if ck.Name == respond.CookieName {
			return ck
		}
	}
	return nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token the case page gives the session.
func (s *stack) csrf(t testing.TB, o opened, session string) string {
	t.Helper()
	r := s.get(t, "/respond/"+o.id, session)
	require.Equal(t, http.StatusOK, r.status, r.body)
	m := csrfField.FindStringSubmatch(r.body)
	require.NotNil(t, m, "the case page carries a CSRF token in its forms: %s", r.body)
	return m[1]
}

// docket reads the case's event types through the API, as the claimant's
// partner does.
func (s *stack) docket(t testing.TB, id string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+"/api/cases/"+id+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.claimant)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var page struct {
		Data struct {
			Events []struct{ Type string }
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	var types []string
	for _, e := range page.Data.Events {
		types = append(types, e.Type)
	}
	return types
}

// unchanged runs act and requires every Redis key to be as it was.
func (s *stack) unchanged(t testing.TB, act func()) {
	t.Helper()
	redistest.Unchanged(t, s.rdb, nil, act)
}

// newCases is the store of cases as the service runs it by default: 16
// shards, no durable-write confirmation.
func newCases(tb testing.TB, rdb redis.UniversalClient) *store.Cases {
	tb.Helper()
	cases, err := store.NewCases(rdb, outbox.DefaultShards, nil)
	require.NoError(tb, err)
	return cases
}
