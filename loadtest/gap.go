package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Gap is the gap scenario's outcome: a static and a dynamic page measured
// one after the other at the same concurrency, count or duration and
// connection mode.
type Gap struct {
	Static, Dynamic *Result
	// Reference, when set, is another server's published pair of figures
	// the comparison table and the JSON set beside ours.
	Reference *Reference
}

// Ratio is the gap: static requests per second over dynamic ones (0 when
// the dynamic run completed nothing).
func (g *Gap) Ratio() float64 {
	if d := g.Dynamic.RequestsPerSecond(); d > 0 {
		return g.Static.RequestsPerSecond() / d
	}
	return 0
}

// Reference is a published pair of figures the gap table sets ours beside.
type Reference struct {
	Label            string
	Static, Dynamic  ReferenceFigures
	Concurrency      int
	Requests         int
	StaticDocLength  int64
	DynamicDocLength int64
}

// ReferenceFigures are one page's figures from an ab report, times in
// milliseconds as ab printed them.
type ReferenceFigures struct {
	RequestsPerSecond   float64
	Mean, P50, P99, Max float64
	Failed              int64
}

// Ratio is the reference's gap, static over dynamic requests per second.
func (r Reference) Ratio() float64 { return r.Static.RequestsPerSecond / r.Dynamic.RequestsPerSecond }

// RunGap measures staticURL, then dynamicURL, each with cfg (its URL field
// is ignored), each with cfg's warm-up. It stops at the first error.
func RunGap(ctx context.Context, cfg Config, staticURL, dynamicURL string) (*Gap, error) {
	var g Gap
	for _, run := range []struct {
		url, name string
		res       **Result
	}{{staticURL, "static", &g.Static}, {dynamicURL, "dynamic", &g.Dynamic}} {
		c := cfg
		c.URL, c.step = run.url, run.name
		res, err := Run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("loadtest: gap: %s: %w", run.url, err)
		}
		*run.res = res
	}
	return &g, nil
}

// figuresOf reduces a Result to the comparison table's columns: the
// latencies its percentage table reports (corrected under Config.Rate).
func figuresOf(res *Result) ReferenceFigures {
	mean := res.Total.Mean
	if res.OpenLoop != nil {
		mean = res.OpenLoop.Corrected.Mean
	}
	return ReferenceFigures{
		RequestsPerSecond: res.RequestsPerSecond(),
		Mean:              ms(mean),
		P50:               ms(percentileOf(res, 50)),
		P99:               ms(percentileOf(res, 99)),
		Max:               ms(longestOf(res)),
		Failed:            res.FailedRequests,
	}
}

// percentileOf is the latency of res's percentage table row for percent
// (corrected under Config.Rate), or its longest request when there is no
// such row.
func percentileOf(res *Result, percent float64) time.Duration {
	for _, q := range res.Percentiles {
		if q.Percent == percent {
			return q.Latency
		}
	}
	return longestOf(res)
}

// longestOf is res's longest request as its report counts it: from the
// intended send time under Config.Rate, else ab's Total maximum.
func longestOf(res *Result) time.Duration {
	if res.OpenLoop != nil {
		return res.OpenLoop.Corrected.Max
	}
	return res.Total.Max
}

// writeComparison writes the gap table: for ours and for the reference,
// each page's requests per second, mean, median, 99th percentile and
// longest Total time in milliseconds, failed requests, and the gap on the
// dynamic row.
func (g *Gap) writeComparison(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	mode := "no keep-alive"
	if g.Static.KeepAlive {
		mode = "keep-alive"
	}
	fmt.Fprintf(out, "\nGap: static vs dynamic, concurrency %d, %s, %d + %d requests in %.1f s + %.1f s\n",
		g.Static.ConcurrencyLevel, mode, g.Static.CompleteRequests, g.Dynamic.CompleteRequests,
		g.Static.TimeTaken.Seconds(), g.Dynamic.TimeTaken.Seconds())
	fmt.Fprintln(w, "run\tpage\treq/s\tmean ms\tp50 ms\tp99 ms\tmax ms\tfailed\tgap")
	writeRow(w, "this server", "static "+shorten(g.Static.DocumentPath), figuresOf(g.Static), "")
	writeRow(w, "", "dynamic "+shorten(g.Dynamic.DocumentPath), figuresOf(g.Dynamic), fmt.Sprintf("%.2fx", g.Ratio()))
	if ref := g.Reference; ref != nil {
		writeRow(w, ref.Label, "static", ref.Static, "")
		writeRow(w, "", "dynamic", ref.Dynamic, fmt.Sprintf("%.2fx", ref.Ratio()))
	}
	return w.Flush()
}

func writeRow(w io.Writer, run, page string, f ReferenceFigures, gap string) {
	fmt.Fprintf(w, "%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%s\n",
		run, page, f.RequestsPerSecond, f.Mean, f.P50, f.P99, f.Max, f.Failed, gap)
}

// shorten keeps a long path (a session id in the query) readable in the
// table.
func shorten(path string) string {
	if len(path) > 32 {
		return path[:29] + "..."
	}
	return path
}

// jsonReference is a Reference in the gap's JSON.
type jsonReference struct {
	Label       string  `json:"label"`
	StaticRPS   float64 `json:"static_requests_per_second"`
	DynamicRPS  float64 `json:"dynamic_requests_per_second"`
	Gap         float64 `json:"gap"`
	Concurrency int     `json:"concurrency_level"`
	Requests    int     `json:"requests"`
}

// The gap as an Output: kind "gap".

func (g *Gap) kind() string { return "gap" }

// writeText writes both pages' ab reports, then the comparison table;
// brief, the table and the server loop's figures only.
func (g *Gap) writeText(w io.Writer, o *PrintOptions) error {
	if !o.Brief {
		return errors.Join(writeReport(w, g.Static), writeReport(w, g.Dynamic), g.writeComparison(w))
	}
	err := g.writeComparison(w)
	if g.Static.Loop != nil || g.Dynamic.Loop != nil {
		fmt.Fprintf(w, "Server loop (from its metrics)\n")
		err = errors.Join(err, writeLoopTable(w, g.runs()))
	}
	return err
}

// runs are the two pages under the labels reports and thresholds give
// them.
func (g *Gap) runs() []namedResult {
	return []namedResult{{"static " + g.Static.DocumentPath, g.Static}, {"dynamic " + g.Dynamic.DocumentPath, g.Dynamic}}
}

// writeResults writes both results, the gap and the reference, if any, as
// one JSON object.
func (g *Gap) writeResults(w io.Writer) error {
	j := struct {
		Static    jsonResult     `json:"static"`
		Dynamic   jsonResult     `json:"dynamic"`
		Gap       float64        `json:"gap"`
		Reference *jsonReference `json:"reference,omitempty"`
	}{Static: toJSON(g.Static), Dynamic: toJSON(g.Dynamic), Gap: g.Ratio()}
	if ref := g.Reference; ref != nil {
		j.Reference = &jsonReference{ref.Label, ref.Static.RequestsPerSecond, ref.Dynamic.RequestsPerSecond, ref.Ratio(),
			ref.Concurrency, ref.Requests}
	}
	return writeJSON(w, j)
}

func (g *Gap) check(ts []Threshold) []ThresholdCheck { return checkRuns(ts, g.runs()) }

func (g *Gap) writeHTML(p *page) {
	for _, r := range g.runs() {
		p.run(r.Label, r.Result)
	}
}

func (g *Gap) histograms() []histogram {
	return []histogram{g.Static.histogram("static"), g.Dynamic.histogram("dynamic")}
}

// GapDefaultWarmup is the warm-up the gap scenario uses when none is given.
const GapDefaultWarmup = time.Second
