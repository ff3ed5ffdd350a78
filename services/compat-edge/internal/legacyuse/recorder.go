// Package legacyuse records, per credential and earlier route, the first
// and last use and a count, without costing the request path a Redis round
// trip: a request hands a Hit to a bounded buffer (dropping it, counted,
// when full), and one worker folds hits together and writes them in
// batches.
//
// A hit carries the SHA-256 of the request's bearer token, never the
// token. The worker resolves it to the credential's public id through the
// credential store's cached lookup by hash (libs/auth), so the request
// path never waits for a credential read and the ledger names credentials
// the way administrators and notices know them. A request without a
// bearer (a website session) is recorded as store.Anonymous; one whose
// bearer is unknown or revoked is not recorded at all: its owner refuses
// it, so no legacy use happened, and junk tokens cannot grow the ledger.
package legacyuse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// Hit is one request an owner served on an earlier route.
type Hit struct {
	// TokenHash is the hex SHA-256 of the bearer token; "" without one.
	TokenHash string
	// Route is the inventory pattern.
	Route string
	At    time.Time
	// RequestID is the edge's id of the request, kept as a sample.
	RequestID string
}

// ErrUnknownCredential is what Identify returns for a hash no active
// credential has.
var ErrUnknownCredential = errors.New("no active credential")

// Config sizes the recorder.
type Config struct {
	// Buffer is how many hits wait for the worker; past it hits are
	// dropped and counted, never waited for.
	Buffer int
	// FlushInterval is how often folded hits are written.
	FlushInterval time.Duration
	// MaxPending bounds the distinct (credential, route) pairs held while
	// Redis cannot be written; new pairs past it are dropped and counted.
	MaxPending int
}

// DefaultConfig holds a second of heavy alias traffic and writes once a
// second.
func DefaultConfig() Config {
	return Config{Buffer: 8192, FlushInterval: time.Second, MaxPending: 10000}
}

// Validate reports an unusable size.
func (c Config) Validate() error {
	if c.Buffer <= 0 || c.MaxPending <= 0 || c.FlushInterval <= 0 {
		return fmt.Errorf("legacy use: buffer (%d), max pending (%d) and flush interval (%s) must be positive", c.Buffer, c.MaxPending, c.FlushInterval)
	}
	return nil
}

// Recorder is the buffer and its worker.
type Recorder struct {
	cfg      Config
	hits     chan Hit
	dropped  atomic.Int64
	identify func(ctx context.Context, tokenHash string) (string, error)
	write    func(ctx context.Context, uses []store.Use) error
	logger   *slog.Logger
}

// New returns a recorder. identify maps a token hash to a credential's
// public id (ErrUnknownCredential when none); write stores folded uses.
func New(cfg Config, identify func(context.Context, string) (string, error), write func(context.Context, []store.Use) error, logger *slog.Logger) *Recorder {
	return &Recorder{cfg: cfg, hits: make(chan Hit, cfg.Buffer), identify: identify, write: write, logger: logger}
}

// Record hands a hit to the worker without waiting.
func (r *Recorder) Record(h Hit) {
	select {
	case r.hits <- h:
	default:
		r.dropped.Add(1)
	}
}

// Dropped is how many hits were dropped since start.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

type key struct{ hash, route string }

type folded struct {
	first, last time.Time
	count       int64
	sample      string          // the request id of the latest hit
	hours       map[int64]int64 // hits by Unix hour
}

// Run folds and writes hits until ctx ends, then writes what it holds
// (within five seconds) and returns. It never fails: a write that fails
// is logged and retried at the next flush.
func (r *Recorder) Run(ctx context.Context) error {
	pending := map[key]*folded{}
	tick := time.NewTicker(r.cfg.FlushInterval)
	defer tick.Stop()
	var reported int64
	for {
		select {
		case h := <-r.hits:
			r.fold(pending, h)
		case <-tick.C:
			r.flush(ctx, pending)
			if d := r.Dropped(); d != reported {
				r.logger.Warn("legacy use dropped", "dropped_total", d)
				reported = d
			}
		case <-ctx.Done():
			for drained := false; !drained; {
				select {
				case h := <-r.hits:
					r.fold(pending, h)
				default:
					drained = true
				}
			}
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			r.flush(final, pending)
			if len(pending) > 0 {
				r.logger.Error("legacy use lost at shutdown", "pairs", len(pending))
			}
			return nil
		}
	}
}

func (r *Recorder) fold(pending map[key]*folded, h Hit) {
	k := key{h.TokenHash, h.Route}
	f := pending[k]
	if f == nil {
		if len(pending) >= r.cfg.MaxPending {
			r.dropped.Add(1)
			return
		}
		pending[k] = &folded{first: h.At, last: h.At, count: 1, sample: h.RequestID, hours: map[int64]int64{h.At.Unix() / 3600: 1}}
		return
	}
	if h.At.Before(f.first) {
		f.first = h.At
	}
	if !h.At.Before(f.last) {
		f.last, f.sample = h.At, h.RequestID
	}
	f.count++
	f.hours[h.At.Unix()/3600]++
}

// flush resolves the pending hashes and writes the uses; what cannot be
// resolved or written stays pending for the next flush.
func (r *Recorder) flush(ctx context.Context, pending map[key]*folded) {
	if len(pending) == 0 {
		return
	}
	subjects := map[string]string{}
	var uses []store.Use
	var written []key
	for k, f := range pending {
		subject, seen := subjects[k.hash]
		if !seen {
			var err error
			subject, err = r.subject(ctx, k.hash)
			if err != nil {
				r.logger.Warn("legacy use: credential lookup failed; kept for the next flush", "err", err)
				continue
			}
			subjects[k.hash] = subject
		}
		written = append(written, k)
		if subject == "" {
			continue // an unknown credential: nothing to record
		}
		uses = append(uses, store.Use{Subject: subject, Route: k.route, First: f.first, Last: f.last, Count: f.count, Sample: f.sample, Hours: f.hours})
	}
	if err := r.write(ctx, uses); err != nil {
		r.logger.Warn("legacy use: write failed; kept for the next flush", "err", err, "uses", len(uses))
		return
	}
	for _, k := range written {
		delete(pending, k)
	}
}

func (r *Recorder) subject(ctx context.Context, hash string) (string, error) {
	if hash == "" {
		return store.Anonymous, nil
	}
	id, err := r.identify(ctx, hash)
	if errors.Is(err, ErrUnknownCredential) {
		return "", nil
	}
	return id, err
}
