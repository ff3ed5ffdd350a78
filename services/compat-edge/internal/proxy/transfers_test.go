package proxy_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/nginxtest"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

const mib = 1 << 20

// received is what the cases stand-in read of one request body.
type received struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Err    string `json:"err,omitempty"`
}

// hashingCases stands in for cases: it hashes every body as it arrives,
// counting the bytes so far, and reports each request's outcome (a body
// that ended in an error included) on done. GET .../evidence/{id} sends a
// file of the size the test set, in two parts: the second waits until
// release is closed.
type hashingCases struct {
	url      *url.URL
	sofar    atomic.Int64
	done     chan received
	contacts atomic.Int64

	fileSize  int64
	firstPart int64
	release   chan struct{}
}

func newHashingCases(t *testing.T) *hashingCases {
	t.Helper()
	hc := &hashingCases{done: make(chan received, 16), release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc.contacts.Add(1)
		if r.Method == http.MethodGet {
			hc.serveFile(w)
			return
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(h, counter{&hc.sofar}), r.Body)
		got := received{Path: r.URL.Path, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		if err != nil {
			got.Err = err.Error()
		}
		hc.done <- got
		if err != nil {
			return // the edge cut the body short: nobody to answer
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(got)
	}))
	t.Cleanup(ts.Close)
	hc.url, _ = url.Parse(ts.URL)
	return hc
}

func (hc *hashingCases) serveFile(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Length", strconv.FormatInt(hc.fileSize, 10))
	src := rand.NewChaCha8([32]byte{7})
	if _, err := io.CopyN(w, src, hc.firstPart); err != nil {
		return
	}
	select {
	case <-hc.release:
	case <-time.After(20 * time.Second):
		return // the client never saw the first part: the edge held it
	}
	_, _ = io.CopyN(w, src, hc.fileSize-hc.firstPart)
}

type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// newTransferEdge is an edge whose server default allows the upload limit
// (as the edge's configuration sets it) with cases at owner.
func newTransferEdge(t *testing.T, owner *url.URL, routes proxy.Config, server httpserver.Config) string {
	t.Helper()
	ups := map[routing.Owner]*url.URL{}
	for _, o := range routing.Owners {
		ups[o] = owner
	}
	server.MaxBodyBytes = max(routes.MaxBodyBytes, routes.MaxUploadBytes)
	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), ups, proxy.Forwarding{}, propagation.TraceContext{}, proxy.Compat{})
	require.NoError(t, err)
	return serveEdge(t, server, httpserver.Deps{Service: "compat-edge", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, forward, routes, []byte("{}"))
}

// heapWatch samples the heap in use while a transfer runs and reports the
// most it grew over the baseline taken at its start.
type heapWatch struct {
	base uint64
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func watchHeap() *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &heapWatch{base: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > w.peak.Load() {
				w.peak.Store(ms.HeapInuse)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// growth stops the sampling and returns the peak's growth in MiB.
func (w *heapWatch) growth() float64 {
	close(w.stop)
	<-w.done
	if w.peak.Load() < w.base {
		return 0
	}
	return float64(w.peak.Load()-w.base) / mib
}

// gatedBody is an upload of size pseudo-random bytes, hashed as it is
// read, that stops after its first part until the owner has received
// half of it: an edge that held the body before forwarding it would keep
// it waiting, and the upload fails.
type gatedBody struct {
	src       io.Reader
	hash      func([]byte)
	left      int64
	firstPart int64
	read      int64
	ownerHas  func() int64
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if b.read == b.firstPart {
		deadline := time.Now().Add(20 * time.Second)
		for b.ownerHas() < b.firstPart/2 {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("the owner received %d of the first %d bytes: the edge holds the body", b.ownerHas(), b.firstPart)
			}
			time.Sleep(time.Millisecond) // polling the owner's count, with a deadline
		}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	if b.read < b.firstPart && int64(len(p)) > b.firstPart-b.read {
		p = p[:b.firstPart-b.read]
	}
	n, err := b.src.Read(p)
	b.hash(p[:n])
	b.left -= int64(n)
	b.read += int64(n)
	return n, err
}

// A 100 MB exhibit reaches cases through the edge byte for byte, while
// the client is still sending it, and the edge holds a few buffers of it
// at a time, never the file.
func TestAHundredMegabyteUploadStreamsThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MB")
	}
	cases := newHashingCases(t)
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 16 * mib, MaxUploadBytes: 110 * mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())

	for _, path := range []string{"/api/cases/cs_1/evidence", "/api/disputes/d_1/evidence/file"} {
		t.Run(path, func(t *testing.T) {
			const size = 100 * mib
			cases.sofar.Store(0)
			sum := sha256.New()
			body := &gatedBody{
				src: rand.NewChaCha8([32]byte{1}), hash: func(p []byte) { sum.Write(p) },
				left: size, firstPart: 8 * mib, ownerHas: cases.sofar.Load,
			}
			heap := watchHeap()
			req, err := http.NewRequest(http.MethodPost, edge+path, body)
			require.NoError(t, err)
			req.ContentLength = size
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			grew := heap.growth()

			require.Equal(t, http.StatusCreated, resp.StatusCode)
			got := <-cases.done
			require.Empty(t, got.Err)
			require.Equal(t, int64(size), got.Bytes)
			require.Equal(t, hex.EncodeToString(sum.Sum(nil)), got.SHA256, "cases received the exact bytes")
			require.Less(t, grew, 48.0, "the edge's heap grew by %.1f MiB for a 100 MiB upload", grew)
			t.Logf("heap growth during the upload: %.1f MiB", grew)
		})
	}
}

// An exhibit download reaches the client while cases is still sending
// it: the edge neither waits for the whole file nor holds it.
func TestAHundredMegabyteDownloadStreamsThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MB")
	}
	cases := newHashingCases(t)
	cases.fileSize, cases.firstPart = 100*mib, 8*mib
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 16 * mib, MaxUploadBytes: 110 * mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())

	heap := watchHeap()
	resp, err := http.Get(edge + "/api/cases/cs_1/evidence/ev_1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, strconv.Itoa(100*mib), resp.Header.Get("Content-Length"))
	sum := sha256.New()
	_, err = io.CopyN(sum, resp.Body, 4*mib)
	require.NoError(t, err, "the first part arrives before cases sends the rest")
	close(cases.release)
	n, err := io.Copy(sum, resp.Body)
	require.NoError(t, err)
	grew := heap.growth()

	want := sha256.New()
	_, _ = io.CopyN(want, rand.NewChaCha8([32]byte{7}), 100*mib)
	require.Equal(t, int64(100*mib-4*mib), n)
	require.Equal(t, want.Sum(nil), sum.Sum(nil), "the client received the exact bytes")
	require.Less(t, grew, 48.0, "the edge's heap grew by %.1f MiB for a 100 MiB download", grew)
}

// Uploads, and only uploads, get the upload limit; a body over a route's
// limit is refused with 413 problem+json before cases hears of it.
func TestTheUploadLimitIsForUploadsOnly(t *testing.T) {
	cases := newHashingCases(t)
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 64 << 10, MaxUploadBytes: mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())
	tests := []struct {
		name, method, path string
		size               int
		want               int
	}{
		{"an exhibit under the upload limit", http.MethodPost, "/api/cases/cs_1/evidence", mib, http.StatusCreated},
		{"a website exhibit under the upload limit", http.MethodPost, "/api/disputes/d_1/evidence/file", mib, http.StatusCreated},
		{"an encoded spelling of the upload path", http.MethodPost, "/api/cases/cs_1/%65vidence", mib, http.StatusCreated},
		{"an exhibit over the upload limit", http.MethodPost, "/api/cases/cs_1/evidence", mib + 1, http.StatusRequestEntityTooLarge},
		{"a website exhibit over the upload limit", http.MethodPost, "/api/disputes/d_1/evidence/file", mib + 1, http.StatusRequestEntityTooLarge},
		{"another route over the body limit", http.MethodPost, "/api/cases/cs_1/answer", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"another method on the upload path", http.MethodPut, "/api/cases/cs_1/evidence", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"a path below the upload path", http.MethodPost, "/api/cases/cs_1/evidence/ev_1", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"a website path beside the upload path", http.MethodPost, "/api/disputes/d_1/evidence/files", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"another route under the body limit", http.MethodPost, "/api/cases/cs_1/answer", 64 << 10, http.StatusCreated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := cases.contacts.Load()
			req, err := http.NewRequest(tc.method, edge+tc.path, strings.NewReader(strings.Repeat("x", tc.size)))
			require.NoError(t, err)
			req.Header.Set("Expect", "100-continue") // refused on its Content-Length: the body is never sent
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode)
			if tc.want == http.StatusCreated {
				got := <-cases.done
				require.Equal(t, int64(tc.size), got.Bytes)
				return
			}
			require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
			var body problem.Body
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			require.Equal(t, "body_too_large", body.Code)
			require.Equal(t, before, cases.contacts.Load(), "cases never heard of it")
		})
	}
}

// A chunked upload says nothing of its size in advance: it streams until
// it passes the limit, then cases sees the body cut short (never a
// complete one to act on) and the client hears 413.
func TestAChunkedUploadOverTheLimitIsCutAndRefused(t *testing.T) {
	cases := newHashingCases(t)
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 64 << 10, MaxUploadBytes: mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())

	conn, err := net.Dial("tcp", strings.TrimPrefix(edge, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /api/cases/cs_1/evidence HTTP/1.1\r\nHost: edge\r\nContent-Type: multipart/form-data; boundary=x\r\nTransfer-Encoding: chunked\r\n\r\n")
	require.NoError(t, err)
	chunk := strings.Repeat("x", 64<<10)
	for range 2 * mib / len(chunk) {
		if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
			break // the edge stopped reading: the answer is waiting
		}
	}
	got := awaitReceived(t, cases)
	require.NotEmpty(t, got.Err, "cases saw the body end in an error")
	require.LessOrEqual(t, got.Bytes, int64(mib))

	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
	var body problem.Body
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "body_too_large", body.Code)
	require.Contains(t, body.Detail, strconv.Itoa(mib))
}

// A client that goes away mid-upload leaves cases with a body that ends
// in an error, never a shorter one that looks complete.
func TestAnUploadCutOffMidwayIsAnErrorForCases(t *testing.T) {
	for _, tc := range []struct{ name, header, part string }{
		{"with a Content-Length", "Content-Length: 4194304\r\n", strings.Repeat("x", mib)},
		{"chunked", "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", mib, strings.Repeat("x", mib))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cases := newHashingCases(t)
			edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 64 << 10, MaxUploadBytes: 110 * mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())
			conn, err := net.Dial("tcp", strings.TrimPrefix(edge, "http://"))
			require.NoError(t, err)
			_, err = io.WriteString(conn, "POST /api/cases/cs_1/evidence HTTP/1.1\r\nHost: edge\r\nContent-Type: multipart/form-data; boundary=x\r\n"+tc.header+"\r\n"+tc.part)
			require.NoError(t, err)
			deadline := time.Now().Add(10 * time.Second)
			for cases.sofar.Load() == 0 { // the upload is under way at cases
				require.True(t, time.Now().Before(deadline), "cases never received the first part")
				time.Sleep(time.Millisecond)
			}
			require.NoError(t, conn.Close())

			got := awaitReceived(t, cases)
			require.NotEmpty(t, got.Err, "cases saw the body end in an error")
			require.LessOrEqual(t, got.Bytes, int64(mib))
		})
	}
}

func awaitReceived(t *testing.T, cases *hashingCases) received {
	t.Helper()
	select {
	case got := <-cases.done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("cases is still waiting for the rest of the body: the edge left its connection open")
		return received{}
	}
}

// A slow upload, or download, of an exhibit outlasts the server's read
// and write timeouts under the transfer timeout; any other request does
// not, and its owner never sees it.
func TestTransfersHaveTheirOwnTimeout(t *testing.T) {
	cases := newHashingCases(t)
	server := httpserver.DefaultConfig()
	server.ReadTimeout, server.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 64 << 10, MaxUploadBytes: mib, TransferTimeout: time.Minute}, server)

	slowPost := func(path string) (*http.Response, error) {
		pr, pw := io.Pipe()
		go func() {
			for range 4 {
				if _, err := pw.Write([]byte(strings.Repeat("x", 1024))); err != nil {
					return
				}
				time.Sleep(150 * time.Millisecond) // a slow client's pace, not a wait for anything
			}
			_ = pw.Close()
		}()
		req, err := http.NewRequest(http.MethodPost, edge+path, pr)
		require.NoError(t, err)
		req.ContentLength = 4 * 1024
		return http.DefaultClient.Do(req)
	}
	resp, err := slowPost("/api/cases/cs_1/evidence")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "the upload outlasted the server's read timeout")
	require.Equal(t, int64(4*1024), (<-cases.done).Bytes)

	// The edge reads a body this small whole before it calls the owner
	// (bufferBody): the read timeout cuts it there, and the owner never
	// hears of a request cut short.
	contacted := cases.contacts.Load()
	resp, err = slowPost("/api/cases/cs_1/answer")
	if err == nil {
		resp.Body.Close()
		require.NotEqual(t, http.StatusCreated, resp.StatusCode)
	}
	require.Equal(t, contacted, cases.contacts.Load(), "the server's read timeout cut the other request's body at the edge")
}

// Through a real nginx configured as the chart's ingress: a 20 MB exhibit
// reaches cases while it is still being sent (neither nginx nor the edge
// holds it), and a 2 MB JSON body anywhere else is still refused by nginx
// before the edge hears of it.
func TestAnExhibitUploadThroughTheIngress(t *testing.T) {
	if nginxtest.Binary() == "" {
		t.Skip("nginx is not installed (Debian: apt-get install nginx-light); skipping the test behind a real ingress")
	}
	cases := newHashingCases(t)
	edge := newTransferEdge(t, cases.url, proxy.Config{MaxBodyBytes: 16 * mib, MaxUploadBytes: 110 * mib, TransferTimeout: time.Minute}, httpserver.DefaultConfig())
	ngx := nginxtest.Start(t, strings.TrimPrefix(edge, "http://"))

	const size = 20 * 1000 * 1000
	sum := sha256.New()
	body := &gatedBody{
		src: rand.NewChaCha8([32]byte{2}), hash: func(p []byte) { sum.Write(p) },
		left: size, firstPart: 4 * mib, ownerHas: cases.sofar.Load,
	}
	req, err := http.NewRequest(http.MethodPost, ngx.URL+"/api/cases/cs_1/evidence", body)
	require.NoError(t, err)
	req.ContentLength = size
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, ngx.ErrorLog())
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, ngx.ErrorLog())
	got := <-cases.done
	require.Equal(t, int64(size), got.Bytes)
	require.Equal(t, hex.EncodeToString(sum.Sum(nil)), got.SHA256, "cases received the exact bytes")

	before := cases.contacts.Load()
	req, err = http.NewRequest(http.MethodPost, ngx.URL+"/api/cases/cs_1/answer", strings.NewReader(`{"text":"`+strings.Repeat("a", 2*mib)+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html", "nginx's own page: the edge never saw it")
	require.Equal(t, before, cases.contacts.Load())
}

// The ingress's upload locations (nginxtest.UploadPaths, the chart's
// upload Ingress) take exactly the edge's upload routes.
func TestTheIngressUploadPathsAreTheEdgesUploads(t *testing.T) {
	var locations []*regexp.Regexp
	for _, p := range nginxtest.UploadPaths {
		locations = append(locations, regexp.MustCompile("(?i)^"+p))
	}
	taken := func(path string) int {
		n := 0
		for _, l := range locations {
			if l.MatchString(path) {
				n++
			}
		}
		return n
	}
	for _, u := range proxy.Uploads {
		path := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(u.Pattern, "x_1")
		require.Equal(t, 1, taken(path), "%s is one upload location of the ingress", path)
	}
	require.Len(t, locations, len(proxy.Uploads))
	for _, path := range []string{"/api/cases/cs_1/evidence/ev_1", "/api/cases//evidence", "/api/cases/cs_1/answer", "/api/disputes/d_1/evidence/file/x", "/api/v2/cases/cs_1/evidence"} {
		require.Zero(t, taken(path), path)
	}
}

// An MCP listen stream (POST /mcp answered with an event stream held
// open) outlasts the server's write timeout and the 30 s upstream bound,
// as a download does: it gets the transfer timeout. A stream of any other
// route is cut at the write timeout.
func TestAnMCPListenStreamHasTheTransferTimeout(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range 4 {
			_, _ = fmt.Fprintf(w, "event: message\ndata: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(200 * time.Millisecond) // the stream's pace: a notification now and then
		}
	}))
	t.Cleanup(owner.Close)
	u, _ := url.Parse(owner.URL)
	server := httpserver.DefaultConfig()
	server.ReadTimeout, server.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	edge := newTransferEdge(t, u, proxy.Config{MaxBodyBytes: 64 << 10, TransferTimeout: time.Minute}, server)

	listen := func(path string) (string, error) {
		resp, err := http.Post(edge+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}`))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	got, err := listen("/mcp")
	require.NoError(t, err)
	require.Equal(t, 4, strings.Count(got, "event: message"), "the whole stream, past the server's write timeout")

	got, err = listen("/api/cases/cs_1/messages")
	require.Less(t, strings.Count(got, "event: message"), 4, "another route's answer is cut at the write timeout (%v)", err)
}
