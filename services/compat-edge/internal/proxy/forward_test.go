package proxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// edgeWithOwner returns an edge whose owner o is h, the other owners
// echoing what they received.
func edgeWithOwner(t *testing.T, o routing.Owner, h http.HandlerFunc) edge {
	t.Helper()
	ups := allUpstreams(t)
	owner := httptest.NewServer(h)
	t.Cleanup(owner.Close)
	u, _ := url.Parse(owner.URL)
	ups[o] = u
	return newEdge(t, ups)
}

// edgeBefore returns an edge whose filings owner is h.
func edgeBefore(t *testing.T, h http.HandlerFunc) edge {
	t.Helper()
	return edgeWithOwner(t, routing.Filings, h)
}

// The owner gets the partner's end-to-end headers only: none of one
// connection (RFC 9110 section 7.6.1), none the Connection header names,
// no Upgrade (no route offers one: a client's h2c offer is answered in
// HTTP/1.1); "TE: trailers" is kept. The partner gets the owner's
// end-to-end headers only.
func TestOnlyEndToEndHeadersCrossTheEdge(t *testing.T) {
	got := make(chan http.Header, 1)
	e := edgeBefore(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Connection", "X-Owner-Hop")
		w.Header().Set("X-Owner-Hop", "for the edge alone")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-Owner", "kept")
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /api/v2/integration HTTP/1.1\r\nHost: edge\r\n"+
		"Connection: Upgrade, HTTP2-Settings, X-Client-Hop\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"+
		"X-Client-Hop: for the edge alone\r\nProxy-Authorization: Basic c2VjcmV0\r\nTE: trailers\r\nX-Partner: kept\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "answered in HTTP/1.1, not switched")

	h := <-got
	for _, name := range []string{"Upgrade", "Http2-Settings", "X-Client-Hop", "Proxy-Authorization"} {
		require.Empty(t, h.Values(name), "%s stays at the edge", name)
	}
	require.Equal(t, "kept", h.Get("X-Partner"))
	require.Equal(t, "trailers", h.Get("Te"))
	require.Empty(t, h.Values("User-Agent"), "no user agent the partner did not send")

	require.Empty(t, resp.Header.Values("X-Owner-Hop"))
	require.Empty(t, resp.Header.Values("Keep-Alive"))
	require.Equal(t, "kept", resp.Header.Get("X-Owner"))
}

// A query parameter that Go's parser refuses (a ';', a bad escape), which
// another reader might take differently, never reaches the owner; the rest
// does, in order.
func TestAQueryOwnersCouldReadDifferentlyIsCleaned(t *testing.T) {
	got := make(chan string, 1)
	e := edgeBefore(t, func(_ http.ResponseWriter, r *http.Request) { got <- r.URL.RawQuery })
	for _, tc := range []struct{ sent, owner string }{
		{"limit=10&cursor=abc", "limit=10&cursor=abc"},
		{"limit=10;admin=true&cursor=abc", "cursor=abc"},
		{"cursor=%zz&limit=10", "limit=10"},
		{"q=caf%C3%A9", "q=caf%C3%A9"},
	} {
		resp, err := http.Get(e.url + "/api/v2/integration?" + tc.sent)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tc.owner, <-got, "sent %q", tc.sent)
	}
}

// An answer the owner streams (no Content-Length) reaches the partner as
// it comes: the first part before the owner has written the second.
func TestAStreamedAnswerIsPassedOnAsItComes(t *testing.T) {
	second := make(chan struct{})
	e := edgeBefore(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: queued 1 of 2\n\n")
		w.(http.Flusher).Flush()
		<-second
		_, _ = io.WriteString(w, "data: queued 2 of 2\n\n")
	})
	resp, err := http.Get(e.url + "/api/v2/integration")
	require.NoError(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "data: queued 1 of 2\n", line, "the first event, while the owner still holds the second")
	close(second)
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "\ndata: queued 2 of 2\n\n", string(rest))
}

// brokenOff is an owner that announces length bytes, sends 100 and closes
// the connection.
func brokenOff(length string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", length)
		_, _ = io.WriteString(w, strings.Repeat("x", 100))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

// An owner that breaks off its answer midway leaves the partner with a
// truncated answer (or none, when the edge had not yet sent the headers),
// never one that looks whole: a large one is passed on as it comes, and
// cut short.
func TestALargeAnswerBrokenOffMidwayIsNeverWhole(t *testing.T) {
	e := edgeBefore(t, brokenOff("100000"))
	resp, err := http.Get(e.url + "/api/v2/integration")
	if err != nil {
		return // the connection ended before the edge's headers left it
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "100 of 100,000 bytes, then the end: a truncated answer")
}

// A small answer is read whole before the partner hears of it: one its
// owner breaks off is the edge's 502.
func TestASmallAnswerBrokenOffMidwayIsA502(t *testing.T) {
	e := edgeBefore(t, brokenOff("1000"))
	resp, err := http.Get(e.url + "/api/v2/integration")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Equal(t, "upstream_unavailable", problemOf(t, resp).Code)
}

// Trailers the owner sends after its body reach the partner.
func TestTrailersCrossTheEdge(t *testing.T) {
	e := edgeBefore(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", "Digest")
		_, _ = io.WriteString(w, "evidence bytes")
		w.Header().Set("Digest", "sha-256=:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=:")
	})
	resp, err := http.Get(e.url + "/api/v2/integration")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "evidence bytes", string(body))
	require.Equal(t, "sha-256=:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=:", resp.Trailer.Get("Digest"))
}

// A request without a Content-Type reaches its owner without one: the
// owner decides what a body without a media type is, not the edge.
func TestARequestWithoutAContentTypeReachesTheOwnerWithoutOne(t *testing.T) {
	got := make(chan []string, 1)
	e := edgeBefore(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Values("Content-Type")
		w.WriteHeader(http.StatusNoContent)
	})
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/v2/case-drafts", strings.NewReader(`{"draft":1}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Empty(t, <-got)
}

// The authorization server's token request is a form POST without an
// Idempotency-Key (RFC 6749 section 4.4), and its refusals are RFC 6749
// errors, not problems: the edge passes both as they are, the form body
// and its media type to the owner, the owner's JSON error and its
// no-store to the client.
func TestAnOAuthTokenRequestCrossesTheEdgeAsIs(t *testing.T) {
	type request struct {
		contentType, body, key string
	}
	got := make(chan request, 1)
	e := edgeWithOwner(t, routing.Accounts, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Header.Get("Content-Type"), string(body), r.Header.Get("Idempotency-Key")}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"unsupported_grant_type"}`)
	})
	form := "grant_type=password&username=a&password=b"
	resp, err := http.Post(e.url+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, request{"application/x-www-form-urlencoded", form, ""}, <-got)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.JSONEq(t, `{"error":"unsupported_grant_type"}`, string(body), "the owner's RFC 6749 error, not a problem of the edge")
}
