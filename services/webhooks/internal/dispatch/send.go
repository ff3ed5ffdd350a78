package dispatch

// Sending: one attempt, from a claimed delivery and its endpoint to the
// attempt's record and its classified result. It decides nothing about
// the schedule (handle and package delivery do); it signs the stored
// bytes afresh with this attempt's timestamp and the environment's active
// key, POSTs them with the environment's client (each over its own dial
// guard), and keeps of the answer only what a partner may read back.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Clients are the HTTP clients deliveries are sent with, one per
// environment, each over its own dial guard (egress.Policy.ForEnvironment):
// live's never dials an internal address, whatever the allowlist says.
// Separate transports also mean a connection a sandbox delivery opened to
// an allowlisted address is never reused by a live one.
type Clients struct {
	Sandbox *http.Client
	Live    *http.Client
}

// For returns the client of env.
func (c Clients) For(env string) (*http.Client, error) {
	var client *http.Client
	switch env {
	case "sandbox":
		client = c.Sandbox
	case "live":
		client = c.Live
	}
	if client == nil {
		return nil, fmt.Errorf("no delivery client for environment %q", env)
	}
	return client, nil
}

// Signers gives the active signer of an environment.
type Signers interface {
	Signer(env signature.Environment, now time.Time) (*signature.Signer, error)
}

// maxRecordedBody is how much of a response body an attempt keeps.
const maxRecordedBody = 4 << 10

// maxDrainedBody is how much of a withheld answer is read (and dropped),
// so that its connection can be reused.
const maxDrainedBody = 64 << 10

// send makes one attempt inside a client span, whose context the request
// carries as traceparent: a partner's receiver that traces joins the
// trace of the case event that caused the delivery.
func (s *Sender) send(ctx context.Context, d store.Delivery, ep endpoints.Endpoint) (store.Attempt, delivery.Result) {
	ctx, span := s.inst.tracer.Start(ctx, "webhook send", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			semconv.HTTPRequestMethodPost,
			attribute.String("pcourt.webhook.delivery_id", d.ID),
			attribute.String("pcourt.webhook.event_id", d.EventID),
			attribute.String("pcourt.webhook.endpoint_id", d.EndpointID),
			attribute.Int("pcourt.webhook.attempt", d.Attempts+1),
		))
	defer span.End()
	began := time.Now()
	a, r := s.attempt(ctx, d, ep)
	s.inst.recordAttempt(ctx, r, time.Since(began))
	if a.Status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(a.Status))
	}
	span.SetAttributes(attribute.String("pcourt.webhook.outcome", string(r.Kind)))
	if r.Kind != delivery.Success {
		span.SetStatus(codes.Error, string(r.Class))
	}
	return a, r
}

// attempt signs and POSTs the delivery once.
func (s *Sender) attempt(ctx context.Context, d store.Delivery, ep endpoints.Endpoint) (store.Attempt, delivery.Result) {
	start := s.now()
	a := store.Attempt{Number: d.Attempts + 1, Trigger: store.TriggerScheduled, StartedAt: start, URL: ep.URL}
	if d.Attempts == 0 {
		a.Trigger = d.Trigger
	}
	fail := func(class delivery.Class, err error) (store.Attempt, delivery.Result) {
		a.ErrorClass, a.Error, a.Outcome = string(class), err.Error(), string(delivery.Failure)
		return a, delivery.Result{Kind: delivery.Failure, Class: class}
	}
	// The stored event, encoded once: these bytes are signed, sent and
	// shown as the delivery's requestBody.
	body := d.Event.Body(d.ID)
	signer, err := s.signers.Signer(signature.Environment(d.Environment), start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	// The signature names the endpoint, so it is good at this partner's
	// receiver only (the keys are the environment's, shared by all).
	headers, err := signer.Sign(body, d.EventID, signature.Recipient{EndpointID: d.EndpointID, Test: d.Test}, start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	a.KeyID = signer.KeyID()
	client, err := s.clients.For(d.Environment)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	// The connection's dial tells whether the receiver is on an internal
	// range the allowlist opened: then nothing of its answer is kept.
	var allowlisted atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		allowlisted.Store(egress.Allowlisted(info.Conn))
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	headers.Apply(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pcourt-webhooks/1")
	s.inst.propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	a.RequestHeaders = flatten(req.Header)

	resp, err := client.Do(req)
	if err != nil {
		a.DurationMs = s.now().Sub(start).Milliseconds()
		r := delivery.Classify(delivery.Outcome{Err: err}, s.now())
		a.ErrorClass, a.Error, a.Outcome = string(r.Class), err.Error(), string(r.Kind)
		return a, r
	}
	defer resp.Body.Close()
	var head []byte
	var readErr error
	if allowlisted.Load() {
		// An internal service answered (a development allowlist let the
		// dial through): its headers and body stay out of the record the
		// partner reads, or an endpoint at a debug port would read the
		// port's output back.
		_, readErr = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainedBody))
		a.ResponseWithheld = true
	} else {
		head, readErr = io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
		a.ResponseHeaders, a.ResponseBody = flatten(resp.Header), string(bytes.ToValidUTF8(head, []byte("\uFFFD")))
	}
	a.DurationMs = s.now().Sub(start).Milliseconds()
	a.Status = resp.StatusCode
	r := delivery.Classify(delivery.Outcome{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}, s.now())
	if readErr != nil && r.Kind == delivery.Success {
		// The status arrived; a body cut short does not undo the receipt.
		a.Error = fmt.Sprintf("reading response body: %v", readErr)
	}
	a.ErrorClass, a.Outcome = string(r.Class), string(r.Kind)
	return a, r
}

// flatten keeps the first value of each header, bounded, for the record.
func flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if len(out) == 50 {
			break
		}
		if len(v) > 0 {
			out[http.CanonicalHeaderKey(k)] = truncate(v[0], 512)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
