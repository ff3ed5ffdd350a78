package idempotency_test

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/redistest"
)

type harness struct {
	url      string
	store    *auth.Store
	token    string
	runs     atomic.Int64
	gate     chan struct{} // requests sent with hold wait for it to close
	failWith atomic.Int64  // status the handler answers with, when set
}

var cardDeclined = problem.Code{Name: "card_declined", Status: 402, Title: "Card declined"}

func newHarness(t *testing.T, cfg idempotency.Config) *harness {
	t.Helper()
	return newHarnessOn(t, cfg, redistest.NewClient(t))
}

// newHarnessOn is newHarness over a Redis of the test's choosing.
func newHarnessOn(t *testing.T, cfg idempotency.Config, rdb redis.UniversalClient) *harness {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &harness{store: auth.NewStore(rdb, auth.DefaultStoreConfig()), gate: make(chan struct{})}
	h.token, _ = authtest.Mint(t, h.store, auth.RolePlatformOrchestrator)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: logger})
	journal := newJournal(t, rdb, cfg, logger)
	handler := func(c *gin.Context) {
		h.runs.Add(1)
		if c.GetHeader("X-Test-Hold") != "" {
			<-h.gate
		}
		if code := h.failWith.Load(); code != 0 {
			if code == 402 {
				_ = c.Error(problem.New(cardDeclined, "declined"))
				return
			}
			c.Status(int(code))
			return
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Header("Location", "/payments/"+hex.EncodeToString(b[:]))
		c.JSON(http.StatusCreated, gin.H{"paymentId": hex.EncodeToString(b[:])})
	}
	s.Router().POST("/payments", auth.Middleware(h.store), journal.Middleware("createPayment"), handler)
	s.Router().POST("/account-payments", auth.Middleware(h.store, auth.AcceptAccountTokens("https://api.test")), journal.Middleware("createPayment"), handler)
	s.Router().POST("/v2/payments", auth.Middleware(h.store), journal.Middleware("createPayment"), handler)
	s.Router().POST("/refunds", auth.Middleware(h.store), journal.Middleware("createRefund"), handler)
	s.Router().POST("/fees/:feeId/checkout", auth.Middleware(h.store), journal.Middleware("checkout"), handler)
	s.Router().POST("/v2/fees/:id/checkout", auth.Middleware(h.store), journal.Middleware("checkout"), handler)
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

type answer struct {
	status   int
	body     string
	location string
	replayed bool
	code     string
}

func (h *harness) post(t *testing.T, path, token, key, body string) answer {
	t.Helper()
	return h.send(t, path, token, key, body, false)
}

// send posts; with hold the handler waits for h.gate before answering.
func (h *harness) send(t *testing.T, path, token, key, body string, hold bool) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	if hold {
		req.Header.Set("X-Test-Hold", "1")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location"), replayed: resp.Header.Get(idempotency.ReplayedHeader) == "true"}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), problem.ContentType) {
		a.code = gjsonCode(a.body)
	}
	return a
}

func gjsonCode(body string) string {
	const marker = `"code":"`
	i := strings.Index(body, marker)
	if i < 0 {
		return ""
	}
	rest := body[i+len(marker):]
	return rest[:strings.IndexByte(rest, '"')]
}

func TestSixtyFourConcurrentRequestsRunTheHandlerOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		h := newHarnessOn(t, idempotency.DefaultConfig("pc:test"), rdb)
		const n = 64
		answers := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = h.send(t, "/payments", h.token, "key-contended-1", `{"amount":100}`, true)
			}()
		}
		// Hold the winner until every loser has been answered 409 or is waiting;
		// then let it finish.
		require.Eventually(t, func() bool { return h.runs.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
		close(h.gate)
		wg.Wait()

		require.EqualValues(t, 1, h.runs.Load(), "the handler ran more than once")
		var created, inFlight int
		var firstBody string
		for _, a := range answers {
			switch a.status {
			case http.StatusCreated:
				created++
				if firstBody == "" {
					firstBody = a.body
				}
				require.Equal(t, firstBody, a.body, "every 201 carries the one stored response")
			case http.StatusConflict:
				inFlight++
				require.Equal(t, "idempotency_in_flight", a.code)
			default:
				t.Fatalf("unexpected answer %d %s", a.status, a.body)
			}
		}
		require.Equal(t, n, created+inFlight)
		require.GreaterOrEqual(t, created, 1)

		replay := h.post(t, "/payments", h.token, "key-contended-1", `{"amount":100}`)
		require.Equal(t, http.StatusCreated, replay.status)
		require.True(t, replay.replayed)
		require.Equal(t, firstBody, replay.body)
		require.NotEmpty(t, replay.location, "stored headers are replayed")
		require.EqualValues(t, 1, h.runs.Load())

		reused := h.post(t, "/payments", h.token, "key-contended-1", `{"amount":101}`)
		require.Equal(t, http.StatusUnprocessableEntity, reused.status)
		require.Equal(t, "idempotency_key_reused", reused.code)
		require.EqualValues(t, 1, h.runs.Load())
	})
}

func TestFingerprint(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	first := h.post(t, "/payments", h.token, "key-fingerprint", `{"amount":100,"currency":"USD"}`)
	require.Equal(t, http.StatusCreated, first.status)

	tests := []struct {
		name, path, body string
		status           int
		code             string
	}{
		{"same object re-serialised", "/payments", "{ \"currency\": \"USD\",\n \"amount\": 100 }", 201, ""},
		{"the same number spelled 100.0", "/payments", `{"amount":100.0,"currency":"USD"}`, 201, ""},
		{"the same number spelled 1e2", "/payments", `{"currency":"USD","amount":1e2}`, 201, ""},
		{"alias route of the same operation", "/v2/payments", `{"amount":100,"currency":"USD"}`, 201, ""},
		{"a different number", "/payments", `{"amount":100.5,"currency":"USD"}`, 422, "idempotency_key_reused"},
		{"different value", "/payments", `{"amount":100,"currency":"EUR"}`, 422, "idempotency_key_reused"},
		{"different operation", "/refunds", `{"amount":100,"currency":"USD"}`, 422, "idempotency_key_reused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.post(t, tc.path, h.token, "key-fingerprint", tc.body)
			require.Equal(t, tc.status, a.status, a.body)
			require.Equal(t, tc.code, a.code)
			if tc.status == 201 {
				require.Equal(t, first.body, a.body)
			}
		})
	}
	require.EqualValues(t, 1, h.runs.Load())
}

func TestKeysAreScopedByCredential(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	other, _ := authtest.Mint(t, h.store, auth.RolePlatformOrchestrator)
	a := h.post(t, "/payments", h.token, "key-shared-by-accident", `{}`)
	b := h.post(t, "/payments", other, "key-shared-by-accident", `{}`)
	require.Equal(t, 201, a.status)
	require.Equal(t, 201, b.status)
	require.False(t, b.replayed)
	require.NotEqual(t, a.body, b.body)
	require.EqualValues(t, 2, h.runs.Load())
}

// An account's keys are the account's, not one token's: its tokens live
// minutes, and the retry of an act under the account's next token (a
// client's refreshed token, the MCP server's next exchange) meets the
// stored answer. Another account's same key is its own act.
func TestAnAccountsKeysOutliveItsTokens(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	first, _ := authtest.MintAccountToken(t, h.store, "acct_1", "https://api.test", []auth.Scope{auth.ScopeCasesAct})
	next, _ := authtest.MintAccountToken(t, h.store, "acct_1", "https://api.test", []auth.Scope{auth.ScopeCasesAct})
	other, _ := authtest.MintAccountToken(t, h.store, "acct_2", "https://api.test", []auth.Scope{auth.ScopeCasesAct})
	a := h.post(t, "/account-payments", first, "key-of-one-act", `{}`)
	b := h.post(t, "/account-payments", next, "key-of-one-act", `{}`)
	c := h.post(t, "/account-payments", other, "key-of-one-act", `{}`)
	require.Equal(t, 201, a.status)
	require.Equal(t, 201, b.status)
	require.True(t, b.replayed, "the account's next token replays the act")
	require.Equal(t, a.body, b.body)
	require.Equal(t, 201, c.status)
	require.False(t, c.replayed)
	require.EqualValues(t, 2, h.runs.Load())
}

func TestBadKeys(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	for _, tc := range []struct{ key, code string }{
		{"", "idempotency_key_missing"},
		{"short", "idempotency_key_invalid"},
		{strings.Repeat("k", 201), "idempotency_key_invalid"},
		{"has space inside", "idempotency_key_invalid"},
	} {
		a := h.post(t, "/payments", h.token, tc.key, `{}`)
		require.Equal(t, 400, a.status)
		require.Equal(t, tc.code, a.code)
	}
	require.Equal(t, 201, h.post(t, "/payments", h.token, strings.Repeat("k", 200), `{}`).status)
	require.Equal(t, 201, h.post(t, "/payments", h.token, "k-8-char", `{}`).status)
	require.EqualValues(t, 2, h.runs.Load())
}

func TestFinalAndTransientOutcomes(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))

	// A refusal is a final answer: replayed, not re-run.
	h.failWith.Store(402)
	first := h.post(t, "/payments", h.token, "key-declined", `{}`)
	require.Equal(t, 402, first.status)
	require.Equal(t, "card_declined", first.code)
	h.failWith.Store(0)
	again := h.post(t, "/payments", h.token, "key-declined", `{}`)
	require.Equal(t, 402, again.status)
	require.True(t, again.replayed)
	require.EqualValues(t, 1, h.runs.Load())

	// A server error is transient: the key is released and the retry runs.
	h.failWith.Store(503)
	require.Equal(t, 503, h.post(t, "/payments", h.token, "key-transient", `{}`).status)
	h.failWith.Store(0)
	retry := h.post(t, "/payments", h.token, "key-transient", `{}`)
	require.Equal(t, 201, retry.status)
	require.False(t, retry.replayed)
	require.EqualValues(t, 3, h.runs.Load())
}

// A replica that dies mid-request never answers; once its lease lapses the
// retry runs, and the dead attempt can no longer overwrite the new outcome.
func TestCrashedRequestBecomesRetryableAfterLease(t *testing.T) {
	cfg := idempotency.DefaultConfig("pc:test")
	cfg.Lease = 300 * time.Millisecond
	h := newHarness(t, cfg)

	stuck := make(chan answer, 1)
	go func() { stuck <- h.send(t, "/payments", h.token, "key-crashed", `{}`, true) }()
	require.Eventually(t, func() bool { return h.runs.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, 409, h.post(t, "/payments", h.token, "key-crashed", `{}`).status)

	var retry answer
	require.Eventually(t, func() bool {
		retry = h.post(t, "/payments", h.token, "key-crashed", `{}`)
		return retry.status != 409
	}, 5*time.Second, 50*time.Millisecond)
	require.Equal(t, 201, retry.status)
	require.False(t, retry.replayed)

	close(h.gate) // the "dead" attempt wakes up and answers its own caller
	<-stuck
	final := h.post(t, "/payments", h.token, "key-crashed", `{}`)
	require.True(t, final.replayed)
	require.Equal(t, retry.body, final.body, "the lapsed attempt must not overwrite the stored outcome")
}

func TestJournalBodyKeepsSecretsOutOfTheReplay(t *testing.T) {
	rdb := redistest.NewClient(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	journal := newJournal(t, rdb, idempotency.DefaultConfig("pc:test"), logger)
	var expired atomic.Bool
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: logger})
	s.Router().POST("/cases", auth.Middleware(store),
		journal.Middleware("openCase", idempotency.RecheckBeforeReplay(func(*gin.Context) error {
			if expired.Load() {
				return problem.New(problem.Forbidden, "the deadline passed")
			}
			return nil
		})),
		func(c *gin.Context) {
			idempotency.JournalBody(c, []byte(`{"caseId":"cs_1"}`))
			c.JSON(http.StatusCreated, gin.H{"caseId": "cs_1", "showOnce": gin.H{"token": "secret-shown-once"}})
		})
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	h := &harness{url: ts.URL}

	first := h.post(t, "/cases", token, "key-show-once", `{}`)
	require.Equal(t, 201, first.status)
	require.Contains(t, first.body, "secret-shown-once")
	keys, err := rdb.Keys(t.Context(), "pc:test:idem:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	stored, err := rdb.HGet(t.Context(), keys[0], "body").Result()
	require.NoError(t, err)
	require.NotContains(t, stored, "secret-shown-once", "the secret never reaches Redis")

	replay := h.post(t, "/cases", token, "key-show-once", `{}`)
	require.Equal(t, 201, replay.status)
	require.True(t, replay.replayed)
	require.JSONEq(t, `{"caseId":"cs_1"}`, replay.body)

	expired.Store(true)
	refused := h.post(t, "/cases", token, "key-show-once", `{}`)
	require.Equal(t, 403, refused.status, "a lapsed deadline refuses the replay")
}

// Two routes of one operation render the same stored result in their own
// view: the journal keeps a view-neutral body, and the replay is rendered
// for the route it arrives on, headers included.
func TestRenderOnReplayAnswersInTheViewOfTheRoute(t *testing.T) {
	rdb := redistest.NewClient(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	journal := newJournal(t, rdb, idempotency.DefaultConfig("pc:test"), logger)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: logger})
	for _, view := range []string{"old", "new"} {
		render := func(_ *gin.Context, status int, header http.Header, stored []byte) ([]byte, error) {
			if status != http.StatusCreated {
				return stored, nil
			}
			header.Set("Location", "/"+view+"/"+string(stored))
			return []byte(`{"` + view + `Id":"` + string(stored) + `"}`), nil
		}
		s.Router().POST("/"+view, auth.Middleware(store), journal.Middleware("create", idempotency.RenderOnReplay(render)), func(c *gin.Context) {
			idempotency.JournalBody(c, []byte("thing_1"))
			c.Header("Location", "/"+view+"/thing_1")
			c.JSON(http.StatusCreated, gin.H{view + "Id": "thing_1"})
		})
	}
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	h := &harness{url: ts.URL}

	first := h.post(t, "/old", token, "key-render-1", `{}`)
	require.Equal(t, 201, first.status)
	require.JSONEq(t, `{"oldId":"thing_1"}`, first.body)
	for _, view := range []string{"old", "new"} {
		replay := h.post(t, "/"+view, token, "key-render-1", `{}`)
		require.Equal(t, 201, replay.status)
		require.True(t, replay.replayed)
		require.JSONEq(t, `{"`+view+`Id":"thing_1"}`, replay.body, "the replay speaks the route's view")
		require.Equal(t, "/"+view+"/thing_1", replay.location, "one Location, the route's")
	}
}

// newJournal is idempotency.NewJournal for a configuration the test knows is valid.
func newJournal(t testing.TB, rdb redis.UniversalClient, cfg idempotency.Config, logger *slog.Logger) *idempotency.Journal {
	t.Helper()
	j, err := idempotency.NewJournal(rdb, cfg, logger)
	require.NoError(t, err)
	return j
}

func TestNewJournalRefusesAnUnusableConfig(t *testing.T) {
	rdb := redistest.NewClient(t)
	for _, cfg := range []idempotency.Config{
		{},
		{Prefix: "pc:test", Retention: time.Second, Lease: time.Millisecond},
		{Prefix: "pc:test", Retention: time.Hour, Lease: 2 * time.Hour},
	} {
		_, err := idempotency.NewJournal(rdb, cfg, slog.New(slog.DiscardHandler))
		require.Error(t, err, "%+v", cfg)
	}
}

// The same key and body sent to another resource is another request, not a
// retry: a checkout of fee B must never replay fee A's answer. Aliases of
// the operation that name the same resource remain one request.
func TestTheSameKeyOnAnotherResourceIsRefused(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	key := "key-checkout-fee-a"
	first := h.post(t, "/fees/fee_a/checkout", h.token, key, `{}`)
	require.Equal(t, http.StatusCreated, first.status)

	alias := h.post(t, "/v2/fees/fee_a/checkout", h.token, key, `{}`)
	require.True(t, alias.replayed, "the alias of the same fee is the same request")
	require.Equal(t, first.body, alias.body)

	other := h.post(t, "/fees/fee_b/checkout", h.token, key, `{}`)
	require.Equal(t, http.StatusUnprocessableEntity, other.status)
	require.Equal(t, "idempotency_key_reused", other.code)
	require.Equal(t, int64(1), h.runs.Load(), "fee B's checkout never ran under fee A's key")
}
