package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

// The load is bounded in rate, count and time, and goes only to nginx's
// published loopback port.
const (
	// loadRate is operations per second: 7 in 10 read a case (one
	// request), 2 open a case (prepare and confirm: two), 1 pays for a
	// readiness report (the challenge and the paid request: two), about
	// 1.3 requests per operation.
	loadRate = 50
	// maxOps bounds one phase's operations whatever its duration.
	maxOps = 20000
	// maxPhase bounds one phase's duration.
	maxPhase = 4 * time.Minute
	// writeRetryFor is how long a partner retries a write whose answer it
	// did not get, with the same Idempotency-Key (or the same payment): an
	// interrupted first attempt holds its key's lease for 30 s.
	writeRetryFor = 75 * time.Second
	maxInFlight   = 64
)

// ledgerState is what the load acknowledged, across phases: the invariants
// are checked against it after each fault.
type ledgerState struct {
	mu sync.Mutex
	// opened is every acknowledged opening: draft id → case id.
	opened map[string]string
	// openedAt is when each case's opening was acknowledged.
	openedAt map[string]time.Time
	// attempted is every draft a confirmation was sent for.
	attempted map[string]bool
	// paid is every acknowledged paid report's settlement transaction.
	paid map[string]bool
	// unacknowledgedPayments are payments never answered 200 within
	// writeRetryFor: each may or may not have settled.
	unacknowledgedPayments int
}

func newLedgerState() *ledgerState {
	return &ledgerState{opened: map[string]string{}, openedAt: map[string]time.Time{}, attempted: map[string]bool{}, paid: map[string]bool{}}
}

// loadGen sends a steady mix of partner calls through nginx.
type loadGen struct {
	s       *stack
	state   *ledgerState
	readers []*partner
	openers []*partner
	checker *partner // reads for the invariants, not counted in the load
	payers  []*x402client.Client
	report  []byte
	cases   []string // readable cases the reads rotate over

	sent, failed atomic.Int64
	mu           sync.Mutex
	failures     []failure
}

// failure is one request that did not get its expected answer.
type failure struct {
	at  time.Time
	op  string
	why string
}

func newLoadGen(t *testing.T, s *stack, state *ledgerState) *loadGen {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "readiness-request.json"))
	require.NoError(t, err)
	g := &loadGen{s: s, state: state, report: body}
	// Several credentials, so no one reaches its per-credential limit
	// (50/s): the load is many partners' integrations, not one.
	for range 2 {
		g.readers = append(g.readers, s.mint(t, auth.RolePlatformOrchestrator, ""))
		g.openers = append(g.openers, s.mint(t, auth.RolePlatformOrchestrator, ""))
	}
	g.checker = s.mint(t, auth.RolePlatformOrchestrator, "")
	// The public development accounts the facilitator funded, all but the
	// payee; each stays far below the per-payer cap (120 a minute).
	for i, acct := range localfacilitator.DevAccounts() {
		if acct.Address.Hex() == s.payTo {
			continue
		}
		c, err := x402client.New(x402client.Config{Key: localfacilitator.DevAccounts()[i].Key, HTTP: &http.Client{Timeout: 15 * time.Second}})
		require.NoError(t, err)
		g.payers = append(g.payers, c)
	}
	// The cases the reads rotate over, opened and readable before any load.
	ctx := context.Background()
	for range 3 {
		draft, id, err := g.openCase(ctx)
		require.NoError(t, err)
		require.NoError(t, g.waitReadable(ctx, id, 60*time.Second), "case %s of draft %s", id, draft)
		g.cases = append(g.cases, id)
	}
	g.sent.Store(0)
	g.failed.Store(0)
	g.failures = nil
	return g
}

// phase is one load run's figures.
type phase struct {
	name     string
	sent     int64
	failed   int64
	duration time.Duration
	faults   []string
	failures []failure // the same, as recorded
	restarts []string  // containers that exited by themselves and were restarted
}

func (p phase) String() string {
	s := fmt.Sprintf("%s: %d requests sent, %d failed, %s", p.name, p.sent, p.failed, p.duration.Round(100*time.Millisecond))
	if len(p.restarts) > 0 {
		s += "; exited by themselves and restarted so far: " + strings.Join(p.restarts, ", ")
	}
	return s
}

// run sends the load while fault runs, and a little before and after it,
// then waits for every operation (writes retry until acknowledged) and
// returns the figures. The load stops at maxOps or maxPhase at the latest.
func (g *loadGen) run(t *testing.T, name string, fault func()) phase {
	t.Helper()
	g.sent.Store(0)
	g.failed.Store(0)
	g.mu.Lock()
	g.failures = nil
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), maxPhase)
	defer cancel()
	begun := time.Now()
	stop := make(chan struct{})
	var ops sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	generator := make(chan struct{})
	go func() {
		defer close(generator)
		tick := time.NewTicker(time.Second / loadRate)
		defer tick.Stop()
		for i := 0; i < maxOps; i++ {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case slots <- struct{}{}:
			default:
				// Every slot busy: the system is slower than the load;
				// skip rather than queue (the rate stays bounded).
				continue
			}
			ops.Add(1)
			go func() {
				defer ops.Done()
				defer func() { <-slots }()
				g.op(ctx, i)
			}()
		}
	}()
	warm := time.NewTimer(3 * time.Second) // steady load before the fault
	<-warm.C
	fault()
	cool := time.NewTimer(3 * time.Second) // and after it
	<-cool.C
	close(stop)
	<-generator
	ops.Wait()
	p := phase{name: name, sent: g.sent.Load(), failed: g.failed.Load(), duration: time.Since(begun)}
	g.mu.Lock()
	for _, f := range g.failures {
		p.failures = append(p.failures, f)
		p.faults = append(p.faults, fmt.Sprintf("%s +%s %s: %s", f.at.Format("15:04:05.000"), f.at.Sub(begun).Round(time.Millisecond), f.op, f.why))
	}
	g.mu.Unlock()
	t.Logf("%s", p)
	return p
}

func (g *loadGen) op(ctx context.Context, i int) {
	switch i % 10 {
	case 0:
		_ = g.payReport(ctx, i)
	case 1, 2:
		_, _, _ = g.openCase(ctx)
	default:
		g.readCase(ctx, i)
	}
}

func (g *loadGen) fail(op, why string) {
	g.failed.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.failures) < 200 {
		g.failures = append(g.failures, failure{at: time.Now(), op: op, why: why})
	}
}

func (g *loadGen) readCase(ctx context.Context, i int) {
	id := g.cases[i%len(g.cases)]
	path := []string{"/api/cases/", "/api/v2/cases/", "/api/disputes/"}[i%3] + id
	g.sent.Add(1)
	r, _, err := g.readers[i%len(g.readers)].send(ctx, "GET", path, "", nil)
	switch {
	case err != nil:
		g.fail("GET "+path, err.Error())
	case r.status != http.StatusOK:
		g.fail("GET "+path, fmt.Sprintf("%d %s", r.status, truncate(r.body)))
	}
}

// write sends one mutation until it is answered want, retrying with the
// same Idempotency-Key after a transport error or a 5xx, 409 in flight or
// 429, as a partner's client does; every failed attempt is counted.
func (g *loadGen) write(ctx context.Context, p *partner, path string, body any, want int) (reply, error) {
	key := "load-" + randomHex(12)
	deadline := time.Now().Add(writeRetryFor)
	for {
		g.sent.Add(1)
		r, _, err := p.send(ctx, "POST", path, key, body)
		if err == nil && r.status == want {
			return r, nil
		}
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = fmt.Sprintf("%d %s", r.status, truncate(r.body))
		}
		g.fail("POST "+path, why)
		retryable := err != nil || r.status >= 500 || r.status == http.StatusTooManyRequests ||
			(r.status == http.StatusConflict && strings.Contains(string(r.body), "idempotency_in_flight"))
		if !retryable || time.Now().After(deadline) || ctx.Err() != nil {
			return r, fmt.Errorf("POST %s: %s", path, why)
		}
		pause := time.NewTimer(250 * time.Millisecond)
		select {
		case <-pause.C:
		case <-ctx.Done():
		}
	}
}

// openCase prepares an initiator-only draft and confirms it, which opens
// its case; it records the acknowledged opening.
func (g *loadGen) openCase(ctx context.Context) (draftID, caseID string, err error) {
	p := g.openers[int(time.Now().UnixNano()/1000)%len(g.openers)]
	r, err := g.write(ctx, p, "/api/v2/case-drafts", initiatorOnlyDraft("load-"+randomHex(6)), http.StatusCreated)
	if err != nil {
		return "", "", err
	}
	d, err := parseDraft(r.body)
	if err != nil {
		return "", "", err
	}
	g.state.mu.Lock()
	g.state.attempted[d.DraftID] = true
	g.state.mu.Unlock()
	r, err = g.write(ctx, p, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", d.confirmation(p.cred.PublicID), http.StatusCreated)
	if err != nil {
		return d.DraftID, "", err
	}
	id := parseCaseID(r.body)
	if id == "" {
		return d.DraftID, "", fmt.Errorf("confirmation of %s answered 201 without a case id: %s", d.DraftID, r.body)
	}
	g.state.mu.Lock()
	defer g.state.mu.Unlock()
	if prev, ok := g.state.opened[d.DraftID]; ok && prev != id {
		return d.DraftID, id, fmt.Errorf("draft %s opened twice: %s and %s", d.DraftID, prev, id)
	}
	g.state.opened[d.DraftID] = id
	g.state.openedAt[id] = time.Now()
	return d.DraftID, id, nil
}

// payReport pays for one readiness report with a signed payment and,
// when the paid request gets no answer or a 5xx, sends the very same
// payment again (the service replays its stored answer; a payment is never
// signed twice).
func (g *loadGen) payReport(ctx context.Context, i int) error {
	payer := g.payers[i/10%len(g.payers)]
	req := func() *http.Request {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.s.ingress+"/api/x402/dispute-readiness", nil)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	g.sent.Add(2) // the challenge and the paid request
	res, err := payer.Pay(ctx, req(), g.report)
	deadline := time.Now().Add(writeRetryFor)
	for {
		if err == nil && res.Response.StatusCode == http.StatusOK && res.Settlement != nil && res.Settlement.Success {
			g.state.mu.Lock()
			g.state.paid[res.Settlement.Transaction] = true
			g.state.mu.Unlock()
			return nil
		}
		why := "no answer"
		switch {
		case err != nil:
			why = err.Error()
		case res != nil && res.Response != nil:
			why = fmt.Sprintf("%d %s", res.Response.StatusCode, truncate(res.Body))
		}
		g.fail("POST /api/x402/dispute-readiness", why)
		if res == nil || !res.Paid {
			// Not paid yet (the challenge failed): nothing to settle; a
			// new operation pays afresh.
			return errors.New(why)
		}
		var rejected *x402client.RejectedError
		if errors.As(err, &rejected) { // refused: the payment is not taken
			g.state.mu.Lock()
			g.state.unacknowledgedPayments++
			g.state.mu.Unlock()
			return err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			g.state.mu.Lock()
			g.state.unacknowledgedPayments++
			g.state.mu.Unlock()
			return errors.New(why)
		}
		pause := time.NewTimer(250 * time.Millisecond)
		select {
		case <-pause.C:
		case <-ctx.Done():
		}
		g.sent.Add(1)
		payment := res.Payment
		res, err = payer.Retry(ctx, req(), g.report, payment)
		if res == nil {
			res = &x402client.Result{Paid: true, Payment: payment}
		}
	}
}

func (g *loadGen) waitReadable(ctx context.Context, id string, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		r, err := g.check(ctx, "/api/v2/cases/"+id)
		if err == nil && r.status == http.StatusOK {
			return nil
		}
		last = fmt.Sprint(err)
		if err == nil {
			last = fmt.Sprintf("%d %s", r.status, truncate(r.body))
		}
		time.Sleep(200 * time.Millisecond) // polling, bounded by the deadline
	}
	return fmt.Errorf("case %s not readable within %s: %s", id, within, last)
}

// requireInvariants checks what the load acknowledged so far: every
// acknowledged opening readable with exactly one opening in its docket, no
// draft's case opened twice and no case beyond the drafts confirmed, and
// the facilitator's ledger holding exactly one settlement per
// acknowledged paid report.
func (g *loadGen) requireInvariants(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	g.state.mu.Lock()
	opened := make(map[string]string, len(g.state.opened))
	for d, c := range g.state.opened {
		opened[d] = c
	}
	attempted := len(g.state.attempted)
	paid := len(g.state.paid)
	unacked := g.state.unacknowledgedPayments
	g.state.mu.Unlock()

	// One deadline for all: the cases service applies openings from Kafka,
	// so the last ones may still be on their way.
	var lost []string
	deadline := time.Now().Add(90 * time.Second)
	for draft, id := range opened {
		if err := g.waitReadable(ctx, id, max(time.Until(deadline), time.Second)); err != nil {
			lost = append(lost, fmt.Sprintf("draft %s: %v", draft, err))
			continue
		}
		r, err := g.check(ctx, "/api/cases/"+id+"/events")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.status, "docket of %s: %s", id, r.body)
		require.Equal(t, 1, strings.Count(string(r.body), `"type":"opened"`), "case %s: the docket must hold exactly one opening: %s", id, r.body)
	}
	require.Empty(t, lost, "%d of %d acknowledged case openings not readable", len(lost), len(opened))

	// Every case in Redis belongs to a draft the load (or its set-up)
	// confirmed: a second case for a draft would be one more.
	rdb := g.s.redisClient()
	cases := map[string]bool{}
	iter := rdb.Scan(ctx, 0, "pc:cases:*:case:*", 1000).Iterator()
	for iter.Next(ctx) {
		rest := iter.Val()[strings.Index(iter.Val(), ":case:")+len(":case:"):]
		if !strings.Contains(rest, ":") {
			cases[rest] = true
		}
	}
	require.NoError(t, iter.Err())
	require.LessOrEqual(t, len(cases), attempted, "more cases in Redis than drafts confirmed")
	for _, id := range opened {
		require.True(t, cases[id], "acknowledged case %s is not in Redis", id)
	}

	// One settlement per acknowledged paid report, no more: a payment
	// retried after a lost answer is replayed, never settled again.
	ledger := localfacilitator.NewLedger(rdb)
	settled := map[string]int{}
	total := 0
	for _, asset := range x402.KnownUSDC() {
		list, err := ledger.Settlements(ctx, asset.Network, asset.Address.Hex())
		require.NoError(t, err)
		for _, st := range list {
			if strings.EqualFold(st.To.Hex(), g.s.payTo) {
				settled[st.Transaction]++
				total++
			}
		}
	}
	g.state.mu.Lock()
	for tx := range g.state.paid {
		require.Equal(t, 1, settled[tx], "acknowledged payment %s settled %d times", tx, settled[tx])
	}
	g.state.mu.Unlock()
	require.Zero(t, unacked, "payments never acknowledged within %s", writeRetryFor)
	require.Equal(t, paid, total, "settlements in the ledger must equal the acknowledged paid reports")
	t.Logf("invariants hold: %d acknowledged openings all readable, each opened once (%d cases in Redis, %d drafts confirmed); %d paid reports, %d settlements", len(opened), len(cases), attempted, paid, total)
}

// check reads path with the checker's own credential, outside the load,
// waiting as told when its per-credential limit answers 429.
func (g *loadGen) check(ctx context.Context, path string) (reply, error) {
	for {
		r, _, err := g.checker.send(ctx, "GET", path, "", nil)
		if err != nil || r.status != http.StatusTooManyRequests {
			return r, err
		}
		wait, _ := strconv.Atoi(r.header.Get("Retry-After"))
		pause(time.Duration(max(wait, 1)) * time.Second)
	}
}

func truncate(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// sortedFaults is a phase's failures, for the log.
func sortedFaults(p phase) string {
	f := append([]string(nil), p.faults...)
	sort.Strings(f)
	return strings.Join(f, "\n")
}
