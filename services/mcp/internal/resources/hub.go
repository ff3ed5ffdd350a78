package resources

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pcourt/pcourt/libs/auth"
)

// Config bounds what one replica holds for its subscribers.
type Config struct {
	// MaxStreams is how many listen streams the replica holds at once;
	// past it a listen is 503 unavailable (another replica may take it).
	// Each is an HTTP request in flight, so it stays well below the HTTP
	// server's in-flight bound.
	MaxStreams int
	// MaxPerAccount is how many subscriptions one account holds on the
	// replica at once, across its streams.
	MaxPerAccount int
	// StreamLifetime is the longest a listen stream is held: then it ends
	// with its result and the client listens again, and the API checks
	// the case again. A stream never outlives the caller's token either.
	StreamLifetime time.Duration
	// WriteTimeout is how long one notification may take to be written
	// to its stream: a client that does not read within it is dropped.
	WriteTimeout time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{MaxStreams: 256, MaxPerAccount: 20, StreamLifetime: 9 * time.Minute, WriteTimeout: 5 * time.Second}
}

// Validate reports the first unusable bound.
func (c Config) Validate() error {
	switch {
	case c.MaxStreams <= 0:
		return errors.New("subscriptions: max streams must be positive")
	case c.MaxPerAccount <= 0:
		return errors.New("subscriptions: max subscriptions per account must be positive")
	case c.StreamLifetime <= 0:
		return errors.New("subscriptions: stream lifetime must be positive")
	case c.WriteTimeout <= 0:
		return errors.New("subscriptions: write timeout must be positive")
	}
	return nil
}

// Hub holds the replica's listen streams and tells each the case events
// of the cases it subscribed to.
type Hub struct {
	cfg         Config
	reader      *Reader
	credentials *auth.Store
	logger      *slog.Logger
	metrics     metrics

	mu         sync.Mutex
	closed     bool
	streams    map[*stream]struct{}
	byCase     map[string]map[*stream]struct{}
	perAccount map[string]int
}

// NewHub returns a hub that checks subscriptions through reader and the
// callers' tokens against credentials.
func NewHub(cfg Config, reader *Reader, credentials *auth.Store, meter metric.MeterProvider, logger *slog.Logger) (*Hub, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(meter)
	if err != nil {
		return nil, err
	}
	return &Hub{
		cfg: cfg, reader: reader, credentials: credentials, logger: logger, metrics: m,
		streams: map[*stream]struct{}{}, byCase: map[string]map[*stream]struct{}{}, perAccount: map[string]int{},
	}, nil
}

// Run holds the hub until ctx ends, then ends every stream, so the HTTP
// server's drain is not held by streams that would never finish.
func (h *Hub) Run(ctx context.Context) error {
	<-ctx.Done()
	h.mu.Lock()
	h.closed = true
	streams := make([]*stream, 0, len(h.streams))
	for s := range h.streams {
		streams = append(streams, s)
	}
	h.mu.Unlock()
	for _, s := range streams {
		s.end(endShutdown)
	}
	return nil
}

// Publish tells every stream subscribed to the case that it changed. It
// never waits on a stream: each keeps at most one pending notification
// per subscribed URI (an update says "read it again", so two pending are
// one) and writes it on its own goroutine.
func (h *Hub) Publish(caseID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.byCase[caseID] {
		s.mark(caseID)
		n++
	}
	return n
}

// open registers a new stream, or reports false when the replica holds
// as many as it may or is shutting down.
func (h *Hub) open(s *stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.streams) >= h.cfg.MaxStreams {
		return false
	}
	h.streams[s] = struct{}{}
	h.metrics.streams.Add(context.Background(), 1)
	return true
}

// close forgets a stream and every subscription it held.
func (h *Hub) close(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.streams[s]; !ok {
		return
	}
	delete(h.streams, s)
	h.metrics.streams.Add(context.Background(), -1)
	for _, uri := range s.subscribedURIs() {
		h.unsubscribeLocked(s, uri)
	}
}

// errAccountFull is a subscription past the account's bound.
var errAccountFull = errors.New("the account holds as many subscriptions as it may")

// subscribe records that s wants t's updates, within the account's bound.
// Subscribing again to a URI the stream holds is a no-op.
func (h *Hub) subscribe(s *stream, t target) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.streams[s]; !ok {
		return errors.New("the stream has ended")
	}
	if s.holds(t.uri()) {
		return nil
	}
	if h.perAccount[s.account] >= h.cfg.MaxPerAccount {
		return errAccountFull
	}
	h.perAccount[s.account]++
	s.add(t)
	if h.byCase[t.caseID] == nil {
		h.byCase[t.caseID] = map[*stream]struct{}{}
	}
	h.byCase[t.caseID][s] = struct{}{}
	h.metrics.subscriptions.Add(context.Background(), 1)
	return nil
}

// unsubscribe forgets one subscription of s; forgetting one it does not
// hold is a no-op.
func (h *Hub) unsubscribe(s *stream, uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsubscribeLocked(s, uri)
}

func (h *Hub) unsubscribeLocked(s *stream, uri string) {
	caseID, ok := s.remove(uri)
	if !ok {
		return
	}
	if h.perAccount[s.account]--; h.perAccount[s.account] <= 0 {
		delete(h.perAccount, s.account)
	}
	if !s.subscribedTo(caseID) {
		delete(h.byCase[caseID], s)
		if len(h.byCase[caseID]) == 0 {
			delete(h.byCase, caseID)
		}
	}
	h.metrics.subscriptions.Add(context.Background(), -1)
}

// Why a stream ended, the reason attribute of pcourt_mcp_streams_ended_total.
const (
	endClosed   = "closed"   // the client cancelled or disconnected
	endLifetime = "lifetime" // it lasted StreamLifetime or its token expired
	endRevoked  = "revoked"  // the caller's token was revoked
	endSlow     = "slow"     // a notification was not read within WriteTimeout
	endShutdown = "shutdown" // the replica is stopping
)

// metrics are the hub's instruments, beside pcourt_mcp_tool_calls_total.
type metrics struct {
	streams       metric.Int64UpDownCounter
	subscriptions metric.Int64UpDownCounter
	refusals      metric.Int64Counter
	notifications metric.Int64Counter
	ended         metric.Int64Counter
	events        metric.Int64Counter
}

const instrumentationName = "github.com/pcourt/pcourt/services/mcp/internal/resources"

func newMetrics(mp metric.MeterProvider) (metrics, error) {
	m := mp.Meter(instrumentationName)
	var ms metrics
	var errs [6]error
	ms.streams, errs[0] = m.Int64UpDownCounter("pcourt.mcp.streams",
		metric.WithUnit("{stream}"), metric.WithDescription("Listen streams this replica holds open."))
	ms.subscriptions, errs[1] = m.Int64UpDownCounter("pcourt.mcp.subscriptions",
		metric.WithUnit("{subscription}"), metric.WithDescription("Resource subscriptions this replica holds."))
	ms.refusals, errs[2] = m.Int64Counter("pcourt.mcp.subscription.refusals",
		metric.WithUnit("{refusal}"), metric.WithDescription("Subscriptions and listen streams refused, by problem code."))
	ms.notifications, errs[3] = m.Int64Counter("pcourt.mcp.resource.updates",
		metric.WithUnit("{notification}"), metric.WithDescription("notifications/resources/updated written to listen streams."))
	ms.ended, errs[4] = m.Int64Counter("pcourt.mcp.streams.ended",
		metric.WithUnit("{stream}"), metric.WithDescription("Listen streams ended, by reason (closed, lifetime, revoked, slow, shutdown)."))
	ms.events, errs[5] = m.Int64Counter("pcourt.mcp.case.events",
		metric.WithUnit("{event}"), metric.WithDescription("Case events consumed, by outcome (subscribed: a stream of this replica wanted it; unsubscribed; invalid)."))
	return ms, errors.Join(errs[:]...)
}

func (m metrics) refused(ctx context.Context, code string) {
	m.refusals.Add(ctx, 1, metric.WithAttributes(attribute.String("code", code)))
}

// Subscribed is how many streams of this replica hold a subscription to
// the case: what a case event for it would tell.
func (h *Hub) Subscribed(caseID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byCase[caseID])
}
