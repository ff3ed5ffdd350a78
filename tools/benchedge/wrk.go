package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkPath is where Debian installs wrk; without it the max rate is
// vegeta's alone, with the reason printed.
const wrkPath = "/usr/bin/wrk"

// The max rate is measured twice: with vegeta's library in this process,
// and with wrk, the C load generator the first figures came from.
// On two shared processors the generator is one of three busy processes:
// vegeta spends about as much CPU a request as the owner does, and takes
// it from the path being measured, so a proxy's cost in CPU counts about
// double against it; wrk spends a fraction of that.

// wrkScript sends the endpoint's request: its method, headers and body.
func wrkScript(e endpoint, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %q\n", e.method)
	if e.auth {
		fmt.Fprintf(&b, "wrk.headers[\"Authorization\"] = %q\n", "Bearer "+token)
	}
	if e.body != nil {
		b.WriteString("wrk.headers[\"Content-Type\"] = \"application/json\"\n")
		fmt.Fprintf(&b, "wrk.body = %q\n", string(e.body))
	}
	return b.String()
}

var (
	wrkTotal   = regexp.MustCompile(`(\d+) requests in ([0-9.]+)(us|ms|s|m)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSockets = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// wrkAttack drives p with wrk for d on conns connections (two threads, as
// many as the machine has processors) and counts the path's CPU over it.
func wrkAttack(ctx context.Context, dir string, e endpoint, p path, token string, d time.Duration, conns int) (result, error) {
	script := filepath.Join(dir, "wrk-"+e.slug+".lua")
	if err := os.WriteFile(script, []byte(wrkScript(e, token)), 0o600); err != nil {
		return result{}, err
	}
	pids := p.pids()
	before, err := cpuTicks(pids)
	if err != nil {
		return result{}, err
	}
	cmd := exec.CommandContext(ctx, wrkPath, "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s",
		"--timeout", "10s", "-s", script, p.base+e.path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("wrk: %w\n%s", err, out.String())
	}
	after, err := cpuTicks(pids)
	if err != nil {
		return result{}, err
	}
	return parseWrk(out.String(), e.status, after.minus(before))
}

// parseWrk reads wrk's summary. An answer of another status than want
// (wrk counts only non-2xx and 3xx answers) and every socket error count
// as wrong answers, under status 0 for the latter.
func parseWrk(out string, want int, cpu ticks) (result, error) {
	m := wrkTotal.FindStringSubmatch(out)
	if m == nil {
		return result{}, fmt.Errorf("wrk printed no total:\n%s", out)
	}
	requests, _ := strconv.ParseUint(m[1], 10, 64)
	amount, _ := strconv.ParseFloat(m[2], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[m[3]]
	r := result{requests: requests, elapsed: time.Duration(amount * float64(unit)), wrong: map[int]int{}, cpuTicks: cpu}
	non2xx := 0
	if n := wrkNon2xx.FindStringSubmatch(out); n != nil {
		non2xx, _ = strconv.Atoi(n[1])
	}
	switch {
	case want < 400 && non2xx > 0:
		r.wrong[-1] = non2xx // some status of 400 or more
	case want >= 400 && uint64(non2xx) != requests:
		r.wrong[-1] = int(requests) - non2xx // a 2xx or 3xx where want was expected
	}
	if s := wrkSockets.FindStringSubmatch(out); s != nil {
		for _, v := range s[1:] {
			n, _ := strconv.Atoi(v)
			r.wrong[0] += n
		}
	}
	if count(r.wrong) > 0 {
		r.firstError = strings.TrimSpace(out)
	}
	return r, nil
}
