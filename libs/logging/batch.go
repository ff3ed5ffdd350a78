package logging

import (
	"io"
	"sync"
	"time"
)

// Batch is the writer a service logs through: it gathers whole lines and
// writes them to the underlying writer in batches, at most Interval after
// the first line of a batch or as soon as the batch reaches MaxBytes,
// instead of one write system call per line. At the partner traffic the edge
// carries, one access-log line per request made that system call a
// measurable share of each request's CPU (docs/observability.md, "Logs").
//
// The contract, what a reader of the log can rely on:
//   - every line is written whole, in the order it was logged;
//   - a line waits at most Interval (100 ms by default) before it is
//     written;
//   - a warning or an error is written at once, with every line before it
//     (the logger New returns flushes after each), so the cause of a failure
//     never waits behind a batch;
//   - Close writes what is left; a service closes its Batch last, after
//     everything else has logged.
//
// A process that dies without closing it (SIGKILL, a crash outside the
// recovered handlers) loses the lines of the last Interval at most.
type Batch struct {
	w        io.Writer
	interval time.Duration
	maxBytes int

	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer // armed while buf holds lines
	closed bool
}

// DefaultBatchInterval bounds how long a line waits to be written.
const DefaultBatchInterval = 100 * time.Millisecond

// defaultBatchBytes is written at once, whatever the interval: a burst
// never holds more than this in memory.
const defaultBatchBytes = 64 << 10

// NewBatch returns a Batch writing to w, each line within interval.
func NewBatch(w io.Writer, interval time.Duration) *Batch {
	return &Batch{w: w, interval: interval, maxBytes: defaultBatchBytes, buf: make([]byte, 0, defaultBatchBytes)}
}

// Write keeps p, one whole line as slog's handlers write them, for the next
// batch. It never blocks on the underlying writer unless the batch is full.
func (b *Batch) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		// Lines logged after Close (a deferred log in a shutdown path)
		// go straight through rather than being lost.
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= b.maxBytes {
		return len(p), b.flushLocked()
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.interval, func() { _ = b.Flush() })
	} else if len(b.buf) == len(p) {
		b.timer.Reset(b.interval) // the first line of a new batch
	}
	return len(p), nil
}

// Flush writes every line kept so far.
func (b *Batch) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

// flushLocked writes the batch. A batch the writer refused is dropped, as
// a line written directly would have been; the next batch tries again.
func (b *Batch) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	_, err := b.w.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Close writes what is left; later lines are written one by one.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	b.closed = true
	return err
}
