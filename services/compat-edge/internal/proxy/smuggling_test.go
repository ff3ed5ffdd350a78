package proxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// ownerSaw is one request as filings received it from the edge.
type ownerSaw struct {
	path             string
	contentLength    int64
	transferEncoding []string
	body             string
}

// recordingFilings is a filings that records every request it reads.
func recordingFilings(t *testing.T) (edge, func() []ownerSaw) {
	var mu sync.Mutex
	var saw []ownerSaw
	e := edgeWithOwner(t, routing.Filings, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		saw = append(saw, ownerSaw{r.URL.Path, r.ContentLength, r.TransferEncoding, string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	return e, func() []ownerSaw {
		mu.Lock()
		defer mu.Unlock()
		return append([]ownerSaw(nil), saw...)
	}
}

// exchangeRaw writes raw to the edge on a connection of its own and reads
// every answer until the edge closes it or goes quiet.
func exchangeRaw(t *testing.T, e edge, raw string) []*http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	var answers []*http.Response
	for {
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return answers
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answers = append(answers, resp)
		if resp.Close {
			return answers
		}
	}
}

func statuses(answers []*http.Response) []int {
	var codes []int
	for _, a := range answers {
		codes = append(codes, a.StatusCode)
	}
	return codes
}

// With both Transfer-Encoding and Content-Length the chunked framing is
// the one read (RFC 9112, section 6.3), and the owner gets the edge's own
// framing: what follows the chunked body is the partner's next request,
// checked and routed as one, never bytes of the first.
func TestTheOwnerGetsTheEdgesFramingNeverThePartners(t *testing.T) {
	e, saw := recordingFilings(t)
	answers := exchangeRaw(t, e, "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"5\r\nhello\r\n0\r\n\r\n"+
		"GET /api/nobody-owns-this HTTP/1.1\r\nHost: edge\r\n\r\n")
	require.Equal(t, []int{http.StatusOK, http.StatusNotFound}, statuses(answers), "two requests, the second refused by the edge itself")
	got := saw()
	require.Len(t, got, 1)
	require.Equal(t, "/api/v2/case-drafts", got[0].path)
	require.Equal(t, "hello", got[0].body)
	require.Equal(t, []string{"chunked"}, got[0].transferEncoding, "the edge's framing")
	require.EqualValues(t, -1, got[0].contentLength, "never the partner's Content-Length beside it")
}

// Framings fasthttp cannot read one way only are refused with 400 and the
// connection closed: nothing reaches an owner, and nothing after them on
// the connection is read.
func TestAmbiguousFramingIsRefused(t *testing.T) {
	e, saw := recordingFilings(t)
	for name, raw := range map[string]string{
		"two Content-Lengths":           "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nhello",
		"a coding other than chunked":   "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"two Transfer-Encodings":        "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"a Content-Length not a number": "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nContent-Length: 5, 5\r\n\r\nhello",
		"an HTTP/2 preface":             "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			answers := exchangeRaw(t, e, raw+"GET /api/filings/after HTTP/1.1\r\nHost: edge\r\n\r\n")
			require.NotEmpty(t, answers)
			require.Equal(t, http.StatusBadRequest, answers[0].StatusCode)
			require.Len(t, answers, 1, "the connection is closed after the refusal")
		})
	}
	require.Empty(t, saw(), "nothing reached the owner")
}

// The body of a request the edge answers itself (a 404, a 410, a limit's
// refusal) is read and dropped, or the connection closed: never read as
// the next request, which would pass the edge's checks unseen.
func TestTheBodyOfARefusedRequestIsNeverTheNextRequest(t *testing.T) {
	e, saw := recordingFilings(t)
	smuggled := "GET /api/filings/smuggled HTTP/1.1\r\nHost: edge\r\n\r\n"
	answers := exchangeRaw(t, e, "POST /api/nobody-owns-this HTTP/1.1\r\nHost: edge\r\nContent-Length: "+
		strconv.Itoa(len(smuggled))+"\r\n\r\n"+smuggled)
	require.Equal(t, []int{http.StatusNotFound}, statuses(answers))

	big := strings.Repeat("x", 70<<10) + smuggled
	answers = exchangeRaw(t, e, "POST /api/nobody-owns-this HTTP/1.1\r\nHost: edge\r\nContent-Length: "+
		strconv.Itoa(len(big))+"\r\n\r\n"+big)
	require.Equal(t, []int{http.StatusNotFound}, statuses(answers), "a body larger than the edge drops: the connection is closed")
	require.True(t, answers[0].Close)
	require.Empty(t, saw(), "the owner saw no smuggled request")
}

// A connection that sends nothing before the header deadline is closed
// without an answer, as net/http closes it: a client pool that dialed
// ahead of need must not find a 400 it never asked for on a connection it
// has not used. One that began a request and stalled is told why.
func TestASilentConnectionIsClosedWithoutAnAnswer(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	e := newEdgeWith(t, allUpstreams(t), cfg, proxy.Forwarding{})
	addr := strings.TrimPrefix(e.url, "http://")

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(silent)
	require.NoError(t, err, "closed by the edge, not left to the test's deadline")
	require.Empty(t, got, "no answer on a connection that asked nothing")

	stalled, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer stalled.Close()
	_, err = io.WriteString(stalled, "GET /api/v2/integration HTTP/1.1\r\nHost: edge\r\n")
	require.NoError(t, err)
	_ = stalled.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(stalled), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a stalled request is answered")
	body, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(body), "did not arrive in time")
}
