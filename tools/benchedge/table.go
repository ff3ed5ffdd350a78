package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeTable prints the rows of one stack as a Markdown table, each path
// compared with direct (and the edge with the bare proxy) on its endpoint.
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| endpoint | path | req/s (vegeta) | × direct | req/s (wrk) | × direct | at rate p50 / p99 ms | added p50 / p99 ms | CPU µs/req (its process) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		direct, _ := find(rows, r.endpoint, "direct")
		bare, withBare := find(rows, r.endpoint, "bare ReverseProxy")
		withBare = withBare && r.path == "edge"
		ratio := func(rate, directRate, bareRate float64) string {
			s := fmt.Sprintf("%.2f×", ratioOf(rate, directRate))
			if withBare {
				s += fmt.Sprintf(" (%.2f× bare)", ratioOf(rate, bareRate))
			}
			return s
		}
		wrkRate, wrkRatio := "—", "—"
		if r.wrkSec > 0 {
			wrkRate, wrkRatio = fmt.Sprintf("%.0f", r.wrkSec), ratio(r.wrkSec, direct.wrkSec, bare.wrkSec)
		}
		at, added := "—", "—"
		if r.latency {
			at = fmt.Sprintf("%s / %s", ms(r.p50), ms(r.p99))
			if r.path != "direct" && direct.latency {
				added = fmt.Sprintf("%+.2f / %+.2f", millis(r.p50-direct.p50), millis(r.p99-direct.p99))
			}
		}
		note := ""
		if r.wrong > 0 {
			note = fmt.Sprintf(" (%d answers of another status!)", r.wrong)
		}
		who := "owner"
		if r.path != "direct" {
			who = "proxy"
		}
		fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %s | %s | %s | %s | %.0f (%s) |\n", r.endpoint, r.path, r.perSec, note,
			ratio(r.perSec, direct.perSec, bare.perSec), wrkRate, wrkRatio, at, added, micros(r.cpu), who)
	}
}

// writeLimitsCost prints what the rate limits cost each path: its req/s
// with the limits on over its req/s with them off.
func writeLimitsCost(w io.Writer, on, off []row) {
	fmt.Fprintln(w, "| endpoint | path | req/s limits on | req/s limits off | on / off (vegeta) | on / off (wrk) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range off {
		with, ok := find(on, r.endpoint, r.path)
		if !ok {
			continue
		}
		wrk := "—"
		if r.wrkSec > 0 && with.wrkSec > 0 {
			wrk = fmt.Sprintf("%.2f×", ratioOf(with.wrkSec, r.wrkSec))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.2f× | %s |\n", r.endpoint, r.path, with.perSec, r.perSec, ratioOf(with.perSec, r.perSec), wrk)
	}
}

func find(rows []row, endpoint, path string) (row, bool) {
	for _, r := range rows {
		if r.endpoint == endpoint && strings.EqualFold(r.path, path) {
			return r, true
		}
	}
	return row{}, false
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", millis(d)) }
