package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// row is one path's measurement of one endpoint on one stack: a sample
// per round of each of its runs.
type row struct {
	endpoint string
	path     string
	perSec   []float64       // max rate under vegeta, answers with the endpoint's status per second
	wrkSec   []float64       // max rate under wrk; none without wrk
	p50, p99 []time.Duration // at the constant rate; none where it is not measured
	ticks    ticks           // CPU of the path's own process (the proxy; the owner for direct) over the vegeta max-rate runs
	requests uint64          // answered in those runs
	wrong    int             // answers of another status, every run
}

// cpu is the path's own process's CPU per request, and its parts in user
// space and in the kernel (the system calls: the sockets' work).
func (r row) cpu() (total, user, system time.Duration) {
	return perRequest(r.ticks.user+r.ticks.system, r.requests), perRequest(r.ticks.user, r.requests), perRequest(r.ticks.system, r.requests)
}

// rowRun is what a row is measured through: the endpoint, the path and the
// stack's credential.
type rowRun struct {
	row   *row
	e     endpoint
	p     path
	stack *stack
	edge  bool // the edge's runs are profiled
	on    bool // limits on: the latency is measured on this stack
}

// measure starts both stacks, the reference proxies in front of the
// limits-on one's owners, and drives every path in turns: each round runs
// every row once, so every row's samples are spread over the same minutes.
// This machine is shared and the speed it gives moves by a fifth within a
// minute; a ratio is taken within a round (a path's rate over direct's a
// few seconds apart) and the median of the rounds' ratios is what the table
// prints, which a slow minute moves far less than one sample per row.
func measure(ctx context.Context, cfg config, stdout io.Writer) (on, off []row, err error) {
	stacks := map[limits]*stack{}
	for _, l := range []limits{limitsOn, limitsOff} {
		fmt.Fprintf(stdout, "starting the stack, rate limits %s…\n", l)
		s, err := startStack(ctx, cfg, l)
		if err != nil {
			return nil, nil, err
		}
		defer s.stop()
		stacks[l] = s
	}
	eps, err := endpoints(cfg.Root)
	if err != nil {
		return nil, nil, err
	}
	runs, stopProxies, err := rowRuns(ctx, cfg, stacks, eps, stdout)
	defer stopProxies()
	if err != nil {
		return nil, nil, err
	}
	_, err = os.Stat(wrkPath)
	useWrk := err == nil
	if !useWrk {
		fmt.Fprintf(stdout, "no wrk at %s: the max rate is vegeta's alone\n", wrkPath)
	}
	for _, r := range runs {
		// Warm up: connections, the credential cache, the heap.
		if _, err := attack(ctx, r.e, r.p, r.stack.token, 0, time.Second, cfg.Connections); err != nil {
			return nil, nil, err
		}
	}
	for round := 1; round <= cfg.Rounds; round++ {
		fmt.Fprintf(stdout, "round %d of %d…\n", round, cfg.Rounds)
		for _, r := range runs {
			if err := r.once(ctx, cfg, round == 1, useWrk, stdout); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, r := range runs {
		cpu, user, system := r.row.cpu()
		fmt.Fprintf(stdout, "  %-24s %-19s %-11s %8.0f req/s (wrk %.0f)  %3.0f µs CPU/req (%.0f user + %.0f system)\n", r.row.endpoint, r.row.path,
			"limits "+string(r.stack.limits), median(r.row.perSec), median(r.row.wrkSec), micros(cpu), micros(user), micros(system))
		if r.on {
			on = append(on, *r.row)
		} else {
			off = append(off, *r.row)
		}
	}
	return on, off, nil
}

// rowRuns lists the rows in the table's order, starting the reference
// proxies (nginx where it is installed, the bare proxies) in front of the
// limits-on stack's owners; stop stops them.
func rowRuns(ctx context.Context, cfg config, stacks map[limits]*stack, eps []endpoint, stdout io.Writer) (out []rowRun, stop func(), err error) {
	var started []*process
	stop = func() {
		for _, p := range started {
			p.stop()
		}
	}
	get, challenge := eps[0], eps[1]
	base := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	only := func(pid int) func() []int { return func() []int { return []int{pid} } }
	on := stacks[limitsOn]
	var reference []path // in front of filings, nginx in front of readiness too
	var nginx *path
	if _, err := os.Stat(nginxPath); err == nil {
		ngx, err := startNginx(ctx, cfg, on.dir)
		if err != nil {
			return nil, stop, err
		}
		started = append(started, ngx)
		nginx = &path{"nginx (1 worker)", base(cfg.nginxPort()), ngx.pids}
		reference = append(reference, *nginx)
	} else {
		fmt.Fprintf(stdout, "no nginx at %s: its rows are left out\n", nginxPath)
	}
	for _, bare := range []struct {
		mode, name string
		port       int
	}{{"bare-proxy", "bare ReverseProxy", cfg.bareProxyPort()}, {"bare-fasthttp", "bare fasthttp proxy", cfg.bareFastProxyPort()}} {
		p, err := startBareProxy(ctx, cfg, on.dir, bare.mode, bare.port)
		if err != nil {
			return nil, stop, err
		}
		started = append(started, p)
		reference = append(reference, path{bare.name, base(bare.port), only(p.cmd.Process.Pid)})
	}
	for _, l := range []limits{limitsOn, limitsOff} {
		s := stacks[l]
		pids := map[string]int{}
		for _, name := range []string{"compat-edge", "filings", "readiness"} {
			if pids[name], err = s.pid(name); err != nil {
				return nil, stop, err
			}
		}
		edge := path{"edge", base(s.port), only(pids["compat-edge"])}
		ways := map[string][]path{
			get.name:       {{"direct", base(s.filingsPort()), only(pids["filings"])}},
			challenge.name: {{"direct", base(s.readinessPort()), only(pids["readiness"])}},
		}
		if l == limitsOn {
			ways[get.name] = append(ways[get.name], reference...)
			if nginx != nil {
				ways[challenge.name] = append(ways[challenge.name], *nginx)
			}
		}
		for _, e := range eps {
			for _, p := range append(ways[e.name], edge) {
				out = append(out, rowRun{row: &row{endpoint: e.name, path: p.name}, e: e, p: p, stack: s, edge: p.name == "edge", on: l == limitsOn})
			}
		}
	}
	return out, stop, nil
}

// once takes a round's samples of the row: the max rate under vegeta (the
// edge's profiled in the first round), under wrk, and on the limits-on
// stack the latency at the constant rate.
func (r rowRun) once(ctx context.Context, cfg config, first, useWrk bool, stdout io.Writer) error {
	profiled := make(chan error, 1)
	profile := cfg.Profile && r.edge && first
	if profile {
		into := filepath.Join(cfg.Dir, "edge-cpu-"+r.e.slug+"-limits-"+string(r.stack.limits)+".pprof")
		go func() { profiled <- profileEdge(ctx, r.stack.adminPort(), cfg.Duration, into) }()
	}
	max, err := attack(ctx, r.e, r.p, r.stack.token, 0, cfg.Duration, cfg.Connections)
	if err != nil {
		return err
	}
	if profile {
		if err := <-profiled; err != nil {
			fmt.Fprintf(stdout, "  (no edge profile: %v)\n", err)
		}
	}
	w := r.row
	w.perSec = append(w.perSec, max.perSecond())
	w.ticks = w.ticks.plus(max.cpuTicks)
	w.requests += max.requests
	w.wrong += count(max.wrong)
	if max.firstError != "" {
		fmt.Fprintf(stdout, "  %s via %s: %d unexpected answers, first: %s\n", w.endpoint, w.path, count(max.wrong), max.firstError)
	}
	if useWrk {
		res, err := wrkAttack(ctx, r.stack.dir, r.e, r.p, r.stack.token, cfg.Duration, cfg.Connections)
		if err != nil {
			return err
		}
		w.wrkSec = append(w.wrkSec, res.perSecond())
		w.wrong += count(res.wrong)
		if res.firstError != "" {
			fmt.Fprintf(stdout, "  %s via %s under wrk: %d unexpected answers:\n%s\n", w.endpoint, w.path, count(res.wrong), res.firstError)
		}
	}
	if r.on {
		lat, err := attack(ctx, r.e, r.p, r.stack.token, cfg.Rate, cfg.Duration, cfg.Connections)
		if err != nil {
			return err
		}
		w.p50, w.p99 = append(w.p50, lat.p50), append(w.p99, lat.p99)
		w.wrong += count(lat.wrong)
	}
	return nil
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

// median is the middle sample (the mean of the two middle ones), 0 of none.
func median[T float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// pairedRatio is the median of a's samples over b's of the same round.
func pairedRatio(a, b []float64) float64 {
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			ratios = append(ratios, a[i]/b[i])
		}
	}
	return median(ratios)
}

// pairedAdded is the median of what a's samples add to b's of the same
// round.
func pairedAdded(a, b []time.Duration) time.Duration {
	var added []time.Duration
	for i := range min(len(a), len(b)) {
		added = append(added, a[i]-b[i])
	}
	return median(added)
}
