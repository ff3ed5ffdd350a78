package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeTable prints the rows of one stack as a Markdown table, each path
// compared with direct (and the edge with the bare proxy) on its endpoint:
// each rate the median of its rounds, each ratio and added latency the
// median of its rounds' (measured within a round, a few seconds apart).
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| endpoint | path | req/s (vegeta) | × direct | req/s (wrk) | × direct | at rate p50 / p99 ms | added p50 / p99 ms | CPU µs/req: user + system (its process) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		direct, _ := find(rows, r.endpoint, "direct")
		bare, withBare := find(rows, r.endpoint, "bare ReverseProxy")
		withBare = withBare && r.path == "edge"
		ratio := func(rates, directRates, bareRates []float64) string {
			s := fmt.Sprintf("%.2f×", pairedRatio(rates, directRates))
			if withBare {
				s += fmt.Sprintf(" (%.2f× bare)", pairedRatio(rates, bareRates))
			}
			return s
		}
		wrkRate, wrkRatio := "—", "—"
		if len(r.wrkSec) > 0 {
			wrkRate, wrkRatio = fmt.Sprintf("%.0f", median(r.wrkSec)), ratio(r.wrkSec, direct.wrkSec, bare.wrkSec)
		}
		at, added := "—", "—"
		if len(r.p50) > 0 {
			at = fmt.Sprintf("%s / %s", ms(median(r.p50)), ms(median(r.p99)))
			if r.path != "direct" && len(direct.p50) > 0 {
				added = fmt.Sprintf("%+.2f / %+.2f", millis(pairedAdded(r.p50, direct.p50)), millis(pairedAdded(r.p99, direct.p99)))
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
		cpu, user, system := r.cpu()
		fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %s | %s | %s | %s | %.0f: %.0f + %.0f (%s) |\n", r.endpoint, r.path, median(r.perSec), note,
			ratio(r.perSec, direct.perSec, bare.perSec), wrkRate, wrkRatio, at, added, micros(cpu), micros(user), micros(system), who)
	}
}

// writeLimitsCost prints what the rate limits cost each path: its req/s
// with the limits on over its req/s with them off, the two stacks' runs
// of a round taken a few seconds apart.
func writeLimitsCost(w io.Writer, on, off []row) {
	fmt.Fprintln(w, "| endpoint | path | req/s limits on | req/s limits off | on / off (vegeta) | on / off (wrk) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range off {
		with, ok := find(on, r.endpoint, r.path)
		if !ok {
			continue
		}
		wrk := "—"
		if len(r.wrkSec) > 0 && len(with.wrkSec) > 0 {
			wrk = fmt.Sprintf("%.2f×", pairedRatio(with.wrkSec, r.wrkSec))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.2f× | %s |\n", r.endpoint, r.path, median(with.perSec), median(r.perSec), pairedRatio(with.perSec, r.perSec), wrk)
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

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", millis(d)) }
