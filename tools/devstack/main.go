// Command devstack runs the whole pcourt system on one machine with no setup:
// an in-process Kafka broker (kfake), a redis-server from PATH (or, loudly, an
// embedded in-memory Redis where none is installed), the five services built
// from this checkout, and the edge on :8080. It mints a sandbox credential per
// role, a tribunal (the reference AI adjudicator, run in this process with
// its deterministic rubric, and a reviewer), prints them with commands to
// try, and stops everything on Ctrl-C.
//
// State lives under -dir (default .devstack at the repository root): Redis's
// append-only file, Kafka's log, the evidence files (a local directory
// store) and their upload spool, service logs and credentials.env.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "devstack: %v\n", err)
		os.Exit(1)
	}
}

// config is the stack's layout on this machine.
type config struct {
	Root string // repository root (holds go.work)
	Dir  string // state directory
	// BinDir is where the services are built: <Dir>/bin unless set. go
	// build relinks nothing already there from the same build, so the
	// tests, which start the stack many times on fresh state, share one.
	BinDir string
	// PublicHost is the host browsers and clients reach the edge at, in
	// every service's PUBLIC_BASE_URL: 127.0.0.1 unless set. A domain name
	// (localhost) also serves people's account pages (PEOPLE_TENANT, the
	// dev tenant's sandbox): a passkey's relying party is a domain, never
	// an IP address.
	PublicHost string
	EdgePort   int // the public port; the services take the next four, the facilitator the fifth, the reference adjudicator the sixth, the compat-controller the seventh, the console the eighth, accounts the ninth, the MCP server the tenth
	KafkaPort  int
	RedisPort  int
	// RedisCluster runs a three-primary Redis Cluster on RedisPort and the
	// next two ports instead of one server: the topology production may
	// use, which every service reaches through the same settings.
	RedisCluster bool
	Verbose      bool // copy service logs to the terminal
	// BuildOnly builds the services into BinDir and starts nothing: a
	// caller that times the stack's start (make bench-edge) compiles
	// first, so a cold build cache is not counted as a slow start.
	BuildOnly bool
	// Compat is the caller's SERVICE_API_* settings, handed to the edge:
	// SERVICE_API_CANONICAL_ROUTES=true SERVICE_API_V2_CASES_GA=2026-01-15
	// make run shows the compatibility headers on /api/v2/cases/….
	Compat []string
	// MCP is the MCP server's platform client, made at start (mcp.go):
	// accounts checks it, and the mcp service's environment carries it.
	MCP mcpClient
}

func parseFlags(args []string) (config, error) {
	root, err := findRoot()
	if err != nil {
		return config{}, err
	}
	cfg := config{Root: root, Compat: compatEnv(os.Environ()), MCP: newMCPClient()}
	fs := flag.NewFlagSet("devstack", flag.ContinueOnError)
	fs.StringVar(&cfg.Dir, "dir", filepath.Join(root, ".devstack"), "state directory")
	fs.StringVar(&cfg.BinDir, "bin", "", "where the services are built (default <dir>/bin)")
	fs.IntVar(&cfg.EdgePort, "port", 8080, "edge port; readiness, filings, cases, webhooks, the local x402 facilitator, the reference adjudicator, the compat-controller, the console, accounts and the MCP server take the next ten")
	fs.StringVar(&cfg.PublicHost, "public-host", cmp.Or(os.Getenv("DEVSTACK_PUBLIC_HOST"), "127.0.0.1"),
		"the host clients reach the edge at (the services' PUBLIC_BASE_URL; default from DEVSTACK_PUBLIC_HOST); a domain name such as localhost also serves people's account pages at /account")
	fs.IntVar(&cfg.KafkaPort, "kafka-port", 9092, "first Kafka-protocol test broker (kfake) port; its other two brokers take the next two")
	fs.IntVar(&cfg.RedisPort, "redis-port", 6390, "Redis port (not 6379, to stay clear of a system Redis)")
	fs.BoolVar(&cfg.RedisCluster, "redis-cluster", os.Getenv("DEVSTACK_REDIS") == "cluster",
		"run a three-primary Redis Cluster on the Redis port and the next two (default from DEVSTACK_REDIS=cluster)")
	fs.BoolVar(&cfg.Verbose, "v", false, "copy every service's log to the terminal")
	fs.BoolVar(&cfg.BuildOnly, "build-only", false, "build the services into the bin directory and exit")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if cfg.BinDir == "" {
		cfg.BinDir = filepath.Join(cfg.Dir, "bin")
	}
	// Absolute: the services are built from their modules' folders.
	for _, d := range []*string{&cfg.Dir, &cfg.BinDir} {
		if *d, err = filepath.Abs(*d); err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	for _, d := range []string{"logs", "redis", "kafka", "evidence", "evidence-spool"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.BinDir, 0o755); err != nil {
		return err
	}

	fmt.Fprintln(stdout, "building the services…")
	if err := buildServices(ctx, cfg); err != nil {
		return err
	}
	if cfg.BuildOnly {
		return nil
	}

	kafka, err := startKafka(cfg)
	if err != nil {
		return err
	}
	defer kafka.Close()
	fmt.Fprintf(stdout, "kafka (kfake, %d brokers) on %s\n", len(kafka.ListenAddrs()), strings.Join(kafka.ListenAddrs(), ", "))

	redis, err := startRedis(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	defer redis.stop()
	fmt.Fprintf(stdout, "%s on %s\n", redis.kind, strings.Join(redis.addrs, ", "))

	fac, err := startFacilitator(ctx, cfg, redis)
	if err != nil {
		return err
	}
	defer fac.close()
	fmt.Fprintf(stdout, "x402 facilitator (local, Redis ledger) on %s\n", fac.url)

	services := stackServices(cfg, redis, kafka.ListenAddrs(), fac.url)
	exited := make(chan error, len(services))
	for _, s := range services {
		if err := s.start(cfg, stdout, exited); err != nil {
			stopAll(services)
			return err
		}
	}
	defer stopAll(services)
	if err := waitReady(ctx, services, exited); err != nil {
		return err
	}

	creds, err := mintCredentials(ctx, redis, cfg)
	if err != nil {
		return err
	}
	events, err := listenReceiver()
	if err != nil {
		return err
	}
	defer events.close()
	if err := events.register(ctx, cfg, creds.orchestrator.token, stdout); err != nil {
		return err
	}
	adjudicator, err := listenAdjudicator(cfg)
	if err != nil {
		return err
	}
	defer adjudicator.close()
	adjudicatorEndpoint, err := adjudicator.start(ctx, cfg, creds.adjudicator.token, stdout)
	if err != nil {
		return err
	}
	printWelcome(stdout, cfg, creds, events.url, adjudicator.url, adjudicatorEndpoint)

	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "stopping…")
		return nil
	case err := <-exited:
		return err
	}
}

func (c config) facilitatorPort() int { return c.EdgePort + 5 }

// adjudicatorPort is where the reference adjudicator hears its case events.
func (c config) adjudicatorPort() int { return c.EdgePort + 6 }

// publicURL is where clients reach the edge: every service's
// PUBLIC_BASE_URL.
func (c config) publicURL() string { return fmt.Sprintf("http://%s:%d", c.publicHost(), c.EdgePort) }

// publicHost is PublicHost, 127.0.0.1 where it is not set.
func (c config) publicHost() string { return cmp.Or(c.PublicHost, "127.0.0.1") }

// peoplePages reports whether the stack serves people's account pages:
// where its public host is a domain name, as a passkey needs.
func (c config) peoplePages() bool { return net.ParseIP(c.publicHost()) == nil }

// accountsPort is the accounts service's: the last of the block, after
// the console's (+8).
func (c config) accountsPort() int { return c.EdgePort + 9 }

// mcpPort is the MCP server's: the block's last.
func (c config) mcpPort() int { return c.EdgePort + 10 }

// findRoot walks up from the working directory to the one holding go.work.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run devstack inside the pcourt checkout (no go.work found above the working directory)")
		}
		dir = parent
	}
}
