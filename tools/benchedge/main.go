// Command benchedge measures compat-edge as a user measures it: the real
// processes of make run (tools/devstack, built as the images build them),
// nginx, a bare httputil.ReverseProxy and a bare fasthttp proxy beside the
// edge, each driven by a
// load generator in this process for a bounded time, and prints the table
// docs/compatibility.md quotes (make bench-edge).
//
// Two stacks run side by side: the chart's production settings (trace
// sampling 0.1, the access log, rate limits on with budgets raised so no
// request is refused), and the same with the limits off, for the limits'
// cost. Every row is measured once a round, in turns (measure.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 {
		modes := map[string]func(context.Context, []string) error{"bare-proxy": runBareProxy, "bare-fasthttp": runBareFastProxy}
		if mode, ok := modes[os.Args[1]]; ok {
			if err := mode(ctx, os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "benchedge %s: %v\n", os.Args[1], err)
				os.Exit(1)
			}
			return
		}
	}
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchedge: %v\n", err)
		os.Exit(1)
	}
}

// config is one measurement's settings.
type config struct {
	Root        string
	Dir         string
	Port        int           // the limits-on stack's edge port (stackPort)
	Duration    time.Duration // of each run: a row's max-rate runs and its constant-rate run, each round
	Rounds      int           // every row's runs once each
	Rate        int           // the constant rate of the latency rows, req/s
	Connections int           // the max-rate rows' connections (and callers)
	Profile     bool          // save a CPU profile of the edge under each max-rate row of the edge
}

func parseFlags(args []string) (config, error) {
	root, err := findRoot()
	if err != nil {
		return config{}, err
	}
	cfg := config{Root: root}
	fs := flag.NewFlagSet("benchedge", flag.ContinueOnError)
	fs.StringVar(&cfg.Dir, "dir", filepath.Join(root, ".benchedge"), "state directory (binaries, logs, profiles)")
	fs.IntVar(&cfg.Port, "port", 18080, "the limits-on stack's edge port: its services take the next ten, nginx +20, the bare proxies +21 and +22, Redis +30, Kafka +40; the limits-off stack the same 100 above")
	fs.DurationVar(&cfg.Duration, "duration", 2*time.Second, "length of each row's max-rate runs and of its constant-rate run, each round (whole seconds: wrk's)")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "rounds: in each, every row's runs once, one row after the other")
	fs.IntVar(&cfg.Rate, "rate", 2000, "constant rate of the latency runs, req/s")
	fs.IntVar(&cfg.Connections, "connections", 64, "connections (and callers) of the max-rate runs")
	fs.BoolVar(&cfg.Profile, "profile", true, "save a CPU profile of the edge (its admin port's pprof) under each of its max-rate runs into -dir (edge-cpu-<get|402>-limits-<on|off>.pprof)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	return cfg, nil
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	started := time.Now()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "building devstack and benchedge…")
	if err := buildTools(ctx, cfg); err != nil {
		return err
	}
	on, off, err := measure(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s\n", machine())
	fmt.Fprintf(stdout, "%d rounds, each row's runs once a round: max rate %s under vegeta and %s under wrk, %d connections; latency: %d req/s for %s; limits on, trace sampling 0.1, access log on; medians of the rounds\n\n",
		cfg.Rounds, cfg.Duration, cfg.Duration, cfg.Connections, cfg.Rate, cfg.Duration)
	writeTable(stdout, on)
	fmt.Fprintln(stdout)
	writeLimitsCost(stdout, on, off)
	fmt.Fprintf(stdout, "\n(%s in all)\n", time.Since(started).Round(time.Second))
	return nil
}

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
			return "", fmt.Errorf("no go.work above the working directory: run from the repository")
		}
		dir = parent
	}
}
