package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// holDefaultRate is the head-of-line probe's rate when none is given: 100
// requests per second, modest enough that a server idles between probes.
const holDefaultRate = 100

// HOL is the head-of-line blocking scenario's outcome: a probe, one
// connection sending the static URL open-loop at ProbeRate, measured alone
// and then while closed-loop clients load the dynamic URL. On a server that
// runs one handler at a time, every slow dynamic page delays the probe's
// cheap one: the probe's latency under load is the cost one slow page puts
// on every other client.
type HOL struct {
	ProbeRate float64
	// Alone is the probe with nothing else running; UnderLoad is the probe
	// during Load, the dynamic URL's closed-loop run at cfg's concurrency.
	Alone, UnderLoad, Load *Result
}

// RunHOL measures the head-of-line scenario: the probe (staticURL, one
// connection, open loop at probeRate; 0 means 100 requests per second, modest
// enough that a server idles between probes) for
// cfg.TimeLimit alone, then the same probe for cfg.TimeLimit (and its
// requests in flight then, see Config.Rate) while cfg.Concurrency workers
// load dynamicURL, from the probe's start to its end: closed-loop, or open-loop at
// cfg.Rate requests per second when it is above 0 (the same load offered
// whatever the server does with it, so two servers compare fairly). Both
// phases warm up for cfg.Warmup first (the load and the probe together in
// the second). cfg's URL and Requests are ignored; a zero TimeLimit means 5
// seconds. The request options (Method, Headers, Body, ContentType,
// BindAddrs) shape the load's requests only: the probe is a plain GET, as
// ab sends it, from the address the system picks; so the load may be, say,
// POSTs of a login form from many addresses. It stops at the first error.
func RunHOL(ctx context.Context, cfg Config, probeRate float64, staticURL, dynamicURL string) (*HOL, error) {
	if probeRate <= 0 {
		probeRate = holDefaultRate
	}
	if cfg.TimeLimit <= 0 {
		cfg.TimeLimit = 5 * time.Second
	}
	if cfg.RequestLog != nil { // the probe and the load write at once
		cfg.RequestLog = &lockedWriter{w: cfg.RequestLog}
	}
	probe := cfg
	probe.URL, probe.Rate, probe.Concurrency, probe.Requests, probe.step = staticURL, probeRate, 1, 0, "probe alone"
	probe.Method, probe.Headers, probe.Body, probe.ContentType, probe.BindAddrs = "", nil, nil, "", nil
	load := cfg
	// The load runs until the probe under load is done, its drain
	// included, so that the probe never measures a server the load has
	// left.
	load.URL, load.Requests, load.TimeLimit, load.Progress, load.step = dynamicURL, math.MaxInt, 0, nil, "load"

	h := &HOL{ProbeRate: probeRate}
	var err error
	if h.Alone, err = Run(ctx, probe); err != nil {
		return nil, fmt.Errorf("loadtest: hol: probe alone: %w", err)
	}
	// The load starts just before the probe, warms up with it and measures
	// for as long; it is stopped early if the probe fails.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	type outcome struct {
		res *Result
		err error
	}
	loaded := make(chan outcome, 1)
	go func() {
		res, err := Run(loadCtx, load)
		loaded <- outcome{res, err}
	}()
	underLoad := probe
	underLoad.step = "probe under load"
	underLoad.MetricsURL = "" // the load's run scrapes for this phase
	h.UnderLoad, err = Run(ctx, underLoad)
	stopLoad()
	l := <-loaded
	if err != nil {
		return nil, fmt.Errorf("loadtest: hol: probe under load: %w", err)
	}
	if l.err != nil && (ctx.Err() != nil || !errors.Is(l.err, context.Canceled)) {
		return nil, fmt.Errorf("loadtest: hol: load: %w", l.err)
	}
	h.Load = l.res
	return h, nil
}

// The head-of-line scenario as an Output: kind "hol". Thresholds apply
// to the probe under load.

func (h *HOL) kind() string { return "hol" }

// writeText writes the head-of-line table: the probe's requests per
// second, p50, p99 and longest (corrected) time in ms, late sends and
// errors (failed requests plus non-2xx responses), alone and under load,
// with the load's own rate, p50 and p99.
func (h *HOL) writeText(out io.Writer, _ *PrintOptions) error {
	mode := "no keep-alive"
	if h.Alone.KeepAlive {
		mode = "keep-alive"
	}
	fmt.Fprintf(out, "\nHead-of-line blocking: probe %s at %.0f req/s on one connection (open loop, corrected), %s\n",
		shorten(h.Alone.DocumentPath), h.ProbeRate, mode)
	loop := "closed loop"
	if o := h.Load.OpenLoop; o != nil {
		loop = fmt.Sprintf("open loop at %.0f req/s", o.TargetRate)
	}
	fmt.Fprintf(out, "load: %s, concurrency %d, %s, %.1f s\n",
		shorten(h.Load.DocumentPath), h.Load.ConcurrencyLevel, loop, h.Load.TimeTaken.Seconds())
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "run\treq/s\tp50 ms\tp99 ms\tmax ms\tlate\terrors")
	row := func(label string, r *Result, late string) {
		fmt.Fprintf(w, "%s\t%.2f\t%s\t%s\t%s\t%s\t%d\n", label, r.RequestsPerSecond(),
			formatMSDecimals(percentileOf(r, 50)), formatMSDecimals(percentileOf(r, 99)),
			formatMSDecimals(longestOf(r)), late, errorCount(r))
	}
	row("probe alone", h.Alone, fmt.Sprint(h.Alone.OpenLoop.Late))
	row("probe under load", h.UnderLoad, fmt.Sprint(h.UnderLoad.OpenLoop.Late))
	row(fmt.Sprintf("load (%d clients)", h.Load.ConcurrencyLevel), h.Load, "")
	if err := w.Flush(); err != nil {
		return err
	}
	if a50, a99 := percentileOf(h.Alone, 50), percentileOf(h.Alone, 99); a50 > 0 && a99 > 0 {
		fmt.Fprintf(out, "Under load the probe's p50 is %.1fx and its p99 %.1fx what they are alone.\n",
			float64(percentileOf(h.UnderLoad, 50))/float64(a50), float64(percentileOf(h.UnderLoad, 99))/float64(a99))
	}
	if h.Alone.Loop != nil || h.Load.Loop != nil {
		fmt.Fprintf(out, "\nServer loop (from its metrics)\n")
		return writeLoopTable(out, []namedResult{{"probe alone", h.Alone}, {"under load", h.Load}})
	}
	return nil
}

// errorCount is what thresholds and tables call errors: failed requests
// plus non-2xx responses.
func errorCount(r *Result) int64 { return r.FailedRequests + r.Non2xx }

// writeResults writes the scenario as one JSON object: probe_rate and the
// three results.
func (h *HOL) writeResults(w io.Writer) error {
	return writeJSON(w, struct {
		ProbeRate float64    `json:"probe_rate"`
		Alone     jsonResult `json:"probe_alone"`
		UnderLoad jsonResult `json:"probe_under_load"`
		Load      jsonResult `json:"load"`
	}{h.ProbeRate, toJSON(h.Alone), toJSON(h.UnderLoad), toJSON(h.Load)})
}

func (h *HOL) check(ts []Threshold) []ThresholdCheck {
	return checkRuns(ts, []namedResult{{"probe under load", h.UnderLoad}})
}

func (h *HOL) writeHTML(p *page) { p.hol(h) }

func (h *HOL) histograms() []histogram {
	return []histogram{h.Alone.histogram("probe-alone"), h.UnderLoad.histogram("probe-under-load"), h.Load.histogram("load")}
}
