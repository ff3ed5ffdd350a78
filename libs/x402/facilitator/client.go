package facilitator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/x402"
)

// The three ways a Client call can fail. Every error a Client method
// returns wraps exactly one of them (and, where there is one, the transport
// error, so errors.Is(err, context.DeadlineExceeded) also works). A refusal
// of the payment is not among them: see Client.
var (
	// ErrUnavailable: the facilitator gave no usable answer, and nothing
	// happened on its side that matters. Connection refused, DNS failure,
	// a timeout or a broken connection before the request was fully sent,
	// 408, 429, any 5xx on /verify or /supported, an undecodable answer to
	// /verify or /supported. Safe to retry at once or later; the readiness
	// service answers its own client 503.
	ErrUnavailable = errors.New("facilitator unavailable")
	// ErrOutcomeUnknown: /settle was sent in full, so the facilitator may
	// have settled, but no decodable answer came back: a timeout or broken
	// connection after sending, any 5xx, an undecodable 2xx body. The
	// caller must record the settlement as pending and reconcile it later
	// by sending the same request again, which a facilitator answers with
	// the original outcome (settlement is idempotent per authorization);
	// it must never treat the payment as refused.
	ErrOutcomeUnknown = errors.New("facilitator settlement outcome unknown")
	// ErrRejected: the facilitator refused the request itself, not the
	// payment: a 4xx other than 408 and 429 whose body is not a payment
	// refusal, such as 400 for a malformed body, 401 or 403 for a missing or
	// wrong Authorization, 404 for a wrong base URL, or a redirect. Nothing
	// was settled, and sending the same request again will fail the same
	// way: it is a configuration or programming error on our side.
	ErrRejected = errors.New("facilitator rejected the request")
)

// DefaultClientTimeout bounds one call when ClientConfig.Timeout is zero.
const DefaultClientTimeout = 10 * time.Second

// maxAnswerBytes bounds a facilitator's answer; anything longer is not one
// of the small documents the API defines.
const maxAnswerBytes = 1 << 20

// ClientConfig configures a Client.
type ClientConfig struct {
	// BaseURL is the facilitator API's root, such as
	// http://127.0.0.1:8085 or https://api.cdp.coinbase.com/platform/v2/x402;
	// /verify, /settle and /supported are appended to it.
	BaseURL string
	// Authorization is the whole value of the Authorization header sent
	// with every request ("Bearer <token>" for the local facilitator with
	// FACILITATOR_TOKEN set); empty sends none. Services read it from
	// FACILITATOR_AUTH_HEADER.
	Authorization envconf.Secret
	// Timeout bounds each call, from dialling to the decoded answer.
	// Zero means DefaultClientTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests. Nil means a client of its own that
	// does not follow redirects: a facilitator API does not redirect, and a
	// redirected POST would be re-sent or turned into a GET.
	HTTPClient *http.Client
}

// IdleConnsPerHost is how many connections to the facilitator a client of
// its own keeps open between calls: enough for the payments one replica
// has in flight at once.
const IdleConnsPerHost = 64

// Client calls a facilitator's HTTP API (x402-specification-v2.md, section
// 7): the local one of this package or any real one.
//
// The contract of its three methods:
//
//   - A decoded answer is returned with a nil error, including a refusal of
//     the payment: isValid false or success false, with the facilitator's
//     reason. A refusal is the payer's problem, not a failure of the call.
//     A refusal sent with a 4xx status (as some facilitators do) is decoded
//     and returned the same way.
//   - Otherwise the error wraps ErrUnavailable, ErrOutcomeUnknown (Settle
//     only) or ErrRejected; see each for when.
//
// A Client does not retry: whether and when to is the caller's decision,
// and for Settle only the caller knows the payment is pending. A Client is
// safe for concurrent use.
type Client struct {
	base    string
	auth    string
	timeout time.Duration
	hc      *http.Client
}

// NewClient returns a client of the facilitator at cfg.BaseURL.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("facilitator client: base URL %q must be an absolute http or https URL without query or fragment", cfg.BaseURL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("facilitator client: negative timeout %s", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultClientTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		// Every paid request makes two calls: with the default two idle
		// connections per host, concurrent payments dial (and on https
		// handshake) for most calls and close the connections again.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = IdleConnsPerHost
		hc = &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), auth: cfg.Authorization.Reveal(), timeout: cfg.Timeout, hc: hc}, nil
}

// Verify asks whether req's payment is valid now (POST /verify). Verifying
// changes nothing, so every failure to get an answer is ErrUnavailable
// (or ErrRejected).
func (c *Client) Verify(ctx context.Context, req x402.VerifyRequest) (x402.VerifyResponse, error) {
	const op = "verify"
	status, body, err := c.call(ctx, http.MethodPost, "/verify", req, ErrUnavailable)
	if err != nil {
		return x402.VerifyResponse{}, fmt.Errorf("facilitator %s: %w", op, err)
	}
	switch {
	case isSuccess(status):
		resp, err := decodeVerify(body)
		if err != nil {
			return x402.VerifyResponse{}, answerError(op, status, body, ErrUnavailable, err)
		}
		return resp, nil
	case isTransient(status) || status >= 500:
		return x402.VerifyResponse{}, answerError(op, status, body, ErrUnavailable, nil)
	}
	if resp, err := decodeVerify(body); err == nil && !resp.IsValid && resp.InvalidReason != "" {
		return resp, nil
	}
	return x402.VerifyResponse{}, answerError(op, status, body, ErrRejected, nil)
}

// Settle asks the facilitator to settle req's payment (POST /settle). A
// decoded answer, success or refusal, is returned with a nil error. Until
// the request has been sent in full, failures are ErrUnavailable (nothing
// can have been settled); after that, every failure to get a decodable
// answer, 5xx included, is ErrOutcomeUnknown, because the facilitator may
// have settled. Sending the same req again is how the caller learns the
// outcome: settlement is idempotent per signed authorization.
func (c *Client) Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error) {
	const op = "settle"
	status, body, err := c.call(ctx, http.MethodPost, "/settle", req, ErrOutcomeUnknown)
	if err != nil {
		return x402.SettleResponse{}, fmt.Errorf("facilitator %s: %w", op, err)
	}
	switch {
	case isSuccess(status):
		resp, err := decodeSettle(body)
		if err != nil {
			return x402.SettleResponse{}, answerError(op, status, body, ErrOutcomeUnknown, err)
		}
		return resp, nil
	case isTransient(status):
		// 408 and 429 say the request was not processed.
		return x402.SettleResponse{}, answerError(op, status, body, ErrUnavailable, nil)
	case status >= 500:
		return x402.SettleResponse{}, answerError(op, status, body, ErrOutcomeUnknown, nil)
	}
	if resp, err := decodeSettle(body); err == nil && !resp.Success && resp.ErrorReason != "" {
		return resp, nil
	}
	return x402.SettleResponse{}, answerError(op, status, body, ErrRejected, nil)
}

// Supported lists what the facilitator settles (GET /supported).
func (c *Client) Supported(ctx context.Context) (x402.SupportedResponse, error) {
	const op = "supported"
	status, body, err := c.call(ctx, http.MethodGet, "/supported", nil, ErrUnavailable)
	if err != nil {
		return x402.SupportedResponse{}, fmt.Errorf("facilitator %s: %w", op, err)
	}
	switch {
	case isSuccess(status):
		var resp x402.SupportedResponse
		if err := decodeAnswer(body, &resp); err != nil {
			return x402.SupportedResponse{}, answerError(op, status, body, ErrUnavailable, err)
		}
		return resp, nil
	case isTransient(status) || status >= 500:
		return x402.SupportedResponse{}, answerError(op, status, body, ErrUnavailable, nil)
	}
	return x402.SupportedResponse{}, answerError(op, status, body, ErrRejected, nil)
}

// call sends one request and reads the whole answer. A failure before the
// request was written in full wraps ErrUnavailable; one after wraps
// afterSend, because from then on the facilitator may have acted on it.
func (c *Client) call(ctx context.Context, method, path string, in any, afterSend error) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return 0, nil, fmt.Errorf("encoding request: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var sent atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				sent.Store(true)
			}
		},
	})
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	failed := func(what string, err error) error {
		class := ErrUnavailable
		if sent.Load() {
			class = afterSend
		}
		return fmt.Errorf("%s %s: %w: %w", what, path, class, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, failed("sending", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return 0, nil, failed("reading the answer to", err)
	}
	if len(raw) > maxAnswerBytes {
		return 0, nil, failed("reading the answer to", fmt.Errorf("answer longer than %d bytes", maxAnswerBytes))
	}
	return resp.StatusCode, raw, nil
}

func isSuccess(status int) bool { return status >= 200 && status < 300 }

// isTransient reports the statuses that say the request was not processed
// and may be sent again.
func isTransient(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests
}

func answerError(op string, status int, body []byte, class, cause error) error {
	excerpt := string(body)
	if len(excerpt) > 200 {
		excerpt = excerpt[:200] + "…"
	}
	if cause != nil {
		return fmt.Errorf("facilitator %s: HTTP %d %q: %w: %w", op, status, excerpt, class, cause)
	}
	return fmt.Errorf("facilitator %s: HTTP %d %q: %w", op, status, excerpt, class)
}

// decodeAnswer decodes exactly one JSON value. Unknown fields are allowed,
// unlike in the requests this package serves: an answer comes from a
// facilitator we do not control, and a field it adds must not turn a
// settlement that happened into one whose outcome is unknown. The fields
// the contract depends on are checked by the callers.
func decodeAnswer(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding answer: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decoding answer: trailing data after the JSON value")
	}
	return nil
}

// verifyAnswer makes isValid required: a body without it is no answer.
type verifyAnswer struct {
	IsValid *bool `json:"isValid"`
	x402.VerifyResponse
}

func decodeVerify(body []byte) (x402.VerifyResponse, error) {
	var a verifyAnswer
	if err := decodeAnswer(body, &a); err != nil {
		return x402.VerifyResponse{}, err
	}
	if a.IsValid == nil {
		return x402.VerifyResponse{}, errors.New("answer has no isValid")
	}
	resp := a.VerifyResponse
	resp.IsValid = *a.IsValid
	return resp, nil
}

// settleAnswer makes success required: a body without it is no answer.
type settleAnswer struct {
	Success *bool `json:"success"`
	x402.SettleResponse
}

func decodeSettle(body []byte) (x402.SettleResponse, error) {
	var a settleAnswer
	if err := decodeAnswer(body, &a); err != nil {
		return x402.SettleResponse{}, err
	}
	if a.Success == nil {
		return x402.SettleResponse{}, errors.New("answer has no success")
	}
	resp := a.SettleResponse
	resp.Success = *a.Success
	if resp.Success && resp.Transaction == "" {
		return x402.SettleResponse{}, errors.New("successful settlement without a transaction")
	}
	return resp, nil
}
