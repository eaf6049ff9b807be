package loadtest

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// writeHTML writes out as one self-contained HTML page: no script, no
// style sheet or font from elsewhere, the charts inline SVG, under o's
// Title and Command, the checks' table first. For each run: a table of
// its figures, latency over time (p50 and p99 per second, when the run
// kept a Timeline), and the percentile curve on a log scale (HdrHistogram's
// percentile distribution, corrected and uncorrected under -rate), and the
// server loop's figures when scraped. For a sweep: the throughput-latency
// curve with the knee marked. Every chart has a title, a description,
// labelled axes, a legend that does not rely on colour alone (dash
// patterns), and its data as a table below it.
func writeHTML(out io.Writer, o Output, opt *PrintOptions, checks []ThresholdCheck) error {
	w := bufio.NewWriter(out)
	p := &page{w: w, scenario: cmp.Or(opt.Scenario, "Head-of-line blocking"), expected: opt.Expected}
	p.head(opt.Title)
	if opt.Command != "" {
		p.printf("<p class=\"cmd\"><code>%s</code></p>\n", esc(opt.Command))
	}
	p.printf("<p>Times are in milliseconds. Under <code>-rate</code> (open loop) latencies are <em>corrected for coordinated omission</em>: counted from each request's intended send time, as wrk2 does; the uncorrected figures (from the actual send, as ab and wrk count) are beside them.</p>\n")
	if len(checks) > 0 {
		p.thresholds(checks)
	}
	o.writeHTML(p)
	p.printf("</main>\n</body>\n</html>\n")
	return w.Flush()
}

// page writes the HTML and numbers its charts.
type page struct {
	w        io.Writer
	charts   int
	scenario string // names a head-of-line run (PrintOptions.Scenario)
	expected []int  // non-2xx statuses labelled expected (PrintOptions.Expected)
}

func (p *page) printf(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

const pageStyle = `body{font-family:system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fff;line-height:1.4}
main{max-width:60rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem}h2{font-size:1.25rem;margin-top:2.5rem;border-bottom:1px solid #ccc}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child{text-align:left}caption{text-align:left;font-weight:600;padding:.3rem 0}
figure{margin:1rem 0}figcaption{font-size:.9rem;color:#444}svg{max-width:100%;height:auto}
.failed{color:#a00000;font-weight:700}.ok{color:#0a5d00}.warn{color:#a00000}.cmd code{font-size:.85rem;word-break:break-all}
details{margin:.3rem 0 1rem}summary{cursor:pointer;color:#0645ad}`

func (p *page) head(title string) {
	p.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"+
		"<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n<h1>%s</h1>\n",
		esc(title), pageStyle, esc(title))
}

func (p *page) thresholds(checks []ThresholdCheck) {
	p.printf("<table>\n<caption>Thresholds</caption>\n<thead><tr><th scope=\"col\">run</th><th scope=\"col\">threshold</th><th scope=\"col\">measured</th><th scope=\"col\">result</th></tr></thead>\n<tbody>\n")
	for _, c := range checks {
		mark, class := "ok", "ok"
		if !c.OK {
			mark, class = "FAILED", "failed"
		}
		p.printf("<tr><td>%s</td><td><code>%s</code></td><td>%s</td><td class=\"%s\">%s</td></tr>\n",
			esc(c.Run), esc(c.Threshold.Expr), esc(c.Threshold.unitValue(c.Got)), class, mark)
	}
	p.printf("</tbody>\n</table>\n")
}

// run renders one run: its figures, its timeline and its percentile curve.
func (p *page) run(label string, r *Result) {
	p.printf("<section>\n<h2>%s</h2>\n", esc(label))
	p.summary(r)
	p.loop(r.Loop, r.ServerCPUPerRequest())
	p.timeline(label, r)
	curves := []series{{Name: latencyName(r), Points: curvePoints(r.Distribution, r.CompleteRequests)}}
	if r.OpenLoop != nil {
		curves = append(curves, series{Name: "uncorrected", Points: curvePoints(r.OpenLoop.UncorrectedDistribution, r.CompleteRequests)})
	}
	p.percentileChart(label, curves)
	p.printf("</section>\n")
}

// latencyPhrase is name (latencyName) in a sentence: "corrected
// latency", "latency".
func latencyPhrase(name string) string {
	if name == "latency" {
		return name
	}
	return name + " latency"
}

// latencyName is what the reported latency of r is called in a legend.
func latencyName(r *Result) string {
	if r.OpenLoop != nil {
		return "corrected"
	}
	return "latency"
}

// summary is a run's figures as a table.
func (p *page) summary(r *Result) {
	mode := "closed loop (ab's model)"
	if r.OpenLoop != nil {
		mode = fmt.Sprintf("open loop at %.2f req/s (wrk2's model)", r.OpenLoop.TargetRate)
	}
	conn := "a new connection per request"
	if r.KeepAlive {
		conn = "keep-alive"
	}
	p.printf("<p>%s, concurrency %d, %s, %.3f s.</p>\n", esc(mode), r.ConcurrencyLevel, conn, r.TimeTaken.Seconds())
	p.printf("<table>\n<caption>Figures of %s</caption>\n<tbody>\n", esc(shorten(r.DocumentPath)))
	row := func(name, value string) { p.printf("<tr><th scope=\"row\">%s</th><td>%s</td></tr>\n", name, value) }
	row("Requests per second", fmt.Sprintf("%.2f", r.RequestsPerSecond()))
	row("Complete requests", fmt.Sprint(r.CompleteRequests))
	row("Failed requests", fmt.Sprint(r.FailedRequests))
	row("Non-2xx responses", esc(p.non2xxByStatus(r)))
	for _, pc := range []float64{50, 90, 99, 99.9} {
		v := formatMSDecimals(percentileOf(r, pc))
		if r.OpenLoop != nil {
			v += " (uncorrected " + formatMSDecimals(percentileIn(r.OpenLoop.Uncorrected, pc, r.Total.Max)) + ")"
		}
		row(fmt.Sprintf("p%s ms", strconv.FormatFloat(pc, 'f', -1, 64)), v)
	}
	v := formatMSDecimals(longestOf(r))
	if r.OpenLoop != nil {
		v += " (uncorrected " + formatMSDecimals(r.Total.Max) + ")"
	}
	row("Longest ms", v)
	if o := r.OpenLoop; o != nil {
		row("Sent late", fmt.Sprintf("%d waited for a free connection (more than %s past due); latest send by %s ms",
			o.Late, lateTolerance, formatMSDecimals(o.MaxLateness)))
		if o.Unsent > 0 {
			row("Never sent", fmt.Sprintf("<span class=\"warn\">%d requests due in the time limit found no free connection</span>", o.Unsent))
		}
		row("Client lateness ms", fmt.Sprintf("median %s, p99 %s, max %s (this client's timer and scheduling, not counted)",
			formatMSDecimals(o.ClientLateness.Median), formatMSDecimals(o.ClientLatenessP99), formatMSDecimals(o.ClientLateness.Max)))
		if r.FellShort() {
			row("Achieved rate", fmt.Sprintf("<span class=\"warn\">%.2f req/s fell short of the target %.2f</span>", r.RequestsPerSecond(), o.TargetRate))
		}
	}
	p.printf("</tbody>\n</table>\n")
}

// percentileIn is the row for percent in ps, or def.
func percentileIn(ps []Percentile, percent float64, def time.Duration) time.Duration {
	for _, q := range ps {
		if q.Percent == percent {
			return q.Latency
		}
	}
	return def
}

// loop renders the server loop's figures, when they were scraped, with
// the server's CPU per request.
func (p *page) loop(l *LoopFigures, cpuPerRequest time.Duration) {
	if l == nil {
		return
	}
	if l.Error != "" {
		p.printf("<p>The server's metrics could not be read: %s</p>\n", esc(l.Error))
		return
	}
	if !l.HasLoop() {
		p.printf("<table>\n<caption>The server during the run (from its metrics; it has no event loop)</caption>\n<tbody>\n")
		p.printf("<tr><th scope=\"row\">Server CPU per request</th><td>%s</td></tr>\n", formatCPU(cpuPerRequest, l.CPU))
		p.printf("</tbody>\n</table>\n")
		return
	}
	p.printf("<table>\n<caption>The server's event loop during the run (from its metrics)</caption>\n<tbody>\n")
	p.printf("<tr><th scope=\"row\">Utilization</th><td>%.1f%%</td></tr>\n", 100*l.Utilization)
	p.printf("<tr><th scope=\"row\">Loop lag p99 ms</th><td>~%s (interpolated within a histogram bucket)</td></tr>\n", formatMSDecimals(l.LagP99))
	p.printf("<tr><th scope=\"row\">Loop lag max ms</th><td>%s</td></tr>\n", esc(boundText(l.LagMax, l.LagMaxBound)))
	p.printf("<tr><th scope=\"row\">Longest turn ms</th><td>%s</td></tr>\n", esc(boundText(l.LongestTurn, l.LongestTurnBound)))
	p.printf("<tr><th scope=\"row\">Slow requests</th><td>%d</td></tr>\n", l.SlowRequests)
	p.printf("<tr><th scope=\"row\">Worker pool ms</th><td>%s</td></tr>\n", formatMSDecimals(l.WorkTime))
	p.printf("<tr><th scope=\"row\">Server CPU per request</th><td>%s</td></tr>\n", formatCPU(cpuPerRequest, l.CPU))
	p.printf("</tbody>\n</table>\n")
	p.loopWait(l.Wait)
}

// loopWait renders the loop's attribution of its requests' waits, a row
// a route.
func (p *page) loopWait(w *LoopWait) {
	if w == nil {
		return
	}
	share := "unknown"
	if s, ok := w.cpuWaitShare(); ok {
		share = fmt.Sprintf("%.1f%%", 100*s)
	}
	p.printf("<table>\n<caption>Why requests waited, by the loop's own account: behind other work on the loop (head-of-line) "+
		"and for a CPU (the machine); the loop waited for a CPU %s of the time it wanted to run</caption>\n<thead><tr>", share)
	for _, c := range []string{"route", "requests attributed", "head-of-line p50 ms", "head-of-line p99 ms", "head-of-line max ms (bound)",
		"CPU wait p99 ms", "handler p99 ms"} {
		p.printf("<th scope=\"col\">%s</th>", c)
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for _, r := range w.Routes {
		p99 := func(d time.Duration) string {
			if r.Requests < 100 {
				return fmt.Sprintf("n/a (%d requests)", r.Requests)
			}
			return formatMSDecimals(d)
		}
		p.printf("<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(r.Route), r.Requests,
			formatMSDecimals(r.HeadOfLine.P50), p99(r.HeadOfLine.P99), formatMSDecimals(r.HeadOfLine.Max), p99(r.CPUWait.P99), p99(r.Handler.P99))
	}
	p.printf("</tbody>\n</table>\n")
}

// boundText is boundMS, saying what a bound is.
func boundText(d time.Duration, bound bool) string {
	if bound {
		return boundMS(d, true) + " (a histogram bucket's upper bound: not known exactly)"
	}
	return formatMSDecimals(d)
}

// timeline renders latency over time: p50 and p99 per second.
func (p *page) timeline(label string, r *Result) {
	if len(r.Timeline) == 0 {
		return
	}
	name := latencyName(r)
	var p50, p99, u99 []point
	for _, s := range r.Timeline {
		if s.Requests == 0 {
			continue
		}
		x := s.At.Seconds() + 0.5
		p50 = append(p50, point{X: x, Y: ms(s.P50)})
		p99 = append(p99, point{X: x, Y: ms(s.P99)})
		u99 = append(u99, point{X: x, Y: ms(s.UncorrectedP99)})
	}
	c := chart{
		Title:  "Latency over time: " + label,
		Desc:   fmt.Sprintf("p50 and p99 of the %s in milliseconds for each second of the run, by when responses ended.", latencyPhrase(name)),
		XLabel: "time since the start of the run (s)", YLabel: "latency (ms)",
		Series: []series{{Name: name + " p50", Points: p50}, {Name: name + " p99", Points: p99}},
	}
	if r.OpenLoop != nil {
		c.Series = append(c.Series, series{Name: "uncorrected p99", Points: u99})
	}
	p.figure(&c, []string{"second", "requests", name + " p50 ms", name + " p99 ms", "max ms"}, func(row func(...string)) {
		for _, s := range r.Timeline {
			row(fmt.Sprintf("%.0f–%.0f", s.At.Seconds(), s.At.Seconds()+1), fmt.Sprint(s.Requests),
				formatMSDecimals(s.P50), formatMSDecimals(s.P99), formatMSDecimals(s.Max))
		}
	})
}

// curvePoints turns a percentile distribution into a percentile curve's
// points: x is log10(1/(1-q)), so 90% is at 1, 99% at 2, 99.9% at 3; the
// 100% point, at infinity, is drawn at the resolution of n requests.
func curvePoints(dist []Percentile, n int64) []point {
	var out []point
	top := math.Log10(float64(max(n, 10)))
	for _, d := range dist {
		q := d.Percent / 100
		x := top
		if q < 1 {
			x = min(-math.Log10(1-q), top)
		}
		out = append(out, point{X: x, Y: ms(d.Latency), Label: strconv.FormatFloat(d.Percent, 'f', -1, 64) + "%"})
	}
	return out
}

// percentileTicks label the percentile axis: 0%, 90%, 99%, 99.9%, ...
func percentileTicks(top float64) []tick {
	ticks := []tick{{0, "0%"}}
	label := "90"
	for x := 1.0; x <= math.Ceil(top); x++ {
		ticks = append(ticks, tick{x, label + "%"})
		if x == 1 {
			label = "99"
		} else {
			label = label[:2] + "." + strings.Repeat("9", int(x)-1)
		}
	}
	return ticks
}

// percentileChart renders percentile curves on a log scale, as
// HdrHistogram's plotter draws them.
func (p *page) percentileChart(label string, curves []series) {
	if len(curves) == 0 || len(curves[0].Points) == 0 {
		return
	}
	top := 0.0
	for _, s := range curves {
		for _, pt := range s.Points {
			top = max(top, pt.X)
		}
	}
	c := chart{
		Title:  "Percentile distribution: " + label,
		Desc:   "Latency in milliseconds at each percentile, the percentile axis on a log scale of 1/(1-percentile) (HdrHistogram's percentile distribution): the tail is spread out to the right.",
		XLabel: "percentile (log scale)", YLabel: "latency (ms)",
		XTicks: percentileTicks(top), Series: curves,
	}
	cols := []string{"percentile"}
	for _, s := range curves {
		cols = append(cols, s.Name+" ms")
	}
	p.figure(&c, cols, func(row func(...string)) {
		for i, pt := range curves[0].Points {
			cells := []string{pt.Label}
			for _, s := range curves {
				if i < len(s.Points) {
					cells = append(cells, strconv.FormatFloat(s.Points[i].Y, 'f', 2, 64))
				} else {
					cells = append(cells, "")
				}
			}
			row(cells...)
		}
	})
}

// hol renders the head-of-line scenario.
func (p *page) hol(h *HOL) {
	p.printf("<section>\n<h2>%s: %s behind %s</h2>\n", esc(p.scenario), esc(shorten(h.Alone.DocumentPath)), esc(shorten(h.Load.DocumentPath)))
	p.printf("<p>A probe sends %s at %.0f req/s on one connection (open loop, corrected), first alone, then while %d closed-loop clients load %s.</p>\n",
		esc(shorten(h.Alone.DocumentPath)), h.ProbeRate, h.Load.ConcurrencyLevel, esc(shorten(h.Load.DocumentPath)))
	p.printf("<table>\n<caption>The probe alone and under load, with the load's own figures</caption>\n<thead><tr>")
	for _, c := range []string{"run", "responses", "req/s", "p50 ms", "p99 ms", "max ms", "failed", "non-2xx, by status"} {
		p.printf("<th scope=\"col\">%s</th>", c)
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for _, r := range []namedResult{{"probe alone", h.Alone}, {"probe under load", h.UnderLoad},
		{fmt.Sprintf("load (%d clients)", h.Load.ConcurrencyLevel), h.Load}} {
		p99 := formatMSDecimals(percentileOf(r.Result, 99))
		if r.Result.CompleteRequests < 100 {
			p99 = fmt.Sprintf("n/a (%d responses)", r.Result.CompleteRequests)
		}
		p.printf("<tr><td>%s</td><td>%d</td><td>%.2f</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", esc(r.Label),
			r.Result.CompleteRequests, r.Result.RequestsPerSecond(), formatMSDecimals(percentileOf(r.Result, 50)),
			p99, formatMSDecimals(longestOf(r.Result)), r.Result.FailedRequests, esc(p.non2xxByStatus(r.Result)))
	}
	p.printf("</tbody>\n</table>\n")
	p.percentileChart("the probe, alone and under load", []series{
		{Name: "probe alone", Points: curvePoints(h.Alone.Distribution, h.Alone.CompleteRequests)},
		{Name: "probe under load", Points: curvePoints(h.UnderLoad.Distribution, h.UnderLoad.CompleteRequests)},
	})
	p.timeline("the probe under load", h.UnderLoad)
	p.timeline("the load", h.Load)
	p.loop(h.Load.Loop, h.Load.ServerCPUPerRequest())
	p.printf("</section>\n")
}

// sweep renders a sweep's throughput-latency curve with the knee marked.
func (p *page) sweep(s *Sweep) {
	if len(s.Steps) == 0 {
		return
	}
	path := shorten(s.Steps[0].Result.DocumentPath)
	p.printf("<section>\n<h2>Concurrency sweep: %s</h2>\n", esc(path))
	var p50, p99 []point
	for _, st := range s.Steps {
		x := st.Result.RequestsPerSecond()
		lbl := fmt.Sprintf("c=%d", st.Concurrency)
		p50 = append(p50, point{X: x, Y: ms(percentileOf(st.Result, 50)), Label: lbl})
		p99 = append(p99, point{X: x, Y: ms(percentileOf(st.Result, 99)), Label: lbl})
	}
	c := chart{
		Title:  "Throughput and latency: " + path,
		Desc:   "Each point is one concurrency of the sweep: requests per second across, p50 and p99 latency up. The curve bends up at the knee, where more concurrency adds queueing, not throughput.",
		XLabel: "throughput (requests per second)", YLabel: "latency (ms)", XFromZero: true,
		Series: []series{{Name: "p50", Points: p50, Labels: true}, {Name: "p99", Points: p99, Labels: true}},
	}
	knee := "none"
	if s.Knee >= 0 {
		k := s.Steps[s.Knee]
		knee = fmt.Sprintf("at concurrency %d", k.Concurrency)
		c.Marks = []point{{X: k.Result.RequestsPerSecond(), Y: ms(percentileOf(k.Result, 99)), Label: fmt.Sprintf("knee (c=%d)", k.Concurrency)}}
	}
	c.Desc += " Knee: " + knee + "."
	p.openFigure(&c, []string{"concurrency", "req/s", "mean ms", "p50 ms", "p99 ms", "errors", "rate × mean", "Little's law", "knee"}, func(row func(...string)) {
		for i, st := range s.Steps {
			check, mark := "ok", ""
			if !st.LittleHolds() {
				check = "off"
			}
			if i == s.Knee {
				mark = "knee"
			}
			r := st.Result
			row(fmt.Sprint(st.Concurrency), fmt.Sprintf("%.2f", r.RequestsPerSecond()), formatMSDecimals(r.Total.Mean),
				formatMSDecimals(percentileOf(r, 50)), formatMSDecimals(percentileOf(r, 99)), fmt.Sprint(errorCount(r)),
				fmt.Sprintf("%.2f", st.Little()), check, mark)
		}
	})
	for _, st := range s.Steps {
		if st.Result.Loop != nil {
			p.printf("<h3>Server loop at concurrency %d</h3>\n", st.Concurrency)
			p.loop(st.Result.Loop, st.Result.ServerCPUPerRequest())
		}
	}
	p.printf("<p>Knee: %s (the last concurrency before a step that adds less than %.0f%% throughput while p99 grows more than %.0f%%). Little's law: throughput × mean latency = the concurrency, less the requests in flight at the end (c × (1 − mean / 2 × time)), within %.0f%%.</p>\n",
		knee, 100*KneeRateGrowth, 100*KneeP99Growth, 100*littleTolerance)
	p.printf("</section>\n")
}

// figure writes a chart and its data table, folded.
func (p *page) figure(c *chart, cols []string, rows func(row func(...string))) {
	p.chartWithTable(c, cols, rows, "")
}

// openFigure writes a chart and its data table, unfolded (a sweep's table
// is its main one).
func (p *page) openFigure(c *chart, cols []string, rows func(row func(...string))) {
	p.chartWithTable(c, cols, rows, " open")
}

func (p *page) chartWithTable(c *chart, cols []string, rows func(row func(...string)), open string) {
	p.charts++
	id := fmt.Sprintf("chart%d", p.charts)
	p.printf("<figure>\n%s<figcaption>%s</figcaption>\n</figure>\n", c.svg(id), esc(c.Desc))
	p.printf("<details%s><summary>Data of the chart: %s</summary>\n<table>\n<caption>%s</caption>\n<thead><tr>", open, esc(c.Title), esc(c.Title))
	for _, col := range cols {
		p.printf("<th scope=\"col\">%s</th>", esc(col))
	}
	p.printf("</tr></thead>\n<tbody>\n")
	rows(func(cells ...string) {
		p.printf("<tr>")
		for _, cell := range cells {
			p.printf("<td>%s</td>", esc(cell))
		}
		p.printf("</tr>\n")
	})
	p.printf("</tbody>\n</table>\n</details>\n")
}

// point is a chart's data point; Label names it in tables and, for
// labelled series, on the chart.
type point struct {
	X, Y  float64
	Label string
}

// series is one line of a chart.
type series struct {
	Name   string
	Points []point
	Labels bool // write each point's Label beside it
}

// tick is an axis tick at a data value.
type tick struct {
	At    float64
	Label string
}

// chart is a line chart in inline SVG.
type chart struct {
	Title, Desc    string
	XLabel, YLabel string
	XTicks         []tick // nil: chosen from the data
	XFromZero      bool   // the x axis starts at 0 (throughput)
	Series         []series
	Marks          []point // highlighted points (the knee)
	Unit           string  // of y, in the points' tooltips; "" means ms
}

// Chart geometry in SVG user units.
const (
	chartW, chartH                       = 720, 340
	marginL, marginR, marginT, marginB   = 64, 24, 36, 52
	plotW, plotH                         = chartW - marginL - marginR, chartH - marginT - marginB
	legendRowH                           = 16
	axisColor, gridColor, textColor      = "#333", "#ddd", "#1a1a1a"
	chartFont                            = "font-family=\"system-ui,sans-serif\" font-size=\"12\""
	markColor                            = "#a00000"
	seriesCount                          = 4
	defaultTickCount                     = 6
	labelOffset                          = 6
	pointRadius, markRadius              = 3, 7
	strokeWidth                          = 2
	legendX, legendSwatch, legendSpacing = marginL + 8, 24, 6
)

// seriesStyles are colours (dark enough on white, Okabe-Ito) and dash
// patterns, so that lines differ without colour too.
var seriesStyles = [seriesCount]struct{ color, dash string }{
	{"#0060a8", ""}, {"#c14a00", "6 3"}, {"#007a5a", "2 3"}, {"#6a3d9a", "10 3 2 3"},
}

// svg renders the chart with the given element id.
func (c *chart) svg(id string) string {
	var b strings.Builder
	sc := c.scale()
	c.writeFrame(&b, id, sc)
	for i, s := range c.Series {
		c.writeSeries(&b, i, s, sc)
	}
	for _, m := range c.Marks {
		fmt.Fprintf(&b, "<g><title>%s</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"%d\"/>\n",
			esc(m.Label), sc.x(m.X), sc.y(m.Y), markRadius, markColor, strokeWidth)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-weight=\"700\">%s</text></g>\n", sc.x(m.X)+markRadius+2, sc.y(m.Y)+markRadius+12, markColor, esc(m.Label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// plotScale maps a chart's values to the plot's pixels.
type plotScale struct {
	xmin, xmax, ytop float64
	xticks, yticks   []tick
}

func (sc plotScale) x(v float64) float64 { return marginL + (v-sc.xmin)/(sc.xmax-sc.xmin)*plotW }
func (sc plotScale) y(v float64) float64 { return marginT + plotH - v/sc.ytop*plotH }

// scale fits the axes to the series, the ticks and the marks' axis.
func (c *chart) scale() plotScale {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for _, pt := range s.Points {
			xmin, xmax, ymax = min(xmin, pt.X), max(xmax, pt.X), max(ymax, pt.Y)
		}
	}
	for _, t := range c.XTicks {
		xmin, xmax = min(xmin, t.At), max(xmax, t.At)
	}
	if c.XFromZero {
		xmin = min(xmin, 0)
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	sc := plotScale{yticks: niceTicks(0, ymax), xticks: c.XTicks}
	sc.ytop = sc.yticks[len(sc.yticks)-1].At
	if sc.xticks == nil {
		sc.xticks = niceTicks(xmin, xmax)
		xmin, xmax = min(xmin, sc.xticks[0].At), max(xmax, sc.xticks[len(sc.xticks)-1].At)
	}
	sc.xmin, sc.xmax = xmin, xmax
	return sc
}

// writeFrame writes the chart's opening, title, grid, ticks and axes.
func (c *chart) writeFrame(b *strings.Builder, id string, sc plotScale) {
	legendH := legendRowH * len(c.Series)
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"%s-t %s-d\" %s>\n",
		chartW, chartH+legendH, chartW, chartH+legendH, id, id, chartFont)
	fmt.Fprintf(b, "<title id=\"%s-t\">%s</title>\n<desc id=\"%s-d\">%s</desc>\n", id, esc(c.Title), id, esc(c.Desc))
	fmt.Fprintf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", chartW, chartH+legendH)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"600\" fill=\"%s\">%s</text>\n", marginL, textColor, esc(clip(c.Title, titleChars)))
	for _, t := range sc.yticks {
		y := sc.y(t.At)
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", marginL, y, marginL+plotW, y, gridColor)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\" fill=\"%s\">%s</text>\n", marginL-labelOffset, y, textColor, esc(t.Label))
	}
	for _, t := range sc.xticks {
		x := sc.x(t.At)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, marginT, x, marginT+plotH, gridColor)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", x, marginT+plotH+16, textColor, esc(t.Label))
	}
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>\n", marginL, marginT+plotH, marginL+plotW, marginT+plotH, axisColor)
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>\n", marginL, marginT, marginL, marginT+plotH, axisColor)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", marginL+plotW/2, marginT+plotH+38, textColor, esc(c.XLabel))
	fmt.Fprintf(b, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", marginT+plotH/2, textColor, esc(c.YLabel))
}

// writeSeries writes series i: its line, its points and its legend row.
func (c *chart) writeSeries(b *strings.Builder, i int, s series, sc plotScale) {
	st := seriesStyles[i%seriesCount]
	var pts []string
	for _, pt := range s.Points {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", sc.x(pt.X), sc.y(pt.Y)))
	}
	dash := ""
	if st.dash != "" {
		dash = fmt.Sprintf(" stroke-dasharray=\"%s\"", st.dash)
	}
	fmt.Fprintf(b, "<g><title>%s</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%d\"%s points=\"%s\"/>\n",
		esc(s.Name), st.color, strokeWidth, dash, strings.Join(pts, " "))
	for _, pt := range s.Points {
		fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>%s %s: %.2f %s</title></circle>\n",
			sc.x(pt.X), sc.y(pt.Y), pointRadius, st.color, esc(s.Name), esc(pt.Label), pt.Y, esc(cmp.Or(c.Unit, "ms")))
		if s.Labels && pt.Label != "" {
			fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", sc.x(pt.X)+labelOffset, sc.y(pt.Y)-labelOffset, st.color, esc(pt.Label))
		}
	}
	fmt.Fprintf(b, "</g>\n")
	ly := chartH + legendRowH*i + legendRowH/2
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%d\"%s/>\n",
		legendX, ly, legendX+legendSwatch, ly, st.color, strokeWidth, dash)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" dominant-baseline=\"middle\" fill=\"%s\">%s</text>\n", legendX+legendSwatch+legendSpacing, ly, textColor, esc(s.Name))
}

// titleChars is how many characters of a title fit above a chart; the
// whole title stays in the SVG's <title>.
const titleChars = 80

// clip shortens s to n characters (runes) with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// niceTicks are about defaultTickCount ticks from lo to at least hi at a
// step of 1, 2 or 5 times a power of ten.
func niceTicks(lo, hi float64) []tick {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / defaultTickCount
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []tick
	start := math.Floor(lo/step) * step
	for v := start; ; v += step {
		ticks = append(ticks, tick{v, strconv.FormatFloat(v, 'f', -1, 64)})
		if v >= hi-step*1e-9 {
			break
		}
	}
	// Round away float noise in the labels (0.30000000000000004).
	for i := range ticks {
		ticks[i].Label = strconv.FormatFloat(math.Round(ticks[i].At/step)*step, 'g', 6, 64)
	}
	return ticks
}

// non2xxByStatus is a result's non-2xx responses by status, "403: 12
// (expected), 429: 3", or "0": the statuses the run expects (a login
// storm's refusals, PrintOptions.Expected) are labelled so, and none is
// counted as an error.
func (p *page) non2xxByStatus(r *Result) string {
	codes := make([]int, 0, len(r.StatusCodes))
	for c := range r.StatusCodes {
		if c < 200 || c > 299 {
			codes = append(codes, c)
		}
	}
	if len(codes) == 0 {
		return strconv.FormatInt(r.Non2xx, 10)
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d: %d", c, r.StatusCodes[c])
		if slices.Contains(p.expected, c) {
			parts[i] += " (expected)"
		}
	}
	return strings.Join(parts, ", ")
}
