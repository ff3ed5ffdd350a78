package nginxtest_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/nginxtest"
)

// nginx with its default buffers passes a response whose header block fits
// one 4 KiB page, and refuses with 502 one that does not: the failure the
// platform's header bound exists for.
func TestDefaultBuffersRefuseAHeaderBlockOverFourKiB(t *testing.T) {
	var conns sync.Map
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("header"))
		w.Header().Set("X-Padding", strings.Repeat("a", n))
		_, _ = io.WriteString(w, "hello")
	}))
	upstream.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Store(c.RemoteAddr().String(), true)
		}
	}
	upstream.Start()
	t.Cleanup(upstream.Close)
	ngx := nginxtest.Start(t, strings.TrimPrefix(upstream.URL, "http://"))

	get := func(n int) (int, string) {
		resp, err := http.Get(ngx.URL + "/?header=" + strconv.Itoa(n))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for range 3 {
		status, body := get(3000)
		require.Equal(t, http.StatusOK, status, ngx.ErrorLog())
		require.Equal(t, "hello", body)
	}
	status, _ := get(5000)
	require.Equal(t, http.StatusBadGateway, status)
	require.Contains(t, ngx.ErrorLog(), "upstream sent too big header")

	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	require.Less(t, n, 4, "nginx keeps its upstream connections alive")
}
