package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/requestid"
)

// requestLines logs r once through the Batch logger, whose line LogRequest
// encodes itself, and once through slog (a logger on a plain writer), and
// returns both lines with their times blanked: the one field that differs.
func requestLines(t testing.TB, ctx context.Context, r logging.Request) (encoded, slogs string) {
	t.Helper()
	var viaBatch, viaSlog bytes.Buffer
	b := logging.NewBatch(&viaBatch, time.Hour)
	logging.LogRequest(ctx, logging.New(b, "compat-edge", slog.LevelInfo), r)
	require.NoError(t, b.Flush())
	logging.LogRequest(ctx, logging.New(&viaSlog, "compat-edge", slog.LevelInfo), r)
	blank := regexp.MustCompile(`^\{"time":"[^"]+"`)
	return blank.ReplaceAllString(viaBatch.String(), `{"time":""`), blank.ReplaceAllString(viaSlog.String(), `{"time":""`)
}

func tracedContext() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	})
	return trace.ContextWithSpanContext(requestid.NewContext(context.Background(), "req_01JEX3"), sc)
}

func TestLogRequestWritesTheLineSlogWrites(t *testing.T) {
	cases := map[string]struct {
		ctx context.Context
		r   logging.Request
	}{
		"a traced request with its id": {tracedContext(), logging.Request{
			Method: "GET", Route: "/api/v2/integration", Path: "/api/v2/integration?x=1", Client: "203.0.113.9",
			Status: 200, Bytes: 1234, DurationMicros: 417,
		}},
		"no ids in the context": {context.Background(), logging.Request{
			Method: "POST", Route: "unmatched", Path: "/", Client: "2001:db8::1", Status: 404,
		}},
		"a path every escape applies to": {tracedContext(), logging.Request{
			Method: "GET", Route: "/x", Path: "/a\"b\\c\n\r\t\x00\x1f\x7f<>&é\u2028\u2029\xff\xc3", Client: "",
			Status: 400, Bytes: -1, DurationMicros: -5,
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			encoded, slogs := requestLines(t, c.ctx, c.r)
			require.Equal(t, slogs, encoded)
			var line map[string]any
			require.NoError(t, json.Unmarshal([]byte(encoded), &line))
			require.Equal(t, logging.RequestMessage, line["msg"])
			require.Equal(t, "compat-edge", line["service"])
		})
	}
}

func TestLogRequestKeepsTheLoggersLevel(t *testing.T) {
	var out bytes.Buffer
	b := logging.NewBatch(&out, time.Hour)
	logging.LogRequest(context.Background(), logging.New(b, "filings", slog.LevelWarn), logging.Request{Method: "GET", Status: 200})
	require.NoError(t, b.Flush())
	require.Empty(t, out.String(), "an access line is INFO: a logger at WARN writes none")
}

func TestLogRequestOnALoggerWithMoreAttributesGoesThroughSlog(t *testing.T) {
	var out bytes.Buffer
	b := logging.NewBatch(&out, time.Hour)
	logger := logging.New(b, "filings", slog.LevelInfo).With("replica", "r1")
	logging.LogRequest(context.Background(), logger, logging.Request{Method: "GET", Status: 200})
	require.NoError(t, b.Flush())
	var line map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &line))
	require.Equal(t, "r1", line["replica"], "the encoding knows only the service attribute; slog writes the rest")
}

func FuzzLogRequestWritesTheLineSlogWrites(f *testing.F) {
	f.Add("GET", "/api/v2/cases/{id}", "/api/v2/cases/c_1?a=b", "198.51.100.7", 200, 52, int64(90), true)
	f.Add("P\x00ST", "\u2028", "\xff\xfe\"\\", "::1", 599, 0, int64(-1), false)
	f.Fuzz(func(t *testing.T, method, route, path, client string, status, n int, micros int64, traced bool) {
		ctx := context.Background()
		if traced {
			ctx = tracedContext()
		}
		encoded, slogs := requestLines(t, ctx, logging.Request{
			Method: method, Route: route, Path: path, Client: client, Status: status, Bytes: n, DurationMicros: micros,
		})
		require.Equal(t, slogs, encoded)
	})
}

func BenchmarkLogRequest(b *testing.B) {
	ctx := tracedContext()
	r := logging.Request{Method: "GET", Route: "/api/v2/integration", Path: "/api/v2/integration", Client: "203.0.113.9", Status: 200, Bytes: 1234, DurationMicros: 417}
	for name, logger := range map[string]*slog.Logger{
		"encoded": logging.New(logging.NewBatch(discard{}, time.Hour), "compat-edge", slog.LevelInfo),
		"slog":    logging.New(discard{}, "compat-edge", slog.LevelInfo),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				logging.LogRequest(ctx, logger, r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
