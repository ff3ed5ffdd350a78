// Package logging builds the JSON slog logger every service passes around.
// Lines logged with a context carry that request's id and trace id, so a log
// line, a problem body and a trace can be joined on either.
package logging

import (
	"context"
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/requestid"
)

// New returns a JSON logger that tags every line with the service name.
// Written to a Batch, it flushes the batch after every warning and error,
// and LogRequest encodes the access line itself.
func New(w io.Writer, service string, level slog.Level) *slog.Logger {
	json := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	h := contextHandler{Handler: json.WithAttrs([]slog.Attr{slog.String("service", service)})}
	if b, ok := w.(*Batch); ok {
		h.urgent = b.Flush
		h.line = newRequestLine(b, service)
	}
	return slog.New(h)
}

// ParseLevel reads debug, info, warn or error; anything else is info.
func ParseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// contextHandler adds request_id, trace_id and span_id from the record's
// context and, after a warning or an error, writes out the lines batched
// before it (urgent, when the output is a Batch).
type contextHandler struct {
	slog.Handler
	urgent func() error
	// line encodes LogRequest's access line for the handler New made
	// writing to a Batch; nil once attributes or a group are added, which
	// the access line's encoding does not know.
	line *requestLine
}

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := requestid.FromContext(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn && h.urgent != nil {
		if ferr := h.urgent(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{Handler: h.Handler.WithAttrs(attrs), urgent: h.urgent}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{Handler: h.Handler.WithGroup(name), urgent: h.urgent}
}
