package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"
)

// WriteReport writes res in ab's text layout (ab 2.3, as in Apache httpd
// 2.4): the same lines, labels, units, rounding and column widths, so
// scripts that read ab's output read ours. Two things differ: the
// percentile table has 99.9% and 99.99% rows between 99% and 100%, and the
// medians and percentiles come from a histogram (see Phase).
func WriteReport(out io.Writer, res *Result) error {
	w := bufio.NewWriter(out)
	writeHeader(w, res)
	writeCounts(w, res)
	writeRates(w, res)
	if res.CompleteRequests > 0 {
		writeConnectionTimes(w, res)
		writePercentiles(w, res)
	}
	return w.Flush()
}

func writeHeader(w io.Writer, res *Result) {
	fmt.Fprintf(w, "\n\nServer Software:        %s\n", res.ServerSoftware)
	fmt.Fprintf(w, "Server Hostname:        %s\n", res.ServerHostname)
	fmt.Fprintf(w, "Server Port:            %d\n\n", res.ServerPort)
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
	if len(res.Percentiles) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPercentage of the requests served within a certain time (ms)\n")
	for _, p := range res.Percentiles {
		ms := roundMS(p.Latency)
		switch {
		case p.Percent >= 100:
			fmt.Fprintf(w, " 100%%  %5d (longest request)\n", ms)
		case p.Percent == float64(int(p.Percent)):
			fmt.Fprintf(w, "  %d%%  %5d\n", int(p.Percent), ms)
		default:
			// Our extra rows keep the value column where ab's rows have it.
			label := fmt.Sprintf("%5s", strconv.FormatFloat(p.Percent, 'f', -1, 64)+"%")
			fmt.Fprintf(w, "%-7s%5d\n", label, ms)
		}
	}
}
