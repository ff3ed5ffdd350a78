package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/logging"
)

// recorder is an output that counts the writes it is given.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes++
	return r.buf.Write(p)
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Split(strings.TrimSuffix(r.buf.String(), "\n"), "\n")
}

func (r *recorder) writeCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

func messages(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		if l == "" {
			continue
		}
		var rec struct{ Msg string }
		require.NoError(t, json.Unmarshal([]byte(l), &rec), "every line is written whole: %q", l)
		out = append(out, rec.Msg)
	}
	return out
}

// Lines logged together reach the output in one write, whole and in
// order, within the interval: the access log costs one system call per
// batch, not per request.
func TestLinesAreWrittenInBatchesWithinTheInterval(t *testing.T) {
	out := &recorder{}
	batch := logging.NewBatch(out, 500*time.Millisecond)
	logger := logging.New(batch, "test", slog.LevelInfo)
	for i := range 100 {
		logger.Info("http request", "n", i)
	}
	require.Zero(t, out.writeCount(), "nothing is written before the interval")
	require.Eventually(t, func() bool { return out.writeCount() > 0 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, out.writeCount(), "one write for the batch")
	got := messages(t, out.lines())
	require.Len(t, got, 100)

	// A later line starts a new batch, with its own interval.
	logger.Info("later")
	require.Eventually(t, func() bool { return out.writeCount() == 2 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, "later", messages(t, out.lines())[100])
	require.NoError(t, batch.Close())
}

// A warning or an error is written at once, after every line logged
// before it: the cause of a failure never waits behind a batch.
func TestAWarningOrErrorIsWrittenAtOnceWithWhatPrecededIt(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelWarn, slog.LevelError} {
		out := &recorder{}
		batch := logging.NewBatch(out, time.Hour)
		logger := logging.New(batch, "test", slog.LevelInfo).With("component", "relay")
		logger.Info("first")
		logger.Info("second")
		logger.Log(context.Background(), level, "broken")
		require.Equal(t, []string{"first", "second", "broken"}, messages(t, out.lines()), level.String())
		require.Equal(t, 1, out.writeCount())
		require.NoError(t, batch.Close())
	}
}

// Close writes what is left; a line logged after it is written directly.
func TestCloseWritesWhatIsLeft(t *testing.T) {
	out := &recorder{}
	batch := logging.NewBatch(out, time.Hour)
	logger := logging.New(batch, "test", slog.LevelInfo)
	logger.Info("stopping")
	require.Zero(t, out.writeCount())
	require.NoError(t, batch.Close())
	require.Equal(t, []string{"stopping"}, messages(t, out.lines()))
	logger.Info("after close")
	require.Equal(t, []string{"stopping", "after close"}, messages(t, out.lines()))
}

// A burst never holds more than a batch's bytes: a full batch is written
// at once, whatever the interval.
func TestAFullBatchIsWrittenAtOnce(t *testing.T) {
	out := &recorder{}
	batch := logging.NewBatch(out, time.Hour)
	logger := logging.New(batch, "test", slog.LevelInfo)
	detail := strings.Repeat("x", 1000)
	for range 200 { // about 200 KB
		logger.Info("http request", "detail", detail)
	}
	require.GreaterOrEqual(t, out.writeCount(), 3)
	require.NoError(t, batch.Close())
	require.Len(t, messages(t, out.lines()), 200)
}

// Lines logged from many goroutines at once are each written whole.
func TestConcurrentLinesStayWhole(t *testing.T) {
	out := &recorder{}
	batch := logging.NewBatch(out, time.Millisecond)
	logger := logging.New(batch, "test", slog.LevelInfo)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				logger.Info("http request", "g", g, "i", i, "pad", strings.Repeat("y", 200))
			}
		})
	}
	wg.Wait()
	require.NoError(t, batch.Close())
	require.Len(t, messages(t, out.lines()), 8*500)
}
