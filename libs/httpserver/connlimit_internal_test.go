package httpserver

import (
	"net"
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
