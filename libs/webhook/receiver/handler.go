// Package receiver is a ready-made receiver of pcourt case event callbacks
// for partners writing Go: an http.Handler that verifies the seven signature
// headers (package signature) against the published key set (JWKSCache),
// answers fast, deduplicates by event id and hands each verified event to
// the partner's callback once.
package receiver

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// Delivery is one verified delivery, as the callback receives it.
type Delivery struct {
	Event Event
	// KeyID and Timestamp are those of this attempt's signature.
	KeyID     string
	Timestamp time.Time
	// Test is true for a test event a partner asked for (signed x-pc-test:
	// true): no case fact stands behind it, so do not act on it as one.
	Test bool
	// Body is the exact verified body.
	Body []byte
}

// Callback processes one verified event. Returning an error releases the
// event id, so a later delivery of the event is processed again.
type Callback func(ctx context.Context, d Delivery) error

// Config tunes a Handler. The zero value of a field takes its default,
// except EndpointID, which is required.
type Config struct {
	// EndpointID is this receiver's endpoint id (we_…, as registration
	// returned it). Every delivery is signed for one endpoint; one signed
	// for another is refused as recipient_mismatch, so a delivery that
	// another partner received cannot be replayed here.
	EndpointID string
	// MaxBodyBytes bounds the body; 64 KiB by default (events are sparse).
	MaxBodyBytes int64
	// Tolerance is how far a timestamp may be from the clock;
	// signature.DefaultTolerance (5 minutes) by default.
	Tolerance time.Duration
	// Deduper remembers handled event ids; by default a MemoryDeduper of
	// 100 000 ids for 72 hours.
	Deduper Deduper
	// Environment, when set, accepts only key ids of that environment (see
	// signature.NewKeyID): a sandbox key cannot sign for a live receiver.
	Environment signature.Environment
	// Async runs the callback after answering 202, at most MaxInFlight at a
	// time (a delivery beyond that is answered 503 and retried by the
	// sender). Without Async the callback runs before the answer (204), so
	// it should be quick: record the event and return.
	Async       bool
	MaxInFlight int
	// Logger receives one line per refused or failed delivery; discarded by default.
	Logger *slog.Logger
	// Now is the clock; time.Now by default.
	Now func() time.Time
}

// Handler is the http.Handler of the callback endpoint.
//
// Answers: 204 processed (sync) or 202 accepted (async); 200 "duplicate" for
// an event already handled (the callback is not called again); 400 or 401
// with the signature.Reason as a short text body for a refused delivery (401
// for recipient_mismatch, timestamp_window, digest_mismatch, unknown_key and
// bad_signature, 400 for the others); 400 event_invalid for a verified body
// that is not a case-event-v2; 405 for a method other than POST; 413 for a
// body over the limit; 500 when the callback fails; 503 when the key set or the deduper
// cannot be reached, when async capacity is full, or after Shutdown.
type Handler struct {
	keys     KeySource
	callback Callback
	cfg      Config

	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.RWMutex
	down  bool
}

// NewHandler returns a handler that verifies against keys and hands events
// to callback.
func NewHandler(keys KeySource, callback Callback, cfg Config) (*Handler, error) {
	if keys == nil || callback == nil {
		return nil, errors.New("receiver: a key source and a callback are required")
	}
	if !signature.ValidID(cfg.EndpointID) {
		return nil, fmt.Errorf("receiver: endpoint id %q: want the id registration returned for this endpoint (we_…)", cfg.EndpointID)
	}
	if cfg.Environment != "" && !cfg.Environment.Valid() {
		return nil, fmt.Errorf("receiver: environment %q: want sandbox or live", cfg.Environment)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 10
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = signature.DefaultTolerance
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Deduper == nil {
		cfg.Deduper = NewMemoryDeduper(100_000, 72*time.Hour, cfg.Now)
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{keys: keys, callback: callback, cfg: cfg, slots: make(chan struct{}, cfg.MaxInFlight)}, nil
}

func answer(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Cache-Control", "no-store")
	if text == "" {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n")
}

// statusOf is the answer to a refusal: 401 where the delivery may be forged
// or replayed, 400 where it is malformed.
func statusOf(r signature.Reason) int {
	switch r {
	case signature.ReasonRecipientMismatch, signature.ReasonTimestampWindow, signature.ReasonDigestMismatch,
		signature.ReasonUnknownKey, signature.ReasonBadSignature:
		return http.StatusUnauthorized
	default:
		return http.StatusBadRequest
	}
}

// ServeHTTP handles one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, "method_not_allowed")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(w, http.StatusRequestEntityTooLarge, "body_too_large")
			return
		}
		answer(w, http.StatusBadRequest, "body_unreadable")
		return
	}
	log := h.cfg.Logger.With(slog.String("event_id", r.Header.Get(signature.HeaderEventID)))

	ctx := r.Context()
	v, err := signature.Verify(r.Header, body, h.cfg.EndpointID, func(keyID string) (ed25519.PublicKey, error) {
		if h.cfg.Environment != "" {
			if id, err := signature.ParseKeyID(keyID); err != nil || id.Environment != h.cfg.Environment {
				return nil, fmt.Errorf("%w: %q is not a %s key id", signature.ErrUnknownKey, keyID, h.cfg.Environment)
			}
		}
		return h.keys.Lookup(ctx, keyID)
	}, h.cfg.Now(), h.cfg.Tolerance)
	if err != nil {
		reason := signature.ReasonOf(err)
		if reason == signature.ReasonUnknownKey && !errors.Is(err, signature.ErrUnknownKey) {
			log.Warn("webhook key set unavailable", slog.Any("err", err))
			answer(w, http.StatusServiceUnavailable, "key_set_unavailable")
			return
		}
		log.Info("webhook delivery refused", slog.String("reason", string(reason)), slog.Any("err", err))
		answer(w, statusOf(reason), string(reason))
		return
	}
	ev, err := DecodeEvent(body)
	if err != nil {
		log.Info("webhook delivery refused", slog.String("reason", "event_invalid"), slog.Any("err", err))
		answer(w, http.StatusBadRequest, "event_invalid")
		return
	}
	d := Delivery{Event: ev, KeyID: v.KeyID, Timestamp: v.Timestamp, Test: v.Test, Body: body}

	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.down {
		answer(w, http.StatusServiceUnavailable, "shutting_down")
		return
	}
	first, err := h.cfg.Deduper.Claim(ctx, ev.EventID)
	if err != nil {
		log.Warn("webhook deduper unavailable", slog.Any("err", err))
		answer(w, http.StatusServiceUnavailable, "dedupe_unavailable")
		return
	}
	if !first {
		answer(w, http.StatusOK, "duplicate")
		return
	}

	if !h.cfg.Async {
		if err := h.callback(ctx, d); err != nil {
			h.release(ctx, log, ev.EventID)
			log.Error("webhook callback failed", slog.Any("err", err))
			answer(w, http.StatusInternalServerError, "callback_failed")
			return
		}
		answer(w, http.StatusNoContent, "")
		return
	}
	select {
	case h.slots <- struct{}{}:
	default:
		h.release(ctx, log, ev.EventID)
		answer(w, http.StatusServiceUnavailable, "busy")
		return
	}
	h.wg.Add(1)
	go func(ctx context.Context) {
		defer h.wg.Done()
		defer func() { <-h.slots }()
		if err := h.callback(ctx, d); err != nil {
			h.release(ctx, log, ev.EventID)
			log.Error("webhook callback failed", slog.Any("err", err))
		}
	}(context.WithoutCancel(ctx))
	answer(w, http.StatusAccepted, "")
}

func (h *Handler) release(ctx context.Context, log *slog.Logger, eventID string) {
	if err := h.cfg.Deduper.Release(context.WithoutCancel(ctx), eventID); err != nil {
		log.Warn("webhook dedupe release failed", slog.Any("err", err))
	}
}

// Shutdown refuses new deliveries with 503 and waits until the running
// async callbacks return or ctx ends. Use it after http.Server.Shutdown.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.down = true
	h.mu.Unlock()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for webhook callbacks: %w", ctx.Err())
	}
}
