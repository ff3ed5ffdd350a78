package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/nginxtest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

// TestPaidReportThroughAnIngressWithDefaultBuffers puts a real nginx, with
// nginx's (and ingress-nginx's) default proxy buffers and upstream
// keepalive, in front of the edge of the whole stack, and buys a report
// through it with the x402 client and the local facilitator: the 402
// challenge and the paid 200 both pass, where a header block over 4 KiB
// would be 502 "upstream sent too big header".
func TestPaidReportThroughAnIngressWithDefaultBuffers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	if nginxtest.Binary() == "" {
		t.Skip("nginx is not installed (Debian: apt-get install nginx-light); skipping the test behind a real ingress")
	}
	ngx := nginxtest.Start(t, startStack(t).edge)
	body, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "readiness-request.json"))
	require.NoError(t, err)
	target := ngx.URL + "/api/x402/dispute-readiness"

	// The challenge, as any client first sees it.
	resp, err := http.Post(target, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusPaymentRequired, resp.StatusCode, ngx.ErrorLog())
	requireHeaderFits(t, resp)
	var challenge x402.PaymentRequired
	require.NoError(t, x402.DecodeHeader(resp.Header.Get(x402.HeaderPaymentRequired), &challenge))
	require.Contains(t, challenge.Extensions, "bazaar", "the header carries discovery metadata")

	// The x402 client pays it, unmodified, with the development payer the
	// local facilitator funds.
	client, err := x402client.New(x402client.Config{Key: localfacilitator.DevAccounts()[0].Key})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, target, nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Pay(context.Background(), req, body)
	require.NoError(t, err, ngx.ErrorLog())
	require.Equal(t, http.StatusOK, res.Response.StatusCode, "%s\n%s", res.Body, ngx.ErrorLog())
	require.True(t, res.Paid)
	require.NotNil(t, res.Settlement)
	require.True(t, res.Settlement.Success)
	require.Contains(t, string(res.Body), `"readyToFile"`)
	requireHeaderFits(t, res.Response)

	// Errors pass too, with their problem body.
	resp, err = http.Post(target, "text/plain", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	requireHeaderFits(t, resp)

	require.NotContains(t, ngx.ErrorLog(), "too big header")
}

// requireHeaderFits checks the bound of DESIGN.md on a response nginx
// passed on: its header block is under one 4 KiB page.
func requireHeaderFits(t *testing.T, resp *http.Response) {
	t.Helper()
	dump, err := httputil.DumpResponse(resp, false)
	require.NoError(t, err)
	require.Less(t, len(dump), 4096, "%d header block:\n%s", resp.StatusCode, dump)
}

// stackAddrs are the host:port addresses of a running stack.
type stackAddrs struct {
	edge  string
	redis []string
}

// startStack runs the stack as `make run` does, on free ports, until the
// test ends; flags go to the stack as well (-redis-cluster).
func startStack(t *testing.T, flags ...string) stackAddrs {
	t.Helper()
	// The services' admin listeners take their port + 1000.
	base := stackPorts(t)
	extra := freeBlock(t, 6, 10000) // Kafka (three brokers), then Redis (three ports for a cluster, whose bus takes each port + 10000)
	redisAddrs := []string{"127.0.0.1:" + strconv.Itoa(extra+3)}
	if slices.Contains(flags, "-redis-cluster") {
		redisAddrs = append(redisAddrs, "127.0.0.1:"+strconv.Itoa(extra+4), "127.0.0.1:"+strconv.Itoa(extra+5))
	}
	// The state directory is made before the stack's cleanup is registered,
	// so it is removed after the stack stopped writing to it (cleanups run
	// last first).
	dir := t.TempDir()
	up := runStack(t, dir, base, extra, flags...)
	t.Cleanup(func() { require.NoError(t, up.stop()) })
	return stackAddrs{edge: "127.0.0.1:" + strconv.Itoa(base), redis: redisAddrs}
}

// runningStack is one start of the stack: what it printed up to "pcourt
// dev stack is up", and how to stop it as Ctrl-C does.
type runningStack struct {
	printed []string
	stop    func() error
}

// runStack starts the stack on dir with the edge at base and Kafka and
// Redis from extra on, and returns once it is up (the test fails if it
// never comes up).
func runStack(t *testing.T, dir string, base, extra int, flags ...string) runningStack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	var runErr error
	finished := make(chan struct{})
	go func() {
		runErr = run(ctx, append([]string{"-dir", dir, "-bin", sharedBin, "-port", strconv.Itoa(base),
			"-kafka-port", strconv.Itoa(extra), "-redis-port", strconv.Itoa(extra + 3)}, flags...), w)
		w.Close()
		close(finished)
	}()
	stop := func() error {
		cancel()
		select {
		case <-finished:
			return runErr
		case <-time.After(60 * time.Second):
			return errors.New("the stack did not stop within 60s")
		}
	}
	var printed []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		printed = append(printed, lines.Text())
		if strings.HasPrefix(lines.Text(), "pcourt dev stack is up") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return runningStack{printed: printed, stop: stop}
		}
	}
	<-finished
	cancel()
	t.Fatalf("the stack never came up:\n%s\n%v", strings.Join(printed, "\n"), runErr)
	return runningStack{}
}
