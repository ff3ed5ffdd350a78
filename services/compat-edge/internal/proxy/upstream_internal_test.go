package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

func TestTheRetryDialsAnotherAddressFirst(t *testing.T) {
	for _, tc := range []struct {
		ips   []string
		avoid string
		want  []string
	}{
		{[]string{"10.0.0.1", "10.0.0.2"}, "10.0.0.1:8080", []string{"10.0.0.2:8080", "10.0.0.1:8080"}},
		{[]string{"10.0.0.1", "10.0.0.2"}, "10.0.0.2:8080", []string{"10.0.0.1:8080", "10.0.0.2:8080"}},
		{[]string{"10.0.0.1"}, "10.0.0.1:8080", []string{"10.0.0.1:8080"}},
		{[]string{"10.0.0.1", "fd00::2"}, "", []string{"10.0.0.1:8080", "[fd00::2]:8080"}},
	} {
		require.Equal(t, tc.want, preferOtherAddresses(tc.ips, "8080", tc.avoid), "avoiding %q", tc.avoid)
	}
}

// staleFirstDial makes u's pooled client dial a stopped replica first, as
// a stale DNS answer would: the connection is refused, nothing is sent.
func staleFirstDial(t *testing.T, u *upstream) *atomic.Int32 {
	var dials atomic.Int32
	dial := u.pooled.Dial
	u.pooled.Dial = func(addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return nil, &dialError{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
		}
		return dial(addr)
	}
	return &dials
}

// echoOwner answers every request 201 with the body it read, and sends
// what it read on got.
func echoOwner(t *testing.T) (*url.URL, chan string) {
	got := make(chan string, 4)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(b)
	}))
	t.Cleanup(owner.Close)
	u, _ := url.Parse(owner.URL)
	return u, got
}

// post is a POST to the owner at target, as forward builds one, and the
// response to read its answer into; both are released at the test's end.
func post(t *testing.T, target *url.URL, path string) (*fasthttp.Request, *fasthttp.Response) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	t.Cleanup(func() {
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
	})
	req.Header.SetMethod(http.MethodPost)
	req.Header.SetRequestURI(path)
	req.Header.SetHost(target.Host)
	req.UseHostHeader = true
	return req, resp
}

// Nothing was sent when the connection could not be dialled: a POST
// without an Idempotency-Key is sent again, whole.
func TestAnyRequestIsResentWhenItsConnectionCouldNotBeDialled(t *testing.T) {
	target, got := echoOwner(t)
	u := newUpstream(routing.Readiness, target, 4)
	staleFirstDial(t, u)
	req, resp := post(t, target, "/api/x402/dispute-readiness")
	req.SetBodyString(`{"claim":1}`)

	require.NoError(t, u.do(req, resp, true))
	require.Equal(t, http.StatusCreated, resp.StatusCode())
	body, err := io.ReadAll(resp.BodyStream())
	require.NoError(t, err)
	require.NoError(t, resp.CloseBodyStream())
	require.Equal(t, `{"claim":1}`, string(body), "a POST without a key is sent again when it was never sent")
	require.Equal(t, `{"claim":1}`, <-got)
	require.Empty(t, got, "the owner got it once")
}

// A streamed body (chunked, or larger than the edge reads whole) is sent
// again too when its connection could not be dialled: not a byte of it was
// read.
func TestAStreamedRequestIsResentWhenItsConnectionCouldNotBeDialled(t *testing.T) {
	target, got := echoOwner(t)
	u := newUpstream(routing.Filings, target, 4)
	dials := staleFirstDial(t, u)
	req, resp := post(t, target, "/api/v2/case-drafts")
	req.SetBodyStream(io.MultiReader(strings.NewReader(`{"claim":"unpaid"}`)), -1)

	require.NoError(t, u.do(req, resp, false))
	_, _ = io.Copy(io.Discard, resp.BodyStream())
	require.NoError(t, resp.CloseBodyStream())
	require.Equal(t, http.StatusCreated, resp.StatusCode())
	require.Equal(t, `{"claim":"unpaid"}`, <-got, "the owner got it once, whole")
	require.Empty(t, got)
	require.EqualValues(t, 1, dials.Load(), "the pooled client dialled once; the resend dialled on its own")
}
