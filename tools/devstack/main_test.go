package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafkatest"
)

// sharedBin is the one directory every test's stack is built into (-bin):
// go build relinks nothing already there from the same build, so only the
// first stack of a run links the services (about 10 s on 2 cores, against
// 14 tests that each start the stack once or more).
var sharedBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "devstack-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedBin = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// stackPorts reserves the stack's block of public ports and their admin
// ports (+1000), and returns its first: the edge, four services, the
// facilitator, the reference adjudicator, the compat-controller, the
// console, accounts, the MCP server.
func stackPorts(t *testing.T) int {
	t.Helper()
	return freeBlock(t, 11, 1000)
}

// freeBlock finds n consecutive free loopback ports, and the same n ports
// shifted by each of also: the edge and the four services take consecutive
// ports, as in the default layout, and their admin listeners the same
// ports + 1000.
//
// The ports are chosen in 10000-31000, below Linux's ephemeral range
// (32768-60999 by default), where the kernel picks the source ports of
// outgoing connections: a port found free there can be taken by any
// connection before the stack binds it.
func freeBlock(t *testing.T, n int, also ...int) int {
	t.Helper()
	const low, high = 10000, 31000
	for base := low + int(time.Now().UnixNano()%(high-low-2000)); base < high; base += n {
		var ls []net.Listener
		ok := true
		for _, shift := range append([]int{0}, also...) {
			for p := base + shift; ok && p < base+shift+n; p++ {
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
				if err != nil {
					ok = false
					break
				}
				ls = append(ls, l)
			}
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no block of free ports")
	return 0
}

// TestMakeRunBringsTheStackUpAndThePrintedCommandsWork starts the stack as
// `make run` does, runs every curl command it prints, then stops it as
// Ctrl-C does and checks nothing is left listening.
func TestMakeRunBringsTheStackUpAndThePrintedCommandsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the printed commands (apt-get install curl)")
	}
	base := stackPorts(t)
	extra := freeBlock(t, 4)
	dir := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-dir", dir, "-bin", sharedBin, "-port", strconv.Itoa(base),
			"-kafka-port", strconv.Itoa(extra), "-redis-port", strconv.Itoa(extra + 3)}, w)
		w.Close()
	}()

	var printed []string
	lines := bufio.NewScanner(out)
	up := false
	for !up && lines.Scan() {
		line := lines.Text()
		printed = append(printed, line)
		up = strings.HasPrefix(line, "pcourt dev stack is up")
	}
	require.True(t, up, "the stack never came up:\n%s\n%v", strings.Join(printed, "\n"), drain(done))
	var commands []string
	var pay, demo, demoAward, demoExecution string
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if strings.HasPrefix(line, "curl ") {
			commands = append(commands, line)
		}
		if strings.HasPrefix(line, "go run ./tools/x402pay ") {
			pay = line
		}
		switch {
		case strings.HasPrefix(line, "go run ./tools/demo -through award "):
			demoAward = line
		case strings.HasPrefix(line, "go run ./tools/demo -through execution "):
			demoExecution = line
		case strings.HasPrefix(line, "go run ./tools/demo "):
			demo = line
		}
		if strings.HasPrefix(line, "Logs:") {
			break
		}
	}
	// The rest of the output: the stack prints each signed case event its
	// development receiver verified.
	verified := make(chan string, 16)
	go func() {
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "webhook  | verified ") {
				select {
				case verified <- lines.Text():
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	require.Len(t, commands, 5)
	for _, c := range commands {
		got, err := exec.Command("bash", "-c", c).CombinedOutput()
		require.NoError(t, err, "%s\n%s", c, got)
		require.NotEmpty(t, got, c)
	}
	// The third command is the authenticated one; it must show the claimant agent.
	got, err := exec.Command("bash", "-c", commands[2]).CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(got), `"role":"claimant_agent"`)
	// The fourth reads the authorization server's metadata through the
	// edge, from the accounts service: its issuer is the edge's URL.
	got, err = exec.Command("bash", "-c", commands[3]).Output()
	require.NoError(t, err)
	var metadata struct {
		Issuer        string   `json:"issuer"`
		TokenEndpoint string   `json:"token_endpoint"`
		GrantTypes    []string `json:"grant_types_supported"`
	}
	require.NoError(t, json.Unmarshal(got, &metadata), "%s", got)
	edgeURL := "http://127.0.0.1:" + strconv.Itoa(base)
	require.Equal(t, edgeURL, metadata.Issuer)
	require.Equal(t, edgeURL+"/oauth/token", metadata.TokenEndpoint)
	require.Contains(t, metadata.GrantTypes, "urn:ietf:params:oauth:grant-type:token-exchange",
		"accounts knows the MCP server's platform client of this start")
	// The fifth reads the MCP server's protected resource metadata
	// through the edge: its resource is the edge's URL and /mcp, its
	// authorization server the accounts service's issuer.
	got, err = exec.Command("bash", "-c", commands[4]).Output()
	require.NoError(t, err)
	var resource struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	require.NoError(t, json.Unmarshal(got, &resource), "%s", got)
	require.Equal(t, edgeURL+"/mcp", resource.Resource)
	require.Equal(t, []string{metadata.Issuer}, resource.AuthorizationServers)

	// The printed payment pays for a report with the public development key.
	require.NotEmpty(t, pay)
	root, err := findRoot()
	require.NoError(t, err)
	cmd := exec.Command("bash", "-c", pay)
	cmd.Dir = root
	cmd.Env = goEnv(root) // as in a user's shell, not this test's GOWORK=off
	got, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", pay, got)
	require.Contains(t, string(got), `"readyToFile"`)
	require.Contains(t, string(got), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "the receipt names the payer")

	// The settlement was published through the outbox relay to Kafka.
	events := kafkatest.ReadMessages(t, []string{"127.0.0.1:" + strconv.Itoa(extra)}, "pc.readiness.settlements.v1", 1)
	require.Len(t, events, 1)
	var settled struct {
		Payer  string `json:"payer"`
		Amount string `json:"amount"`
	}
	require.NoError(t, json.Unmarshal(events[0].Value, &settled))
	require.Equal(t, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", settled.Payer)
	require.Equal(t, "10000", settled.Amount)

	// The printed walkthrough opens a case.
	require.NotEmpty(t, demo)
	cmd = exec.Command("bash", "-c", demo)
	cmd.Dir = root
	cmd.Env = goEnv(root)
	got, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", demo, got)
	require.Contains(t, string(got), "→ 201")
	require.Contains(t, string(got), "Done.")

	// ... and its signed case events reach the development receiver.
	select {
	case line := <-verified:
		require.Contains(t, line, `"schemaVersion":"case-event-v2"`)
	case <-time.After(30 * time.Second):
		t.Fatal("no verified case event printed within 30 s of the case opening")
	}

	// The printed execution walkthrough passes through a signed award (the
	// stack's tribunal, the reference adjudicator and the reviewer, decides
	// it; TestDemoWalksACaseToAnAwardThatOutlivesRestarts runs the printed
	// award walk) to the x402r refund of the purchase, completed.
	require.NotEmpty(t, demoAward)
	require.NotEmpty(t, demoExecution)
	cmd = exec.Command("bash", "-c", demoExecution)
	cmd.Dir = root
	cmd.Env = goEnv(root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	got, err = cmd.Output()
	require.NoError(t, err, "%s\n%s\n%s", demoExecution, got, stderr.String())
	printedLines := strings.Split(strings.TrimRight(string(got), "\n"), "\n")
	require.Regexp(t, `(?m)^award cs_[a-z0-9]+ [0-9a-f]{64}$`, string(got))
	require.Regexp(t, `^execution cs_[a-z0-9]+ ex:cs_[a-z0-9]+:1 completed$`, printedLines[len(printedLines)-1], "%s", got)

	// Metrics are on the edge's admin port, never routed by the edge.
	for url, want := range map[string]int{
		fmt.Sprintf("http://127.0.0.1:%d/metrics", base+1000): http.StatusOK,
		fmt.Sprintf("http://127.0.0.1:%d/metrics", base):      http.StatusNotFound,
	} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, url)
	}

	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the stack did not stop within 60s")
	}
	for p := range adminAndPublic(base, 8) {
		_, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 200*time.Millisecond)
		require.Error(t, err, "port %d still listening after stop", p)
	}
}

func drain(done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
		return nil
	}
}

// adminAndPublic yields the stack's public ports and their admin ports.
func adminAndPublic(base, n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for p := base; p < base+n; p++ {
			if !yield(p) || !yield(p+1000) {
				return
			}
		}
	}
}
