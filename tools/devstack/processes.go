package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
	"github.com/pcourt/pcourt/libs/x402"
)

// service is one of the platform's binaries, run as a child process.
type service struct {
	name string
	port int
	env  []string

	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// stackServices lists the services, the edge last so it starts once its
// upstreams are listening, and stops first (the console, which calls the
// edge, only needs it for its pages, not to start). The compat-controller runs
// with Kubernetes off: it sends the milestone notices when the caller's
// environment configures SMTP (EDGE_SMTP_*), and otherwise only answers
// its probes.
func stackServices(cfg config, redis *devRedis, brokers []string, facilitatorURL string) []*service {
	common := []string{
		"REDIS_ADDRS=" + strings.Join(redis.addrs, ","),
		"REDIS_MODE=" + redis.mode,
		"KAFKA_BROKERS=" + strings.Join(brokers, ","),
		"LOG_LEVEL=info",
	}
	names := []string{"readiness", "filings", "cases", "webhooks"}
	var out []*service
	edgeEnv := append([]string(nil), common...)
	own := map[string][]string{
		"readiness": {
			"FACILITATOR_URL=" + facilitatorURL,
			"READINESS_PAY_TO=" + devPayTo().Hex(),
			"PUBLIC_BASE_URL=" + cfg.publicURL(),
			"READINESS_ENVIRONMENT=sandbox",
		},
		// Development only: a signing key made at start (receivers fetch it
		// from GET /api/webhooks/keys), and callbacks to http endpoints on
		// this machine, such as tools/webhook-receiver.
		"webhooks": {
			"WEBHOOK_DEV_EPHEMERAL_KEYS=true",
			"WEBHOOK_ALLOW_HTTP_SANDBOX=true",
			"WEBHOOK_EGRESS_ALLOW_CIDRS=127.0.0.0/8",
		},
		"filings": {
			"FACILITATOR_URL=" + facilitatorURL,
			"FEES_PAY_TO=" + devPayTo().Hex(),
			"PUBLIC_BASE_URL=" + cfg.publicURL(),
		},
		// The hosted respondent page hears form posts from the edge's
		// origin only. Development only: an award signing key made at
		// start; the keys of earlier starts stay published in Redis
		// (GET /api/awards/keys), so their awards keep verifying.
		// Evidence files in a directory of the state, where a deployment
		// has its bucket (libs/objectstore's Dir), and uploads spooled
		// beside them. The x402r refund rail pays awards' refunds from
		// devRefundOperator (a public development account the facilitator
		// funds at every start) on Base Sepolia, through the local
		// facilitator.
		"cases": {
			"PUBLIC_BASE_URL=" + cfg.publicURL(),
			"AWARD_DEV_EPHEMERAL_KEY=true",
			"EVIDENCE_STORE_DIR=" + filepath.Join(cfg.Dir, "evidence"),
			"EVIDENCE_SPOOL_DIR=" + filepath.Join(cfg.Dir, "evidence-spool"),
			"FACILITATOR_URL=" + facilitatorURL,
			"X402R_OPERATOR_KEY=" + hex.EncodeToString(crypto.FromECDSA(devRefundOperator().Key)),
			"X402R_NETWORKS=" + strings.Join(x402.DefaultNetworks(x402.EnvironmentSandbox), ","),
			// Appeal fees are paid to the payee filing fees go to.
			"FEES_PAY_TO=" + devPayTo().Hex(),
		},
		// The MCP server's platform client, with which the mcp service
		// exchanges the tokens it receives for the API's at accounts
		// (mcpClient).
		"mcp": cfg.MCP.env(),
	}
	for i, name := range names {
		port := cfg.EdgePort + 1 + i
		// Admin listeners (metrics, pprof) take port + 1000. The services
		// believe the edge's X-Forwarded-For, so per-address limits count
		// clients, not the edge.
		env := append(append([]string(nil), common...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port), "HTTP_TRUSTED_PROXIES=127.0.0.1")
		out = append(out, &service{name: name, port: port, env: append(env, own[name]...)})
		edgeEnv = append(edgeEnv, fmt.Sprintf("UPSTREAM_%s_URL=http://127.0.0.1:%d", strings.ToUpper(name), port))
	}
	controllerPort := cfg.EdgePort + 7
	controllerEnv := append(append([]string(nil), common...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", controllerPort),
		"EDGE_KUBERNETES=off", "EDGE_PUBLIC_URL="+cfg.publicURL())
	out = append(out, &service{name: "compat-controller", port: controllerPort, env: append(controllerEnv, cfg.Compat...)})
	// The partner console, behind the edge like any owner: browsers reach
	// it at the edge's origin, and it calls the public API back through
	// the edge.
	consolePort := cfg.EdgePort + 8
	consoleEnv := append(append([]string(nil), common...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", consolePort), "HTTP_TRUSTED_PROXIES=127.0.0.1",
		fmt.Sprintf("CONSOLE_API_URL=http://127.0.0.1:%d", cfg.EdgePort), "PUBLIC_BASE_URL="+cfg.publicURL())
	out = append(out, &service{name: "console", port: consolePort, env: consoleEnv})
	edgeEnv = append(edgeEnv, fmt.Sprintf("UPSTREAM_CONSOLE_URL=http://127.0.0.1:%d", consolePort))
	// The accounts service: agent accounts and the OAuth authorization
	// server, whose issuer (and its tokens' audience) is the edge's
	// public URL, where clients reach it. It knows the MCP server: its
	// resource under the edge's URL, and the platform client the mcp
	// service exchanges tokens with. Applications may register their own
	// clients for the authorization code grant (RFC 7591), which is on
	// where people's pages are (PEOPLE_TENANT: set where the stack's public
	// host is a domain name, -public-host localhost).
	accountsPort := cfg.accountsPort()
	accountsEnv := append(append([]string(nil), common...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", accountsPort), "HTTP_TRUSTED_PROXIES=127.0.0.1",
		"PUBLIC_BASE_URL="+cfg.publicURL(), "MCP_RESOURCE_URL="+cfg.mcpResourceURL(), "OAUTH_DYNAMIC_REGISTRATION=true")
	accountsEnv = append(accountsEnv, own["mcp"]...)
	if cfg.peoplePages() {
		// People sign up and in at /account, into the dev tenant's
		// sandbox, where the stack's partners file their cases.
		accountsEnv = append(accountsEnv, "PEOPLE_TENANT="+devTenant, "PEOPLE_ENVIRONMENT=sandbox")
	}
	out = append(out, &service{name: "accounts", port: accountsPort, env: accountsEnv})
	edgeEnv = append(edgeEnv, fmt.Sprintf("UPSTREAM_ACCOUNTS_URL=http://127.0.0.1:%d", accountsPort))
	// The MCP server (docs/mcp.md), behind the edge: its resource is the
	// edge's URL and /mcp, and it calls the API and the token endpoint
	// back through the edge, exchanging tokens as the platform client.
	mcpPort := cfg.mcpPort()
	mcpEnv := append(append([]string(nil), common...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", mcpPort), "HTTP_TRUSTED_PROXIES=127.0.0.1",
		"PUBLIC_BASE_URL="+cfg.publicURL(), fmt.Sprintf("MCP_API_URL=http://127.0.0.1:%d", cfg.EdgePort))
	out = append(out, &service{name: "mcp", port: mcpPort, env: append(mcpEnv, own["mcp"]...)})
	edgeEnv = append(edgeEnv, fmt.Sprintf("UPSTREAM_MCP_URL=http://127.0.0.1:%d", mcpPort))
	edgeEnv = append(edgeEnv, fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", cfg.EdgePort))
	edgeEnv = append(edgeEnv, cfg.Compat...)
	return append(out, &service{name: "compat-edge", port: cfg.EdgePort, env: edgeEnv})
}

// compatEnv picks the compatibility policy's variables (SERVICE_API_*) out
// of the caller's environment. The edge and the compat-controller are named
// as their readers; the children inherit the rest of the caller's
// environment anyway.
func compatEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, "SERVICE_API_") {
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}

// goEnv is the environment of the go commands a user runs beside the
// stack (go run ./tools/demo, as the stack prints them): the workspace,
// whatever GOWORK the caller's environment says, so they build against
// this checkout's libs, and the shipped configuration (static, paths
// trimmed).
func goEnv(root string) []string {
	return append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "CGO_ENABLED=0",
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
}

// serviceCommands are the stack's binaries, by the module that holds them.
var serviceCommands = []struct {
	module   string
	commands []string
}{
	{"services/readiness", []string{"./cmd/readiness"}},
	{"services/filings", []string{"./cmd/filings"}},
	{"services/cases", []string{"./cmd/cases"}},
	{"services/webhooks", []string{"./cmd/webhooks"}},
	{"services/compat-edge", []string{"./cmd/compat-edge", "./cmd/compat-controller"}},
	{"services/console", []string{"./cmd/console"}},
	{"services/accounts", []string{"./cmd/accounts"}},
	{"services/mcp", []string{"./cmd/mcp"}},
}

// buildServices compiles every service into the bin directory as make test
// and make build compile them: each in its own module (GOWORK=off; its
// go.mod replaces libs with this checkout's), static, paths trimmed. So
// the stack runs what ships, and a machine that has run the services'
// tests or lint has compiled every package the binaries need but their
// mains, which is most of a cold CI run's compile time
// (docs/development.md, "CI time"). One module at a time: the go command
// builds a module's packages in parallel, and the next one finds libs
// compiled.
func buildServices(ctx context.Context, cfg config) error {
	env := append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0",
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	for _, m := range serviceCommands {
		args := append([]string{"build", "-o", cfg.BinDir + string(os.PathSeparator), "-ldflags", "-X main.version=dev"}, m.commands...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = filepath.Join(cfg.Root, m.module)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", m.module, err, out)
		}
	}
	return nil
}

func (s *service) start(cfg config, stdout io.Writer, exited chan<- error) error {
	logPath := filepath.Join(cfg.Dir, "logs", s.name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.log = f
	s.cmd = exec.Command(filepath.Join(cfg.BinDir, s.name))
	s.cmd.Env = append(os.Environ(), s.env...)
	var out io.Writer = f
	if cfg.Verbose {
		out = io.MultiWriter(f, &prefixWriter{prefix: s.name + " | ", w: stdout})
	}
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.name, err)
	}
	s.done = make(chan struct{})
	go func() {
		err := s.cmd.Wait()
		close(s.done)
		exited <- fmt.Errorf("%s exited (%v); last lines of %s:\n%s", s.name, err, logPath, tail(logPath, 15))
	}()
	return nil
}

// stop asks the service to drain (SIGTERM) and kills it if it has not
// finished within 25 s.
func (s *service) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(25 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	_ = s.log.Close()
}

// stopAll stops the services in reverse start order: the edge first, so no
// new request reaches a service that is draining.
func stopAll(services []*service) {
	for i := len(services) - 1; i >= 0; i-- {
		services[i].stop()
	}
}

// waitReady polls every service's /readyz until all answer 200.
func waitReady(ctx context.Context, services []*service, exited <-chan error) error {
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for _, s := range services {
		url := fmt.Sprintf("http://127.0.0.1:%d/readyz", s.port)
		for {
			resp, err := client.Get(url)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not ready after 60s (last error: %v)", s.name, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case err := <-exited:
				return err
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func startKafka(cfg config) (*kfake.Cluster, error) {
	// Three brokers on KafkaPort and the next two, holding the declared
	// topics: the services' producers create none.
	ports := []int{cfg.KafkaPort, cfg.KafkaPort + 1, cfg.KafkaPort + 2}
	c, err := kafkadev.Start(kafkadev.Config{Ports: ports, DataDir: filepath.Join(cfg.Dir, "kafka"), Topics: kafka.Topics})
	if err != nil {
		return nil, fmt.Errorf("starting kfake on ports %v: %w", ports, err)
	}
	return c, nil
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// prefixWriter prefixes each line with the service name, so interleaved
// logs stay readable with -v.
type prefixWriter struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i]); err != nil {
			return 0, err
		}
		p.buf = p.buf[i+1:]
	}
}
