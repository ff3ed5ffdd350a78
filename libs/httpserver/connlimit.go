package httpserver

import (
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// limitListener holds at most cap(slots) connections open at once. Accept
// waits for one to close, holding the one connection it accepted:
// further connections wait in the kernel's accept queue, where they cost
// the process nothing, instead of each holding a
// goroutine, buffers and up to MaxHeaderBytes of a header block that may
// never finish. (golang.org/x/net/netutil.LimitListener works the same
// way; this one also gives the memory of a flood back when it ends.)
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	// full is set when half the slots or more were taken; drained runs,
	// at most once per drainInterval, when the listener is back to a
	// quarter of its cap after that (or at the end of the interval, if it
	// came sooner).
	// The connections of a flood are gone then, and what they held goes
	// back to the system at once (freeMemory: two forced collections)
	// rather than at the runtime's pace, which under a high
	// GOGC keeps several times the live heap for minutes.
	full          atomic.Bool
	mu            sync.Mutex
	lastDrain     time.Time
	pending       bool // a drain waits for the interval to end
	drained       func()
	drainInterval time.Duration

	// atCap runs when every slot is taken and a connection waits to be
	// accepted: the server closes its idle keep-alive connections then
	// (PublicServer.CloseIdle). An ingress keeps a pool of idle connections per
	// worker, which together may exceed the cap; without this a new
	// connection would wait behind idle ones until their idle timeout,
	// and the ingress would answer 502. Connections still sending their
	// headers are not idle: they leave at the header timeout.
	atCap func()
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{
		Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}),
		drained: freeMemory, drainInterval: 10 * time.Second,
	}
}

// freeMemory gives the memory a flood's connections held back to the
// system: two collections, because the first only moves what servers keep
// in sync.Pools (fasthttp's per-connection buffers at the edge) to the
// pools' victim caches, and the second frees it; FreeOSMemory then returns
// the pages at once.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.acquire() {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if len(l.slots) >= (cap(l.slots)+1)/2 && !l.full.Load() {
		l.full.Store(true)
	}
	return &limitedConn{Conn: c, release: l.release}, nil
}

// atCapInterval is how often a connection waiting for a slot asks the
// server again to close its idle connections: one that was busy when it
// last asked may be idle now.
const atCapInterval = 50 * time.Millisecond

// acquire takes a slot for a connection just accepted, waiting while every
// slot is taken and asking the server to make room meanwhile (atCap). It
// holds one accepted connection at most, a descriptor and nothing more:
// the rest wait in the kernel's accept queue. It reports false once the
// listener is closed.
func (l *limitListener) acquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	tick := time.NewTicker(atCapInterval)
	defer tick.Stop()
	for {
		if l.atCap != nil {
			l.atCap()
		}
		select {
		case l.slots <- struct{}{}:
			return true
		case <-l.done:
			return false
		case <-tick.C:
		}
	}
}

// release frees a slot and, when a full listener has drained, gives the
// memory its connections held back.
func (l *limitListener) release() {
	<-l.slots
	if l.full.Load() && len(l.slots) <= cap(l.slots)/4 {
		l.drain()
	}
}

// drain runs drained now, or once drainInterval has passed since the last
// time, if the listener is still drained then.
func (l *limitListener) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full.Load() || l.pending {
		return
	}
	if wait := l.drainInterval - time.Since(l.lastDrain); wait > 0 {
		l.pending = true
		time.AfterFunc(wait, func() {
			l.mu.Lock()
			l.pending = false
			l.mu.Unlock()
			if len(l.slots) <= cap(l.slots)/4 {
				l.drain()
			}
		})
		return
	}
	l.full.Store(false)
	l.lastDrain = time.Now()
	go l.drained()
}

// Close stops accepting; connections already accepted keep their slots
// until they close.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitedConn gives its slot back once, on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
