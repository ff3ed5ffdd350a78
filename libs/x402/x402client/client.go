// Package x402client is our paying client for x402 version 2 over HTTP: it
// sends a request, and when the answer is 402 Payment Required it chooses
// one of the offers of the PAYMENT-REQUIRED challenge, signs an EIP-3009
// authorization for it with the exact EVM scheme and sends the same request
// again with a PAYMENT-SIGNATURE header, as the reference client
// (@x402/fetch with @x402/evm) does.
//
// The protocol itself (wire types, header codec, signing) is package x402;
// this package adds the client's policy around it: which networks it pays
// on and in what order, the known USDC deployment as the only asset, a
// ceiling on the amount, one signature per call, and the payment-identifier
// extension when the server advertises it.
package x402client

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/x402"
)

// DefaultMaxAmount is the default ceiling on an offer, in atomic units:
// 10 USDC.
const DefaultMaxAmount = "10000000"

// DefaultTimeout is the timeout of the HTTP client New creates when Config
// names none.
const DefaultTimeout = 30 * time.Second

// MaxBodyBytes bounds a response body read into Result.Body. A larger body
// is an error rather than a silently truncated answer.
const MaxBodyBytes = 16 << 20

// DefaultNetworks returns the networks a Client pays on when Config names
// none, in preference order: Base Sepolia first, so that a client left at
// its defaults spends test money when a server offers both.
func DefaultNetworks() []string {
	return []string{"eip155:84532", "eip155:8453"}
}

// Errors of New and Pay. Pay wraps them with detail; test with errors.Is.
var (
	// ErrInvalidConfig: New was given a Config it cannot work with.
	ErrInvalidConfig = errors.New("invalid x402 client config")
	// ErrMalformedChallenge: the 402 answer carries no PaymentRequired this
	// client can read (bad header, bad body, wrong version, no offers).
	ErrMalformedChallenge = errors.New("malformed x402 payment challenge")
	// ErrNoAcceptableOffer: no offer is the exact scheme in known USDC on
	// one of the configured networks.
	ErrNoAcceptableOffer = errors.New("no acceptable x402 offer")
	// ErrAmountTooHigh: an offer would be acceptable, but every such offer
	// asks more than Config.MaxAmount.
	ErrAmountTooHigh = errors.New("x402 offer amount above the configured maximum")
	// ErrMalformedSettlement: the PAYMENT-RESPONSE header does not decode
	// strictly as a SettleResponse.
	ErrMalformedSettlement = errors.New("malformed PAYMENT-RESPONSE header")
	// ErrPaymentRejected: the server answered a paid request with 402. The
	// error is a *RejectedError.
	ErrPaymentRejected = errors.New("x402 payment rejected")
	// ErrAlreadyPaying: Pay was given a request that already carries a
	// PAYMENT-SIGNATURE header.
	ErrAlreadyPaying = errors.New("request already carries a PAYMENT-SIGNATURE header")
	// ErrAnswerCut: the answer's status and headers arrived, its body did
	// not (the connection closed or failed mid-body). Pay asks for a cut
	// price answer once more (and for one a gateway answered 502, 503 or
	// 504); a cut answer to the paid request comes back with the
	// Result's Payment, for Retry.
	ErrAnswerCut = errors.New("answer cut short")
)

// RejectedError reports a paid request answered with 402 Payment Required:
// the server refused the payment (verification or settlement failed). The
// client never pays a second time on its own.
type RejectedError struct {
	// Reason is the settlement's errorReason, or else the new challenge's
	// error, or else empty.
	Reason string
	// Challenge is the PAYMENT-REQUIRED of the refusal, if it had one.
	Challenge *x402.PaymentRequired
	// Settlement is the PAYMENT-RESPONSE of the refusal, if it had one.
	Settlement *x402.SettleResponse
}

// Error describes the refusal.
func (e *RejectedError) Error() string {
	if e.Reason == "" {
		return "paid request answered 402 Payment Required"
	}
	return "paid request answered 402 Payment Required: " + e.Reason
}

// Unwrap makes errors.Is(err, ErrPaymentRejected) hold.
func (e *RejectedError) Unwrap() error { return ErrPaymentRejected }

// Config configures a Client. The zero value of every field but Key means
// its default.
type Config struct {
	// Key signs the payments; its address is the payer. Required.
	Key *ecdsa.PrivateKey
	// HTTP sends the requests; default a client with DefaultTimeout. The
	// Client uses a copy that never follows redirects.
	HTTP *http.Client
	// Networks are the CAIP-2 networks the client pays on, most preferred
	// first; each must have a USDC deployment x402.USDC knows. Default
	// DefaultNetworks().
	Networks []string
	// MaxAmount is the largest offer the client pays, in atomic units as a
	// canonical decimal string. Default DefaultMaxAmount.
	MaxAmount string
	// Now is the clock the authorization's validity window is taken from;
	// default time.Now.
	Now func() time.Time
	// Rand is the source of the authorization nonces and payment
	// identifiers; default crypto/rand.Reader. A Client used from several
	// goroutines reads it from all of them.
	Rand io.Reader
}

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: DefaultTimeout}
	}
	if len(c.Networks) == 0 {
		c.Networks = DefaultNetworks()
	}
	if c.MaxAmount == "" {
		c.MaxAmount = DefaultMaxAmount
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	return c
}

// Validate reports what makes c unusable once defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Key == nil {
		errs = append(errs, fmt.Errorf("%w: Key is required", ErrInvalidConfig))
	}
	for _, n := range c.Networks {
		if _, ok := x402.USDC(n); !ok {
			errs = append(errs, fmt.Errorf("%w: network %q has no known USDC deployment", ErrInvalidConfig, n))
		}
	}
	if _, ok := parseAmount(c.MaxAmount); !ok {
		errs = append(errs, fmt.Errorf("%w: MaxAmount %q is not a positive canonical decimal", ErrInvalidConfig, c.MaxAmount))
	}
	return errors.Join(errs...)
}

// Client pays for HTTP requests with x402. It is safe for concurrent use.
type Client struct {
	key      *ecdsa.PrivateKey
	payer    common.Address
	http     *http.Client
	networks []string
	max      *big.Int
	now      func() time.Time
	rand     io.Reader
}

// New returns a Client for cfg, or an error wrapping ErrInvalidConfig.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	max, _ := parseAmount(cfg.MaxAmount)
	// A redirect would present the signed payment to whatever the server
	// points at; the answer is returned to the caller instead.
	hc := *cfg.HTTP
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{
		key:      cfg.Key,
		payer:    crypto.PubkeyToAddress(cfg.Key.PublicKey),
		http:     &hc,
		networks: append([]string(nil), cfg.Networks...),
		max:      max,
		now:      cfg.Now,
		rand:     cfg.Rand,
	}, nil
}

// Payer returns the address that pays: the address of Config.Key.
func (c *Client) Payer() common.Address { return c.payer }

// Result is the outcome of Pay or Retry.
type Result struct {
	// Response is the last answer received; its Body reads Body again. It
	// is nil only when the paid request got no answer.
	Response *http.Response
	// Body is the whole body of Response.
	Body []byte
	// Paid reports that a signed payment was sent. Whether the server took
	// it is in the error, Response and Settlement.
	Paid bool
	// Payment is the payment sent, when Paid. Pass it to Retry to send the
	// same payment again.
	Payment x402.PaymentPayload
	// PaymentIdentifier is the id this client put in the payment-identifier
	// extension, empty when the server did not advertise the extension.
	PaymentIdentifier string
	// Settlement is the server's PAYMENT-RESPONSE, nil when it sent none.
	Settlement *x402.SettleResponse
	// Challenge is the PaymentRequired that was answered (Pay only).
	Challenge *x402.PaymentRequired
}

// Pay sends req with body and, when the answer is 402 Payment Required,
// pays once and sends the same request again with the payment.
//
// req.Body is ignored: body is what is sent, byte for byte, on both
// requests, and what a later Retry of the payment must send again
// byte-identical. A server that replays its stored answer to a repeated
// payment (the readiness service does) binds the payment to the request it
// paid for: another body is another request, refused rather than replayed.
//
// An answer other than 402 is returned as it is, with Paid false. On 402
// the client reads the PAYMENT-REQUIRED header (the JSON body only when the
// header is absent), chooses the first offer, in Config.Networks order, of
// the exact scheme in the network's known USDC at no more than
// Config.MaxAmount, and signs one EIP-3009 authorization for it: a Pay call
// never signs twice. The payment echoes the challenge's resource and
// extensions, and carries a fresh payment identifier when the server
// advertises the payment-identifier extension.
//
// The Result is returned beside an error whenever an answer was received,
// so that the caller can show it: a refusal to pay (ErrNoAcceptableOffer,
// ErrAmountTooHigh, ErrMalformedChallenge) comes with the 402 answer; a 402
// to the paid request comes with a *RejectedError and is not followed; a
// PAYMENT-RESPONSE that does not decode strictly is ErrMalformedSettlement.
// When the paid request gets no answer (a timeout), the Result carries
// Payment, so that Retry can send the very same payment again.
func (c *Client) Pay(ctx context.Context, req *http.Request, body []byte) (*Result, error) {
	if req.Header.Get(x402.HeaderPaymentSignature) != "" {
		return nil, ErrAlreadyPaying
	}
	first, err := c.send(ctx, req, body, "")
	if priceAnswerLost(first, err) {
		// The unpaid request only asks the price, so it is asked again,
		// once, when its answer was lost on the way: cut short (an
		// ingress reloading under load closed the connection mid-answer)
		// or replaced by a gateway's 502, 503 or 504 (a proxy whose
		// connection to a draining replica closed as it wrote the
		// request, which it may not resend for a POST). A paid request
		// is never resent here; Retry does that with the same payment,
		// when the caller says so.
		first, err = c.send(ctx, req, body, "")
	}
	if err != nil {
		return nil, err
	}
	if first.Response.StatusCode != http.StatusPaymentRequired {
		return first, nil
	}
	challenge, err := decodeChallenge(first.Response.Header, first.Body)
	if err != nil {
		return first, err
	}
	first.Challenge = challenge
	offer, err := c.chooseOffer(challenge.Accepts)
	if err != nil {
		return first, err
	}
	payment, err := x402.NewExactPayment(c.key, offer, c.now(), c.rand)
	if err != nil {
		return first, fmt.Errorf("paying %s on %s: %w", offer.Amount, offer.Network, err)
	}
	resource := challenge.Resource
	payment.Resource = &resource
	var id string
	payment.Extensions, id, err = echoExtensions(challenge.Extensions, c.rand)
	if err != nil {
		return first, err
	}
	res, err := c.sendPayment(ctx, req, body, payment)
	res.PaymentIdentifier = id
	res.Challenge = challenge
	return res, err
}

// Retry sends req with body and payment, a payment from an earlier
// Result, again: the recovery after a paid request timed out or its answer
// was lost. The PAYMENT-SIGNATURE header is the same value as before, and
// body must be the same bytes as before, so that a server that already
// settled the payment replays its stored answer instead of refusing a
// spent authorization. Retry never signs; a 402 answer is returned with a
// *RejectedError, as from Pay.
func (c *Client) Retry(ctx context.Context, req *http.Request, body []byte, payment x402.PaymentPayload) (*Result, error) {
	if payment.X402Version != x402.Version || payment.Payload.Signature == "" {
		return nil, errors.New("retry: not a signed x402 version 2 payment")
	}
	res, err := c.sendPayment(ctx, req, body, payment)
	res.PaymentIdentifier = paymentIdentifier(payment.Extensions)
	return res, err
}

// priceAnswerLost says whether the answer to the unpaid request was lost
// on the way rather than given: cut short, or a gateway's error.
func priceAnswerLost(res *Result, err error) bool {
	if err != nil {
		return errors.Is(err, ErrAnswerCut)
	}
	switch res.Response.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// sendPayment sends the paid request and reads the x402 headers of its
// answer. It always returns a Result carrying the payment.
func (c *Client) sendPayment(ctx context.Context, req *http.Request, body []byte, payment x402.PaymentPayload) (*Result, error) {
	header, err := x402.EncodeHeader(payment)
	if err != nil {
		return &Result{Payment: payment}, fmt.Errorf("encoding payment: %w", err)
	}
	res, err := c.send(ctx, req, body, header)
	if err != nil {
		return &Result{Paid: true, Payment: payment}, err
	}
	res.Paid, res.Payment = true, payment
	if v := res.Response.Header.Get(x402.HeaderPaymentResponse); v != "" {
		var s x402.SettleResponse
		if err := x402.DecodeHeader(v, &s); err != nil {
			return res, fmt.Errorf("%w: %w", ErrMalformedSettlement, err)
		}
		res.Settlement = &s
	}
	if res.Response.StatusCode != http.StatusPaymentRequired {
		return res, nil
	}
	rejected := &RejectedError{Settlement: res.Settlement}
	if v := res.Response.Header.Get(x402.HeaderPaymentRequired); v != "" {
		var pr x402.PaymentRequired
		if err := x402.DecodeHeader(v, &pr); err != nil {
			return res, fmt.Errorf("%w: refusal of the paid request: %w", ErrMalformedChallenge, err)
		}
		rejected.Challenge = &pr
	}
	switch {
	case rejected.Settlement != nil && rejected.Settlement.ErrorReason != "":
		rejected.Reason = rejected.Settlement.ErrorReason
	case rejected.Challenge != nil:
		rejected.Reason = rejected.Challenge.Error
	}
	return res, rejected
}

// send sends one copy of req with body and, when paymentHeader is set, the
// PAYMENT-SIGNATURE header, and reads the whole answer.
func (c *Client) send(ctx context.Context, req *http.Request, body []byte, paymentHeader string) (*Result, error) {
	r := req.Clone(ctx)
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	if len(body) == 0 {
		r.Body, r.GetBody, r.ContentLength = http.NoBody, nil, 0
	} else {
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.Body, _ = r.GetBody()
		r.ContentLength = int64(len(body))
	}
	if paymentHeader != "" {
		r.Header.Set(x402.HeaderPaymentSignature, paymentHeader)
	}
	// Both requests may be sent twice: the unpaid one only asks the price,
	// and a server binds the payment to the paid one and replays its
	// stored answer (see Pay). Saying so lets net/http resend either, as it
	// resends a GET, when a kept-alive connection turns out to have been
	// closed by the server as the request went out (an ingress reloading
	// its configuration closes its idle connections): an Idempotency-Key
	// with no value marks a request idempotent and is not sent.
	if _, ok := r.Header["Idempotency-Key"]; !ok {
		r.Header["Idempotency-Key"] = nil
	}
	resp, err := c.http.Do(r)
	if err != nil {
		return nil, fmt.Errorf("sending request: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s answer: %w: %w", resp.Status, ErrAnswerCut, err)
	}
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("reading %s answer: body larger than %d bytes", resp.Status, MaxBodyBytes)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return &Result{Response: resp, Body: b}, nil
}
