// Package problem writes RFC 9457 problem details (application/problem+json)
// and is the one place where errors become HTTP statuses.
//
// Handlers report failures with c.Error(err) and return. Middleware turns the
// error into a problem body: a *problem.Error as it is, a domain error through
// the service's Mapper, anything else as a generic 500 whose cause goes only to
// the log and the trace.
package problem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/requestid"
)

// ContentType is the media type of every problem body.
const ContentType = "application/problem+json"

// TypeBase prefixes every problem type URI; the code completes it, so the type
// is stable per code and documented at that address.
const TypeBase = "https://pcourt.dev/problems/"

// Code is one entry of the problem catalogue: a stable machine-readable name,
// the HTTP status it is always sent with, and a short human title.
type Code struct {
	Name   string
	Status int
	Title  string
}

// Type returns the absolute problem type URI of the code.
func (c Code) Type() string { return TypeBase + c.Name }

// Body is the JSON shape of a problem, as the spec requires it.
type Body struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	RequestID string `json:"requestId"`
}

// Error is a failure that already knows its problem code. Detail is shown to
// the caller; Err, if any, is the cause and goes only to the log.
type Error struct {
	Code   Code
	Detail string
	Header http.Header
	Err    error
}

// New returns a problem with the given code and caller-facing detail.
func New(code Code, detail string) *Error {
	return &Error{Code: code, Detail: detail}
}

// Newf is New with a formatted detail.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// WithHeader returns the problem with an extra response header, such as
// Retry-After or WWW-Authenticate.
func (e *Error) WithHeader(key, value string) *Error {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Header.Set(key, value)
	return e
}

// Wrap records the cause of the problem for the log.
func (e *Error) Wrap(err error) *Error {
	e.Err = err
	return e
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code.Name, e.Detail, e.Err)
	}
	return e.Code.Name + ": " + e.Detail
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Mapper translates a service's domain errors into problems. It returns nil
// for errors it does not know, which then become a generic 500.
type Mapper func(error) *Error

type settings struct {
	logger *slog.Logger
	mapper Mapper
}

const settingsKey = "pcourt.problem.settings"

// Middleware installs the service's logger and Mapper for Render and Write,
// and renders the last error a handler recorded with c.Error, unless the
// handler already wrote a response.
func Middleware(logger *slog.Logger, mapper Mapper) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Set(settingsKey, settings{logger: logger, mapper: mapper})
		c.Next()
		if len(c.Errors) == 0 || c.Writer.Written() {
			return
		}
		Render(c, c.Errors.Last().Err)
	}
}

// Render classifies err with the service's Mapper and writes it now. Route
// middleware that must see the final response (idempotency) renders a
// handler's error with it instead of waiting for Middleware.
func Render(c *gin.Context, err error) {
	s, _ := c.Value(settingsKey).(settings)
	Write(c, From(err, s.mapper))
}

// From classifies err: a *Error as it is, then the mapper, then Internal.
func From(err error, mapper Mapper) *Error {
	var p *Error
	if errors.As(err, &p) {
		return p
	}
	if mapper != nil {
		if p := mapper(err); p != nil {
			if p.Err == nil {
				p.Err = err
			}
			return p
		}
	}
	return &Error{Code: Internal, Detail: "The server could not complete the request.", Err: err}
}

// Write sends p as the response. Server errors are logged with their cause and
// marked on the active span; their body stays generic.
func Write(c *gin.Context, p *Error) {
	rid := requestid.Get(c)
	s, _ := c.Value(settingsKey).(settings)
	Report(c.Request.Context(), s.logger, p)
	for k, vs := range p.Header {
		for _, v := range vs {
			c.Writer.Header().Add(k, v)
		}
	}
	c.Header("Content-Type", ContentType)
	c.Header("Cache-Control", "no-store")
	c.Render(p.Code.Status, problemJSON{p.Body(rid)})
	c.Abort()
}

// Report logs a server error (5xx) with its cause and marks it on the
// span in ctx; other problems are the caller's and are not logged. Write
// reports every problem it sends; a server that writes problems without
// gin (the edge's proxy path) calls it with Encode. The line's request id
// is ctx's (requestid.NewContext), as on every line the platform's logger
// writes, so it appears once.
func Report(ctx context.Context, logger *slog.Logger, p *Error) {
	if p.Code.Status < 500 {
		return
	}
	span := trace.SpanFromContext(ctx)
	span.SetStatus(codes.Error, p.Code.Name)
	if p.Err != nil {
		span.RecordError(p.Err)
	}
	if logger != nil {
		logger.ErrorContext(ctx, "request failed", "code", p.Code.Name, "err", p.Err)
	}
}

// Body is the problem's response body for the request requestID; a server
// error's cause never reaches it.
func (e *Error) Body(requestID string) Body {
	return Body{
		Type:      e.Code.Type(),
		Title:     e.Code.Title,
		Status:    e.Code.Status,
		Code:      e.Code.Name,
		Detail:    clipTo(e.Detail, detailLimit),
		RequestID: requestID,
	}
}

// Encode is the problem's body as Write sends it: its JSON and a newline.
func Encode(p *Error, requestID string) []byte {
	b, err := json.Marshal(p.Body(requestID))
	if err != nil { // a Body of strings and an int always marshals
		panic(err)
	}
	return append(b, '\n')
}
