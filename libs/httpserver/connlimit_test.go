package httpserver_test

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
)

// Connections that never finish their headers hold a slot each: at the cap
// the next connection is not served until one of them goes, and then it
// is.
func TestMaxConnectionsHoldsPartialHeaderBlocksToTheCap(t *testing.T) {
	cfg := loopbackConfig()
	cfg.MaxConnections = 2
	cfg.ReadHeaderTimeout = time.Minute // only the test closes the slow ones
	s := httpserver.New(cfg, quietDeps())
	s.Router().GET("/x", func(c *gin.Context) { c.String(http.StatusOK, "served") })
	public, _ := running(t, s)
	addr := strings.TrimPrefix(public, "http://")

	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	var slow []net.Conn
	for range 2 {
		c := dial()
		_, err := c.Write([]byte("GET /x HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", 1000)))
		require.NoError(t, err)
		slow = append(slow, c)
	}
	next := dial() // the kernel completes the handshake; the server has not accepted it
	_, err := next.Write([]byte("GET /x HTTP/1.1\r\nHost: a\r\n\r\n"))
	require.NoError(t, err)
	require.NoError(t, next.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = bufio.NewReader(next).ReadByte()
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "at the cap nothing answers the next connection: %v", err)

	require.NoError(t, slow[0].Close())
	require.NoError(t, next.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(next), nil)
	require.NoError(t, err, "a closed connection gives its slot to the one waiting")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestMaxConnectionsMustNotBeNegative(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	require.Zero(t, cfg.MaxConnections, "services behind the edge have no cap by default")
	require.NoError(t, cfg.Validate())
	cfg.MaxConnections = -1
	require.ErrorContains(t, cfg.Validate(), "max connections")
}
