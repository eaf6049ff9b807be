package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// A single run as an Output: kind "run", ab's form.

func (r *Result) kind() string { return "run" }

func (r *Result) writeText(w io.Writer, _ *PrintOptions) error { return writeReport(w, r) }

// writeResults writes r as one indented JSON object: ab's figures with
// snake_case names, times in milliseconds (float), rates as ab computes
// them.
func (r *Result) writeResults(w io.Writer) error { return writeJSON(w, toJSON(r)) }

func (r *Result) check(ts []Threshold) []ThresholdCheck {
	return checkRuns(ts, []namedResult{{r.DocumentPath, r}})
}

func (r *Result) writeHTML(p *page) { p.run(r.DocumentPath, r) }

func (r *Result) histograms() []histogram { return []histogram{r.histogram("")} }

// writeReport writes res in ab's text layout (ab 2.3, as in Apache httpd
// 2.4): the same lines, labels, units, rounding and column widths, so
// scripts that read ab's output read ours. Two things differ: the
// percentile table has 99.9% and 99.99% rows between 99% and 100%, and the
// medians and percentiles come from a histogram (see Phase).
func writeReport(out io.Writer, res *Result) error {
	w := bufio.NewWriter(out)
	writeHeader(w, res)
	writeCounts(w, res)
	writeRates(w, res)
	if res.CompleteRequests > 0 {
		writeConnectionTimes(w, res)
		writePercentiles(w, res)
	}
	if res.Loop != nil {
		fmt.Fprintf(w, "\nServer loop during the run (from its metrics)\n")
		if err := writeLoopTable(w, []namedResult{{Label: res.DocumentPath, Result: res}}); err != nil {
			return err
		}
	}
	return w.Flush()
}

// writeLoopTable writes the server loop's figures (Result.Loop) of each run
// that has them, one row each: utilization, loop lag p99 and max, longest
// turn in ms, slow requests, the worker pool's time, and the server's CPU
// per request in microseconds; or why the metrics could not be read. A
// figure read from a histogram is marked so: "~" an interpolated estimate,
// "<=" an upper bound; the others are measurements.
func writeLoopTable(out io.Writer, runs []namedResult) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "run\tloop busy\tlag p99 ms\tlag max ms\tlongest turn ms\tslow requests\tworker pool ms\tserver CPU/request")
	for _, r := range runs {
		l := r.Result.Loop
		switch {
		case l == nil:
			continue
		case l.Error != "":
			fmt.Fprintf(w, "%s\tmetrics not read: %s\t\t\t\t\t\t\n", r.Label, l.Error)
		default:
			fmt.Fprintf(w, "%s\t%.1f%%\t~%s\t%s\t%s\t%d\t%s\t%s\n", r.Label, 100*l.Utilization, formatMSDecimals(l.LagP99),
				boundMS(l.LagMax, l.LagMaxBound), boundMS(l.LongestTurn, l.LongestTurnBound), l.SlowRequests,
				formatMSDecimals(l.WorkTime), formatCPU(r.Result.ServerCPUPerRequest(), l.CPU))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, "(~ interpolated within a histogram bucket; <= a bucket's upper bound, the run's figure not being known exactly)")
	return err
}

// boundMS is a latency in ms with two decimals, "<= " before it when it is
// only an upper bound.
func boundMS(d time.Duration, bound bool) string {
	if bound {
		return "<= " + formatMSDecimals(d)
	}
	return formatMSDecimals(d)
}

// formatCPU is a CPU time per request in microseconds with one decimal
// ("45.2 us"), from 1 ms up in milliseconds with two ("9.80 ms"); "-" when
// the server did not say (cpu, its whole CPU time, is 0) or the requests
// are not known (perRequest 0): unknown, never "0.0 us".
func formatCPU(perRequest, cpu time.Duration) string {
	if cpu <= 0 || perRequest <= 0 {
		return "-"
	}
	us := float64(perRequest) / float64(time.Microsecond)
	if us >= 1000 {
		return strconv.FormatFloat(us/1000, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(us, 'f', 1, 64) + " us"
}

func writeHeader(w io.Writer, res *Result) {
	fmt.Fprintf(w, "\n\nServer Software:        %s\n", res.ServerSoftware)
	fmt.Fprintf(w, "Server Hostname:        %s\n", res.ServerHostname)
	fmt.Fprintf(w, "Server Port:            %d\n", res.ServerPort)
	if res.TLSProtocol != "" {
		fmt.Fprintf(w, "SSL/TLS Protocol:       %s\n", res.TLSProtocol)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Document Path:          %s\n", res.DocumentPath)
	if res.VariableLength {
		fmt.Fprintf(w, "Document Length:        Variable\n\n")
	} else {
		fmt.Fprintf(w, "Document Length:        %d bytes\n\n", res.DocumentLength)
	}
	fmt.Fprintf(w, "Concurrency Level:      %d\n", res.ConcurrencyLevel)
	fmt.Fprintf(w, "Time taken for tests:   %.3f seconds\n", res.TimeTaken.Seconds())
}

func writeCounts(w io.Writer, res *Result) {
	fmt.Fprintf(w, "Complete requests:      %d\n", res.CompleteRequests)
	fmt.Fprintf(w, "Failed requests:        %d\n", res.FailedRequests)
	if f := res.Failures; res.FailedRequests > 0 {
		fmt.Fprintf(w, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			f.Connect, f.Receive, f.Length, f.Exceptions)
	}
	if res.Non2xx > 0 {
		fmt.Fprintf(w, "Non-2xx responses:      %d\n", res.Non2xx)
	}
	if res.KeepAlive {
		fmt.Fprintf(w, "Keep-Alive requests:    %d\n", res.KeepAliveRequests)
	}
	fmt.Fprintf(w, "Total transferred:      %d bytes\n", res.TotalTransferred)
	if res.TotalBodySent > 0 {
		fmt.Fprintf(w, "Total body sent:        %d\n", res.TotalBodySent)
	}
	fmt.Fprintf(w, "HTML transferred:       %d bytes\n", res.HTMLTransferred)
}

func writeRates(w io.Writer, res *Result) {
	if res.TimeTaken <= 0 || res.CompleteRequests == 0 {
		return
	}
	fmt.Fprintf(w, "Requests per second:    %.2f [#/sec] (mean)\n", res.RequestsPerSecond())
	fmt.Fprintf(w, "Time per request:       %.3f [ms] (mean)\n", res.TimePerRequest())
	fmt.Fprintf(w, "Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", res.TimePerRequestAcross())
	fmt.Fprintf(w, "Transfer rate:          %.2f [Kbytes/sec] received\n", res.TransferRate())
	if res.TotalBodySent > 0 {
		secs := res.TimeTaken.Seconds()
		fmt.Fprintf(w, "                        %.2f kb/s sent\n", float64(res.TotalBodySent)/1024/secs)
		fmt.Fprintf(w, "                        %.2f kb/s total\n", float64(res.TotalTransferred+res.TotalBodySent)/1024/secs)
	}
}

// abRow is one Connection Times row in whole milliseconds (sd in ms), as
// ab prints it.
type abRow struct {
	min, mean, median, max int64
	sd                     float64
}

// toABRow rounds p as ab does: means are whole microseconds (integer
// division), then every figure but sd goes to the nearest millisecond
// (ap_round_ms: (us + 500) / 1000).
func toABRow(p Phase) abRow {
	return abRow{
		min:    roundMS(p.Min),
		mean:   roundMS(p.Mean),
		median: roundMS(p.Median),
		max:    roundMS(p.Max),
		sd:     float64(p.SD) / float64(time.Millisecond),
	}
}

// roundMS is ab's ap_round_ms on a duration truncated to microseconds.
func roundMS(d time.Duration) int64 { return (d.Microseconds() + 500) / 1000 }

func writeConnectionTimes(w io.Writer, res *Result) {
	rows := []struct {
		label, what string
		p           Phase
	}{
		{"Connect:    ", "the initial connection time", res.Connect},
		{"Processing: ", "the processing time", res.Processing},
		{"Waiting:    ", "the waiting time", res.Waiting},
		{"Total:      ", "the total time", res.Total},
	}
	fmt.Fprintf(w, "\nConnection Times (ms)\n")
	fmt.Fprintf(w, "              min  mean[+/-sd] median   max\n")
	for _, r := range rows {
		a := toABRow(r.p)
		fmt.Fprintf(w, "%s%5d %4d %5.1f %6d %7d\n", r.label, a.min, a.mean, a.sd, a.median, a.max)
	}
	for _, r := range rows {
		writeSanity(w, r.what, toABRow(r.p))
	}
}

// writeSanity prints ab's warning when a row's mean and median are more
// than one (or two) standard deviations apart.
func writeSanity(w io.Writer, what string, a abRow) {
	d := float64(a.mean - a.median)
	if d < 0 {
		d = -d
	}
	switch {
	case d > 2*a.sd:
		fmt.Fprintf(w, "ERROR: The median and mean for %s are more than twice the standard\n"+
			"       deviation apart. These results are NOT reliable.\n", what)
	case d > a.sd:
		fmt.Fprintf(w, "WARNING: The median and mean for %s are not within a normal deviation\n"+
			"        These results are probably not that reliable.\n", what)
	}
}

func writePercentiles(w io.Writer, res *Result) {
	if len(res.Percentiles) == 0 { // fewer than two requests: ab prints no table
		if res.OpenLoop != nil {
			writeOpenLoop(w, res) // but the schedule's figures (what was never sent) still count
		}
		return
	}
	if res.OpenLoop != nil {
		writeOpenPercentiles(w, res)
		return
	}
	fmt.Fprintf(w, "\nPercentage of the requests served within a certain time (ms)\n")
	for _, p := range res.Percentiles {
		v := formatMS(p.Latency)
		switch {
		case p.Percent >= 100:
			fmt.Fprintf(w, " 100%%  %5s (longest request)\n", v)
		case p.Percent == float64(int(p.Percent)):
			fmt.Fprintf(w, "  %d%%  %5s\n", int(p.Percent), v)
		default:
			// Our extra rows keep the value column where ab's rows have it.
			fmt.Fprintf(w, "%-7s%5s\n", percentLabel(p.Percent), v)
		}
	}
}

// percentLabel is a percentile row's label, right-aligned in five columns
// as ab's "  50%": "99.9%", "99.99%".
func percentLabel(percent float64) string {
	return fmt.Sprintf("%5s", strconv.FormatFloat(percent, 'f', -1, 64)+"%")
}

// formatMS prints a latency in milliseconds as ab's percentile table does
// (rounded to a whole millisecond) from 1 ms up, and below 1 ms with two
// decimals where ab would print 0 or 1: the histogram holds microseconds.
func formatMS(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatFloat(ms(d), 'f', 2, 64)
	}
	return strconv.FormatInt(roundMS(d), 10)
}

// writeOpenPercentiles prints an open-loop run's percentile table: the
// corrected latency in ab's column and the uncorrected beside it, then
// the schedule's figures.
func writeOpenPercentiles(w io.Writer, res *Result) {
	o := res.OpenLoop
	fmt.Fprintf(w, "\nPercentage of the requests served within a certain time (ms),\n"+
		"corrected for coordinated omission (-rate: from each request's intended send time, as wrk2;\n"+
		"uncorrected: from its actual send, as ab and wrk count it)\n")
	fmt.Fprintf(w, "       corrected  uncorrected\n")
	for i, p := range res.Percentiles {
		label, tail := percentLabel(p.Percent), ""
		if p.Percent >= 100 {
			label, tail = " 100%", " (longest request)"
		}
		var unc string
		if i < len(o.Uncorrected) {
			unc = formatMS(o.Uncorrected[i].Latency)
		}
		fmt.Fprintf(w, "%-7s%9s  %11s%s\n", label, formatMS(p.Latency), unc, tail)
	}
	writeOpenLoop(w, res)
}

// writeOpenLoop prints the schedule's figures: target and achieved rates,
// the late sends, and a warning when the achieved rate fell short.
func writeOpenLoop(w io.Writer, res *Result) {
	o := res.OpenLoop
	fmt.Fprintf(w, "\nOpen loop (wrk2's model)\n")
	fmt.Fprintf(w, "Target rate:            %.2f [#/sec]\n", o.TargetRate)
	fmt.Fprintf(w, "Achieved rate:          %.2f [#/sec] (%.1f%% of the target)\n",
		res.RequestsPerSecond(), 100*res.RequestsPerSecond()/o.TargetRate)
	fmt.Fprintf(w, "Sent late:              %d requests waited for a free connection (more than %s past due;\n"+
		"                        counted in the corrected figures); latest send by %s ms\n",
		o.Late, lateTolerance, formatMSDecimals(o.MaxLateness))
	if o.Unsent > 0 {
		fmt.Fprintf(w, "Never sent:             %d requests due in the time limit found no free connection before its end\n"+
			"                        (the server's backlog; not in the figures above)\n", o.Unsent)
	}
	cl := o.ClientLateness
	fmt.Fprintf(w, "Client lateness (ms):   median %s, p99 %s, max %s (this client's timer and scheduling, not counted)\n",
		formatMSDecimals(cl.Median), formatMSDecimals(o.ClientLatenessP99), formatMSDecimals(cl.Max))
	c := o.Corrected
	fmt.Fprintf(w, "Corrected (ms):         min %s, mean %s, median %s, max %s\n",
		formatMSDecimals(c.Min), formatMSDecimals(c.Mean), formatMSDecimals(c.Median), formatMSDecimals(c.Max))
	if res.FellShort() {
		fmt.Fprintf(w, "WARNING: the achieved rate fell short of the target (%.2f of %.2f [#/sec]): the server\n"+
			"         (or this client) could not keep up; the corrected figures count the wait.\n",
			res.RequestsPerSecond(), o.TargetRate)
	}
}

// formatMSDecimals prints a latency in milliseconds with two decimals.
func formatMSDecimals(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', 2, 64) }
