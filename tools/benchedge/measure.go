package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// row is one path's measurement of one endpoint.
type row struct {
	endpoint string
	path     string
	perSec   float64       // max rate under vegeta, answers with the endpoint's status per second
	wrkSec   float64       // max rate under wrk; 0 without wrk
	cpu      time.Duration // CPU per request of the path's own process (the proxy; the owner for direct)
	latency  bool          // p50 and p99 measured at the constant rate
	p50, p99 time.Duration
	wrong    int // answers of another status, both runs
}

// measure starts a stack with the limits' setting, drives every path and
// stops it all again.
func measure(ctx context.Context, cfg config, l limits, stdout io.Writer) ([]row, error) {
	fmt.Fprintf(stdout, "starting the stack, rate limits %s…\n", l)
	s, err := startStack(ctx, cfg, l)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	pids := map[string]int{}
	for _, name := range []string{"compat-edge", "filings", "readiness"} {
		if pids[name], err = s.pid(name); err != nil {
			return nil, err
		}
	}
	eps, err := endpoints(cfg.Root)
	if err != nil {
		return nil, err
	}
	get, challenge := eps[0], eps[1]
	base := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	only := func(pid int) func() []int { return func() []int { return []int{pid} } }
	edge := path{"edge", base(cfg.edgePort()), only(pids["compat-edge"])}
	ways := map[string][]path{
		get.name:       {{"direct", base(cfg.filingsPort()), only(pids["filings"])}},
		challenge.name: {{"direct", base(cfg.readinessPort()), only(pids["readiness"])}},
	}
	if l == limitsOn {
		if _, err := os.Stat(nginxPath); err == nil {
			ngx, err := startNginx(ctx, cfg, s.dir)
			if err != nil {
				return nil, err
			}
			defer ngx.stop()
			p := path{"nginx (1 worker)", base(cfg.nginxPort()), ngx.pids}
			ways[get.name] = append(ways[get.name], p)
			ways[challenge.name] = append(ways[challenge.name], p)
		} else {
			fmt.Fprintf(stdout, "no nginx at %s: its rows are left out\n", nginxPath)
		}
		bare, err := startBareProxy(ctx, cfg, s.dir, "bare-proxy", cfg.bareProxyPort())
		if err != nil {
			return nil, err
		}
		defer bare.stop()
		ways[get.name] = append(ways[get.name], path{"bare ReverseProxy", base(cfg.bareProxyPort()), only(bare.cmd.Process.Pid)})
		fast, err := startBareProxy(ctx, cfg, s.dir, "bare-fasthttp", cfg.bareFastProxyPort())
		if err != nil {
			return nil, err
		}
		defer fast.stop()
		ways[get.name] = append(ways[get.name], path{"bare fasthttp proxy", base(cfg.bareFastProxyPort()), only(fast.cmd.Process.Pid)})
	}
	ways[get.name] = append(ways[get.name], edge)
	ways[challenge.name] = append(ways[challenge.name], edge)

	_, err = os.Stat(wrkPath)
	useWrk := err == nil
	if !useWrk {
		fmt.Fprintf(stdout, "no wrk at %s: the max rate is vegeta's alone\n", wrkPath)
	}
	var rows []row
	for _, e := range eps {
		for _, p := range ways[e.name] {
			// Warm up: connections, the credential cache, the heap.
			if _, err := attack(ctx, e, p, s.token, 0, time.Second, cfg.Connections); err != nil {
				return nil, err
			}
			profiled := make(chan error, 1)
			profile := cfg.Profile && p.name == "edge"
			if profile {
				into := filepath.Join(cfg.Dir, "edge-cpu-"+e.slug+"-limits-"+string(l)+".pprof")
				go func() { profiled <- profileEdge(ctx, cfg, cfg.Duration-time.Second, into) }()
			}
			max, err := attack(ctx, e, p, s.token, 0, cfg.Duration, cfg.Connections)
			if err != nil {
				return nil, err
			}
			if profile {
				if err := <-profiled; err != nil {
					fmt.Fprintf(stdout, "  (no edge profile: %v)\n", err)
				}
			}
			r := row{endpoint: e.name, path: p.name, perSec: max.perSecond(), cpu: perRequest(max.cpuTicks, max.requests), wrong: count(max.wrong)}
			if max.firstError != "" {
				fmt.Fprintf(stdout, "  %s via %s: %d unexpected answers, first: %s\n", e.name, p.name, r.wrong, max.firstError)
			}
			if useWrk {
				w, err := wrkAttack(ctx, s.dir, e, p, s.token, cfg.Duration, cfg.Connections)
				if err != nil {
					return nil, err
				}
				r.wrkSec, r.wrong = w.perSecond(), r.wrong+count(w.wrong)
				if w.firstError != "" {
					fmt.Fprintf(stdout, "  %s via %s under wrk: %d unexpected answers:\n%s\n", e.name, p.name, count(w.wrong), w.firstError)
				}
			}
			if l == limitsOn {
				lat, err := attack(ctx, e, p, s.token, cfg.Rate, cfg.Duration, cfg.Connections)
				if err != nil {
					return nil, err
				}
				r.latency, r.p50, r.p99 = true, lat.p50, lat.p99
				r.wrong += count(lat.wrong)
			}
			fmt.Fprintf(stdout, "  %-24s %-18s %8.0f req/s (wrk %.0f)  %5.0f µs CPU/req\n", e.name, p.name, r.perSec, r.wrkSec, micros(r.cpu))
			rows = append(rows, r)
		}
	}
	return rows, nil
}

func count(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// perRequest spreads CPU ticks over the requests answered.
func perRequest(ticks int64, requests uint64) time.Duration {
	if requests == 0 {
		return 0
	}
	return time.Duration(ticks) * clockTick / time.Duration(requests)
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
