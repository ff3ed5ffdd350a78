package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// dayCalls are a deprecated route's calls on one UTC day, as the edge's
// usage read answers them (callsByDay).
type dayCalls struct {
	Day   string `json:"day"` // YYYY-MM-DD
	Calls int64  `json:"calls"`
}

// dayChart is a deprecated route's last 30 days: a bar per day, and its
// Sunset as a line on the day it falls, when it falls within them, or
// said beside the chart when it is still to come.
type dayChart struct {
	Route     string
	Width     float64
	Height    float64
	Bars      []dayBar
	MaxCalls  int64
	SunsetX   float64 // the Sunset's line; meaningful when SunsetIn
	SunsetIn  bool
	SunsetDay string // YYYY-MM-DD; "" when none is announced
	Summary   string
}

// dayBar is one day's bar.
type dayBar struct {
	dayCalls
	X, W, Y, H float64
	Describing string
}

// newDayChart lays the days out; nil without days.
func newDayChart(route string, days []dayCalls, sunset time.Time) *dayChart {
	if len(days) == 0 {
		return nil
	}
	c := &dayChart{Route: route, Width: chartWidth, Height: attemptsHeight}
	var total int64
	for _, d := range days {
		c.MaxCalls = max(c.MaxCalls, d.Calls)
		total += d.Calls
	}
	w := chartWidth / float64(len(days))
	for i, d := range days {
		b := dayBar{dayCalls: d, X: float64(i) * w, W: w, Y: attemptsHeight}
		if c.MaxCalls > 0 {
			b.H = (attemptsHeight - chartAxisMargin) * float64(d.Calls) / float64(c.MaxCalls)
			b.Y = attemptsHeight - b.H
		}
		b.Describing = fmt.Sprintf("%s: %d calls", d.Day, d.Calls)
		c.Bars = append(c.Bars, b)
	}
	c.Summary = fmt.Sprintf("Calls per day over the last 30 days: %d in all, the busiest day %d.", total, c.MaxCalls)
	if !sunset.IsZero() {
		c.SunsetDay = sunset.UTC().Format(time.DateOnly)
		for i, d := range days {
			if d.Day == c.SunsetDay {
				c.SunsetIn, c.SunsetX = true, float64(i)*w
			}
		}
		c.Summary += " Sunset: " + c.SunsetDay + "."
	}
	return c
}

// outcomeFigures are the partner's deliveries created in one clock hour,
// by the status each has now, as GET /api/webhooks/deliveries/outcomes
// answers them.
type outcomeFigures struct {
	Start     time.Time `json:"start"`
	Scheduled int64     `json:"scheduled"`
	Delivered int64     `json:"delivered"`
	Failed    int64     `json:"failed"`
	Cancelled int64     `json:"cancelled"`
}

// Total is every delivery of the hour.
func (o outcomeFigures) Total() int64 { return o.Scheduled + o.Delivered + o.Failed + o.Cancelled }

// outcomeStatuses are the outcomes as a bar stacks them, bottom up: each
// status, its class (a pcourt.css colour) and its name in words.
var outcomeStatuses = []struct {
	Status, Class, Name string
	count               func(outcomeFigures) int64
}{
	{"delivered", "ok", "delivered", func(o outcomeFigures) int64 { return o.Delivered }},
	{"failed", "fail", "failed", func(o outcomeFigures) int64 { return o.Failed }},
	{"cancelled", "cancelled", "cancelled", func(o outcomeFigures) int64 { return o.Cancelled }},
	{"scheduled", "scheduled", "pending or retrying", func(o outcomeFigures) int64 { return o.Scheduled }},
}

// outcomeChart is the partner's deliveries over the last 24 hours: a bar
// per hour of the deliveries created in it, stacked by where each stands
// now.
type outcomeChart struct {
	Width, Height float64
	Bars          []outcomeBar
	MaxTotal      int64
	Total         outcomeFigures
	Summary       string
}

// outcomeBar is one hour's bar: its segments bottom up (none for an
// empty hour), and the deliveries page filtered to the hour.
type outcomeBar struct {
	outcomeFigures
	X, W       float64
	Segments   []outcomeSegment
	Describing string
	Since      string // the hour, as the deliveries filter spells it
	Until      string
}

// outcomeSegment is one status's part of a bar.
type outcomeSegment struct {
	Class string
	Y, H  float64
	Count int64
}

// newOutcomeChart lays the hours out; nil without hours.
func newOutcomeChart(hours []outcomeFigures) *outcomeChart {
	if len(hours) == 0 {
		return nil
	}
	c := &outcomeChart{Width: chartWidth, Height: attemptsHeight}
	for _, h := range hours {
		c.MaxTotal = max(c.MaxTotal, h.Total())
		c.Total.Scheduled += h.Scheduled
		c.Total.Delivered += h.Delivered
		c.Total.Failed += h.Failed
		c.Total.Cancelled += h.Cancelled
	}
	w := chartWidth / float64(len(hours))
	for i, h := range hours {
		b := outcomeBar{outcomeFigures: h, X: float64(i) * w, W: w, Describing: describeOutcomes(h),
			Since: h.Start.UTC().Format(windowLayout), Until: h.Start.Add(time.Hour).UTC().Format(windowLayout)}
		y := attemptsHeight
		for _, s := range outcomeStatuses {
			n := s.count(h)
			if n == 0 || c.MaxTotal == 0 {
				continue
			}
			height := (attemptsHeight - chartAxisMargin) * float64(n) / float64(c.MaxTotal)
			y -= height
			b.Segments = append(b.Segments, outcomeSegment{Class: s.Class, Y: y, H: height, Count: n})
		}
		c.Bars = append(c.Bars, b)
	}
	c.Summary = fmt.Sprintf("Deliveries created per hour over the last 24 hours, by where each stands now: %d in all, %s; the busiest hour had %d.",
		c.Total.Total(), outcomeWords(c.Total), c.MaxTotal)
	return c
}

// outcomeWords says an hour's (or the window's) deliveries by status.
func outcomeWords(o outcomeFigures) string {
	parts := make([]string, 0, len(outcomeStatuses))
	for _, s := range outcomeStatuses {
		parts = append(parts, fmt.Sprintf("%d %s", s.count(o), s.Name))
	}
	return strings.Join(parts, ", ")
}

// describeOutcomes is an hour's figures in words, its bar's tooltip.
func describeOutcomes(o outcomeFigures) string {
	at := o.Start.UTC().Format("2006-01-02 15:04 UTC")
	if o.Total() == 0 {
		return at + ": no deliveries"
	}
	return fmt.Sprintf("%s: %d deliveries, %s", at, o.Total(), outcomeWords(o))
}
