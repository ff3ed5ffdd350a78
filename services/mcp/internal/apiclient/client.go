// Package apiclient calls the public API for the MCP server as an
// account's own client would: over HTTP through the edge (one base URL),
// with an account token for the API's audience, so that a tool reaches
// nothing the account could not reach itself and meets every check the
// API makes.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/requestid"
)

// Client calls the API at one base URL.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// New returns a client of the API at base.
func New(base *url.URL, hc *http.Client) *Client { return &Client{base: base, hc: hc} }

// Request is one call of the API.
type Request struct {
	Method, Path string
	Query        url.Values
	// Body is sent as application/json; nil sends none.
	Body json.RawMessage
	// Form is sent instead of Body when set: a multipart/form-data body
	// (an exhibit's upload), whole.
	Form           *Form
	IdempotencyKey string
	// Bearer is the API token; "" sends none (public routes, such as the
	// award keys and the paid readiness report).
	Bearer string
	// Header holds any other header to send (an x402 payment).
	Header http.Header
}

// Form is a multipart/form-data body and the Content-Type that names its
// boundary.
type Form struct {
	ContentType string
	Body        []byte
}

// Answer is what the API answered: a 2xx is returned as it is, any other
// status as a *Problem.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Problem is a non-2xx answer: the API's problem+json body, as the API
// wrote it, so a tool hands the caller the very problem the API gave.
type Problem struct {
	Status int
	Header http.Header
	// Body is the problem document (RFC 9457); nil for an answer that
	// had none.
	Body   json.RawMessage
	Code   string
	Detail string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("the API answered %d %s: %s", p.Status, p.Code, p.Detail)
}

// maxBody bounds what is read of one answer: the largest a tool returns
// is an award's json artifact.
const maxBody = 8 << 20

// timeout bounds one call: a tool call waits on no longer.
const timeout = 20 * time.Second

// Do sends r. A transport failure is an error that is not a *Problem.
func (c *Client) Do(ctx context.Context, r Request) (Answer, error) {
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + r.Path
	u.RawQuery = r.Query.Encode()
	var body io.Reader
	switch {
	case r.Form != nil:
		body = bytes.NewReader(r.Form.Body)
	case r.Body != nil:
		body = bytes.NewReader(r.Body)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return Answer{}, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	switch {
	case r.Form != nil:
		req.Header.Set("Content-Type", r.Form.ContentType)
	case r.Body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if r.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.Bearer)
	}
	if r.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	}
	if id := requestid.FromContext(ctx); id != "" {
		req.Header.Set(requestid.Header, id)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case err != nil:
		return Answer{}, fmt.Errorf("%s %s: reading the answer: %w", r.Method, r.Path, err)
	case len(raw) > maxBody:
		return Answer{}, fmt.Errorf("%s %s: the answer is larger than %d bytes", r.Method, r.Path, maxBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Answer{}, problemOf(resp, raw)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// problemOf reads a non-2xx answer's problem document; an answer without
// one (a gateway's 502 page) keeps no body and says so in Detail.
func problemOf(resp *http.Response, raw []byte) *Problem {
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(raw, &p) == nil && p.Code != "" {
		return &Problem{Status: resp.StatusCode, Header: resp.Header, Body: raw, Code: p.Code, Detail: p.Detail}
	}
	return &Problem{Status: resp.StatusCode, Header: resp.Header,
		Detail: fmt.Sprintf("The API answered %d without a problem document.", resp.StatusCode)}
}
