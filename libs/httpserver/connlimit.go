package httpserver

import (
	"net"
	"sync"
)

// limitListener holds at most cap(slots) connections open at once. Accept
// waits for one to close: further connections wait in the kernel's accept
// queue, where they cost the process nothing, instead of each holding a
// goroutine, buffers and up to MaxHeaderBytes of a header block that may
// never finish. (golang.org/x/net/netutil.LimitListener works the same
// way; this one is small enough to keep here.)
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
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
