package logging

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/requestid"
)

// RequestMessage is the message of the access line, one per request.
const RequestMessage = "http request"

// Request is what a request's access line says about it.
type Request struct {
	Method string
	Route  string // the template it is counted under
	Path   string
	Client string
	Status int
	Bytes  int
	// DurationMicros is an integer: slog writes a float through
	// encoding/json, which was a tenth of the edge's time per request.
	DurationMicros int64
}

// attrs are the line's fields in the order the line has them.
func (r Request) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("method", r.Method),
		slog.String("route", r.Route),
		slog.String("path", r.Path),
		slog.String("client", r.Client),
		slog.Int("status", r.Status),
		slog.Int("bytes", r.Bytes),
		slog.Int64("duration_us", r.DurationMicros),
	}
}

// LogRequest writes a request's access line at INFO: the line
//
//	logger.LogAttrs(ctx, slog.LevelInfo, RequestMessage, <r's fields>...)
//
// writes, byte for byte (request_test.go holds the two to each other).
// It is the one line every request of every service logs, so a logger New
// made, writing to a Batch, has the line encoded here instead of through
// slog's handler: slog builds a record of ten attributes, escapes every
// key and walks each value's kind, which came to 7 % of the edge's CPU a
// request at partner traffic (docs/compatibility.md, "Where the edge's
// microseconds go"); appending the known fields costs a fifth of that. Any
// other logger (one with more attributes or a group, a test's writer, a
// handler of someone else's) gets the line through slog.
func LogRequest(ctx context.Context, logger *slog.Logger, r Request) {
	h, ok := logger.Handler().(contextHandler)
	if !ok || h.line == nil {
		logger.LogAttrs(ctx, slog.LevelInfo, RequestMessage, r.attrs()...)
		return
	}
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	buf := linePool.Get().(*[]byte)
	line := h.line.appendRequest((*buf)[:0], time.Now(), r, requestid.FromContext(ctx), trace.SpanContextFromContext(ctx))
	// A Batch copies the line, is safe for concurrent writers and keeps
	// the lines whole; a refused write is dropped, as slog drops it.
	_, _ = h.line.batch.Write(line)
	*buf = line
	linePool.Put(buf)
}

// linePool holds the buffers access lines are encoded into.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// requestLine is what the access line's encoding needs from the logger
// New made: the Batch it writes to and the service attribute every line
// starts with, escaped once.
type requestLine struct {
	batch   *Batch
	service []byte // `"service":"<name>"`
}

func newRequestLine(b *Batch, service string) *requestLine {
	return &requestLine{batch: b, service: appendJSONString([]byte(`"service":`), service)}
}

// appendRequest appends the line as slog's JSON handler writes it: time,
// level and message, the logger's service, the request's fields, then the
// ids contextHandler adds from the context.
func (l *requestLine) appendRequest(b []byte, t time.Time, r Request, requestID string, sc trace.SpanContext) []byte {
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"`+RequestMessage+`",`...)
	b = append(b, l.service...)
	b = appendJSONString(append(b, `,"method":`...), r.Method)
	b = appendJSONString(append(b, `,"route":`...), r.Route)
	b = appendJSONString(append(b, `,"path":`...), r.Path)
	b = appendJSONString(append(b, `,"client":`...), r.Client)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(r.Status), 10)
	b = strconv.AppendInt(append(b, `,"bytes":`...), int64(r.Bytes), 10)
	b = strconv.AppendInt(append(b, `,"duration_us":`...), r.DurationMicros, 10)
	if requestID != "" {
		b = appendJSONString(append(b, `,"request_id":`...), requestID)
	}
	if sc.IsValid() {
		tid, sid := sc.TraceID(), sc.SpanID()
		b = append(hex.AppendEncode(append(b, `,"trace_id":"`...), tid[:]), '"')
		b = append(hex.AppendEncode(append(b, `,"span_id":"`...), sid[:]), '"')
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s quoted as slog's JSON handler quotes it
// (encoding/json's rules without HTML escaping): printable ASCII but `"`
// and `\` as it is, \n \r \t and other control bytes escaped, each invalid
// UTF-8 byte as U+FFFD, and U+2028 and U+2029, which JavaScript reads as
// line ends, escaped.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	plain := 0 // s[plain:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		var escaped string
		size := 1
		switch {
		case c == '"':
			escaped = `\"`
		case c == '\\':
			escaped = `\\`
		case c == '\n':
			escaped = `\n`
		case c == '\r':
			escaped = `\r`
		case c == '\t':
			escaped = `\t`
		case c < 0x20:
			escaped = `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xf])
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				escaped = `\ufffd`
			case r == '\u2028':
				escaped = `\u2028`
			case r == '\u2029':
				escaped = `\u2029`
			default:
				i += size // a valid character beyond ASCII, as it is
				continue
			}
		}
		b = append(append(b, s[plain:i]...), escaped...)
		i += size
		plain = i
	}
	return append(append(b, s[plain:]...), '"')
}
