package httpserver

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The memory of a flood is given back once, when a listener that held
// half its cap or more has drained to a quarter of it; ordinary comings
// and goings below that never force a collection.
func TestALimitListenerThatWasFullGivesMemoryBackWhenDrained(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLimitListener(ln, 4)
	t.Cleanup(func() { l.Close() })
	drained := make(chan struct{}, 8)
	l.drained = func() { drained <- struct{}{} }
	l.drainInterval = 0

	open := func(n int) []net.Conn {
		var out []net.Conn
		for range n {
			c, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			s, err := l.Accept()
			require.NoError(t, err)
			out = append(out, s)
		}
		return out
	}
	none := func(why string) {
		select {
		case <-drained:
			t.Fatal(why)
		default:
		}
	}

	for range 3 {
		for _, c := range open(1) {
			require.NoError(t, c.Close())
		}
	}
	none("a listener that never held half its cap forces nothing")

	full := open(4)
	require.NoError(t, full[0].Close())
	none("most of the cap still open: the flood is not over")
	require.NoError(t, full[1].Close())
	none("half the cap still open: the flood is not over")
	require.NoError(t, full[2].Close()) // a quarter of the cap left
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("the drained listener did not give its memory back")
	}
	require.NoError(t, full[3].Close())
	_ = full[3].Close() // a second Close frees no second slot
	none("once per flood")
	require.Empty(t, l.slots, "every slot is free again")
}

// A flood that drains again within the interval of the last give-back is
// given back when the interval ends.
func TestASecondDrainWithinTheIntervalWaitsForIt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLimitListener(ln, 1)
	t.Cleanup(func() { l.Close() })
	drained := make(chan time.Time, 8)
	l.drained = func() { drained <- time.Now() }
	l.drainInterval = 200 * time.Millisecond

	flood := func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		s, err := l.Accept()
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	flood()
	first := <-drained
	flood() // full and drained again at once
	select {
	case second := <-drained:
		require.GreaterOrEqual(t, second.Sub(first), l.drainInterval, "not before the interval ends")
	case <-time.After(5 * time.Second):
		t.Fatal("the second flood's memory was never given back")
	}
}

// An ingress keeps idle keep-alive connections open, per worker, and
// together they may fill the cap: a new connection is then served at
// once, because the server closes its idle connections to make room,
// not after their idle timeout. A connection in the middle of a request
// is not idle and keeps its slot.
func TestIdleKeepAlivesMakeRoomAtTheCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLimitListener(ln, 2)
	release := make(chan struct{})
	srv := &http.Server{
		IdleTimeout: time.Hour, // far beyond the test: only the cap closes idle connections
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				<-release
			}
			_, _ = w.Write([]byte("ok"))
		}),
	}
	l.atCap = netHTTP{srv}.CloseIdle
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { close(release); _ = srv.Close() })
	url := "http://" + ln.Addr().String()

	// One connection stays busy, one stays idle after its request: the
	// cap of two is full.
	busy := &http.Client{Transport: &http.Transport{}}
	slow := make(chan error, 1)
	go func() {
		resp, err := busy.Get(url + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	require.Eventually(t, func() bool { return len(l.slots) == 1 }, 5*time.Second, 10*time.Millisecond)
	idle := &http.Client{Transport: &http.Transport{}}
	resp, err := idle.Get(url + "/")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Len(t, l.slots, 2, "the cap is full: one busy, one idle keep-alive")

	fresh := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	resp, err = fresh.Get(url + "/")
	require.NoError(t, err, "a new connection is served at the cap: the idle one made room")
	resp.Body.Close()
	select {
	case err := <-slow:
		t.Fatalf("the busy connection was closed: %v", err)
	default:
	}
}
