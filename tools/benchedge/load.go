package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// endpoint is one of the measured requests and the status it must get.
type endpoint struct {
	name   string
	slug   string // in file names: the edge's profile under it
	method string
	path   string
	auth   bool   // sends the stack's bearer token
	body   []byte // a JSON body
	status int
}

// endpoints are the two measured requests: a partner's authenticated GET
// (filings), and an unpaid readiness report, answered with the x402
// challenge (readiness) before any payment is looked at.
func endpoints(root string) ([]endpoint, error) {
	report, err := os.ReadFile(filepath.Join(root, "docs", "examples", "readiness-request.json"))
	if err != nil {
		return nil, err
	}
	return []endpoint{
		{"GET /api/v2/integration", "get", http.MethodGet, "/api/v2/integration", true, nil, http.StatusOK},
		{"402 challenge", "402", http.MethodPost, "/api/x402/dispute-readiness", false, report, http.StatusPaymentRequired},
	}, nil
}

// path is one way to an owner: its base URL and the processes whose CPU
// its row counts, listed when the run starts (nginx forks its workers after
// it listens).
type path struct {
	name string
	base string
	pids func() []int
}

// result is one load run's outcome.
type result struct {
	requests   uint64
	wrong      map[int]int // answers other than the endpoint's status, by status (0: transport error)
	elapsed    time.Duration
	p50, p99   time.Duration
	cpuTicks   ticks
	firstError string
}

func (r result) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// attack sends the endpoint's request through p for d: as fast as conns
// callers on conns kept-alive connections can (rate 0), or at a constant
// rate, open loop (vegeta keeps to the schedule whatever the latency, so a
// slow answer shows in the percentiles instead of slowing the sender).
func attack(ctx context.Context, e endpoint, p path, token string, rate int, d time.Duration, conns int) (result, error) {
	header := http.Header{}
	if e.auth {
		header.Set("Authorization", "Bearer "+token)
	}
	if e.body != nil {
		header.Set("Content-Type", "application/json")
	}
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: e.method, URL: p.base + e.path, Header: header, Body: e.body})
	opts := []func(*vegeta.Attacker){vegeta.KeepAlive(true), vegeta.Timeout(10 * time.Second), vegeta.Connections(conns), vegeta.MaxConnections(conns)}
	pace := vegeta.Rate{Freq: rate, Per: time.Second}
	if rate == 0 {
		opts = append(opts, vegeta.Workers(uint64(conns)), vegeta.MaxWorkers(uint64(conns)))
	}
	attacker := vegeta.NewAttacker(opts...)
	go func() {
		<-ctx.Done()
		attacker.Stop()
	}()
	pids := p.pids()
	before, err := cpuTicks(pids)
	if err != nil {
		return result{}, err
	}
	var metrics vegeta.Metrics
	r := result{wrong: map[int]int{}}
	for res := range attacker.Attack(targeter, pace, d, p.name) {
		metrics.Add(res)
		if int(res.Code) != e.status {
			r.wrong[int(res.Code)]++
			if r.firstError == "" {
				r.firstError = fmt.Sprintf("%d %s %.200s", res.Code, res.Error, res.Body)
			}
		}
	}
	metrics.Close()
	after, err := cpuTicks(pids)
	if err != nil {
		return result{}, err
	}
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	r.requests = metrics.Requests
	// Duration is the sending, Wait the last answers after it.
	r.elapsed = metrics.Duration + metrics.Wait
	r.p50, r.p99 = metrics.Latencies.P50, metrics.Latencies.P99
	r.cpuTicks = after.minus(before)
	return r, nil
}

// profileEdge saves a CPU profile of the edge, from its admin port's pprof,
// taken over d.
func profileEdge(ctx context.Context, adminPort int, d time.Duration, into string) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", adminPort, max(int(d.Seconds()), 1))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(into), 0o755); err != nil {
		return err
	}
	f, err := os.Create(into)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
