package console

import (
	"fmt"
	"strconv"
	"strings"
)

// An endpoint's hours drawn as SVG on the server: no script is needed to
// see them, the page's CSP allows them (no inline style: the colours are
// classes of pcourt.css), and every figure drawn is in the page's text as
// well (the figures table beside the chart). Each hour's group carries
// its figures as data attributes, which the browser test compares with
// the API's answer for the same window.

// The charts' geometry, in SVG user units (pixels at scale 1).
const (
	chartWidth      = 240.0
	attemptsHeight  = 60.0
	latencyHeight   = 40.0
	chartAxisMargin = 1.0
)

// hourChart is one endpoint's window: a bar per hour (its attempts, the
// successes among them in the success colour, the rest in the failure
// colour) and its latency as two lines (p50, p95).
type hourChart struct {
	ID            string // the endpoint's, for the charts' element ids
	Window        string // "the last 24 hours", "the last 7 days"
	Width         float64
	Height        float64
	LatencyHeight float64
	Bars          []hourBar
	MaxAttempts   int64
	MaxLatencyMs  int64
	P50, P95      string // polyline points
	Summary       string // the charts' text alternative, in one sentence
}

// hourBar is one hour's bar.
type hourBar struct {
	hourFigures
	X, W       float64
	FailY      float64
	FailH      float64
	OkY, OkH   float64
	LatencyX   float64
	Describing string // the hour in words, its tooltip
}

// windowName names the API's window in words.
func windowName(window string) string {
	if window == "7d" {
		return "the last 7 days"
	}
	return "the last 24 hours"
}

// newHourChart lays the hours out; nil without hours.
func newHourChart(id, window string, hours []hourFigures) *hourChart {
	if len(hours) == 0 {
		return nil
	}
	c := &hourChart{ID: id, Window: windowName(window), Width: chartWidth, Height: attemptsHeight, LatencyHeight: latencyHeight}
	var attempts, successes int64
	for _, h := range hours {
		c.MaxAttempts = max(c.MaxAttempts, h.Attempts)
		c.MaxLatencyMs = max(c.MaxLatencyMs, h.LatencyP95Ms)
		attempts += h.Attempts
		successes += h.Successes
	}
	w := chartWidth / float64(len(hours))
	var p50, p95 []string
	for i, h := range hours {
		b := hourBar{hourFigures: h, X: float64(i) * w, W: w}
		if c.MaxAttempts > 0 {
			total := (attemptsHeight - chartAxisMargin) * float64(h.Attempts) / float64(c.MaxAttempts)
			ok := (attemptsHeight - chartAxisMargin) * float64(h.Successes) / float64(c.MaxAttempts)
			b.OkY, b.OkH = attemptsHeight-ok, ok
			b.FailY, b.FailH = attemptsHeight-total, total-ok
		}
		b.LatencyX = b.X + w/2
		if h.Attempts > 0 && c.MaxLatencyMs > 0 {
			p50 = append(p50, point(b.LatencyX, latencyY(h.LatencyP50Ms, c.MaxLatencyMs)))
			p95 = append(p95, point(b.LatencyX, latencyY(h.LatencyP95Ms, c.MaxLatencyMs)))
		}
		b.Describing = describeHour(h)
		c.Bars = append(c.Bars, b)
	}
	c.P50, c.P95 = strings.Join(p50, " "), strings.Join(p95, " ")
	c.Summary = fmt.Sprintf("Attempts per hour over %s: %d in all, %d succeeded; the busiest hour had %d.", c.Window, attempts, successes, c.MaxAttempts)
	return c
}

func latencyY(ms, maxMs int64) float64 {
	return latencyHeight - (latencyHeight-chartAxisMargin)*float64(ms)/float64(maxMs)
}

func point(x, y float64) string {
	return strconv.FormatFloat(x, 'f', 2, 64) + "," + strconv.FormatFloat(y, 'f', 2, 64)
}

// describeHour is an hour's figures in words: the tooltip of its bar and
// the row of the figures table.
func describeHour(h hourFigures) string {
	at := h.Start.UTC().Format("2006-01-02 15:04 UTC")
	if h.Attempts == 0 {
		return at + ": no attempts"
	}
	return fmt.Sprintf("%s: %d attempts, %d succeeded; latency p50 ≤ %d ms, p95 ≤ %d ms", at, h.Attempts, h.Successes, h.LatencyP50Ms, h.LatencyP95Ms)
}
