package loadtest

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Result holds a run's figures, named as ab's report names them. It is an
// Output (kind "run"); rendering only reads it.
type Result struct {
	ServerSoftware string // the Server field of the first response
	ServerHostname string // the URL's host
	ServerPort     int    // the URL's port
	// TLSProtocol is "protocol,cipher" of the first TLS handshake over
	// https ("TLS 1.3,TLS_AES_128_GCM_SHA256"), ab's "SSL/TLS Protocol"
	// line without its key sizes; "" over http.
	TLSProtocol  string
	DocumentPath string // path and query, as sent

	// DocumentLength is the message body length in bytes of the first
	// complete response, as ab's (chunk framing, if any, included).
	DocumentLength int64
	VariableLength bool // -l: lengths were not compared

	ConcurrencyLevel int  // -c
	KeepAlive        bool // -k

	// TimeTaken runs from the start of the first measured request to the
	// end of the last completed one (after any warm-up).
	TimeTaken time.Duration

	// CompleteRequests counts requests that ended with a full response or,
	// as ab counts them, with a receive error, a length mismatch or a
	// malformed response; failed connects are retried and not counted.
	CompleteRequests int64
	// FailedRequests is the sum of Failures' counts.
	FailedRequests int64
	Failures       Failures
	// Non2xx counts complete responses whose status is not 2xx; they are
	// not failures, as in ab.
	Non2xx int64
	// StatusCodes counts the complete responses by status code, every
	// status (200: 988, 403: 12); nil when there were none.
	StatusCodes map[int]int64
	// KeepAliveRequests counts responses after which the server kept the
	// connection open (with -k only).
	KeepAliveRequests int64

	// TotalTransferred is every byte read from the server: status lines,
	// header fields and bodies.
	TotalTransferred int64
	// TotalBodySent is request body bytes sent (-p), 0 without a body.
	TotalBodySent int64
	// HTMLTransferred is the message body bytes read, as ab's.
	HTMLTransferred int64

	// Connection Times, as ab's: Connect from the start of a request to
	// the connection being established (0 on a reused connection);
	// Processing from then to the response's end; Waiting from the
	// request's last byte written to the response's first byte read; Total
	// from the start to the end.
	Connect, Processing, Waiting, Total Phase

	// Percentiles are ab's nine rows plus 99.9% and 99.99%: of Total in a
	// closed-loop run; under Config.Rate, of the latency corrected for
	// coordinated omission (OpenLoop.Corrected), Total's being in
	// OpenLoop.Uncorrected.
	Percentiles []Percentile

	// Distribution is HdrHistogram's percentile distribution (five ticks
	// per half distance, as its PercentilesPrint, wrk2's and hdrplot's
	// input) of the latency the Percentiles read. Nil for fewer than two
	// requests.
	Distribution []Percentile

	// OpenLoop holds the open-loop figures under Config.Rate; nil in a
	// closed-loop run.
	OpenLoop *OpenLoop

	// Timeline has one entry per second of the run, by when responses
	// ended, when Config.Timeline was set; nil otherwise.
	Timeline []Second

	// Loop is the server's own view of its event loop during the run,
	// scraped from its metrics endpoint; nil when none was given.
	Loop *LoopFigures

	// hist is the histogram the Percentiles read, in microseconds;
	// intervals are the Timeline's seconds' histograms of it, stamped.
	hist      *hdrhistogram.Histogram
	intervals []*hdrhistogram.Histogram
}

// OpenLoop is what an open-loop run (Config.Rate) measures beyond ab's
// figures, in wrk2's model: each request's latency is counted from the time
// the schedule said to send it (corrected for coordinated omission), and
// also, as ab and wrk count it, from when it was actually sent.
//
// How late a request was sent is split in two. The part the server caused,
// waiting because every connection was busy with earlier requests, is
// counted in Corrected, as wrk2 counts it: a user would have waited it. The
// client's own delay, its timer waking late or its goroutine waiting for a
// core on a busy machine, is measured apart in ClientLateness and not
// counted: otherwise a healthy server's p50 would be this client's timer.
type OpenLoop struct {
	// TargetRate is Config.Rate, requests per second.
	TargetRate float64
	// Corrected is the latency from each request's intended send time to
	// the end of its response, less the client's own lateness, as a
	// Connection Times row.
	Corrected Phase
	// Uncorrected are the percentile rows of Total (from the actual send),
	// and UncorrectedDistribution its percentile distribution, to set
	// beside the corrected ones.
	Uncorrected             []Percentile
	UncorrectedDistribution []Percentile
	// Late counts requests that waited for a free connection more than
	// 1 ms (lateTolerance) past their due time (every connection was busy):
	// the server could not keep up. MaxLateness is the largest delay of a
	// send, late or not, whatever its cause.
	Late        int64
	MaxLateness time.Duration
	// Unsent counts requests due before the time limit that were never
	// sent, every connection being busy until the end: the backlog the
	// server left. They are not in Corrected; each would have waited at
	// least from its due time to the end of the run.
	Unsent int64
	// ClientLateness is, over every request, how long after it was due and
	// a connection was free the client actually sent it (its timer and
	// scheduling; whole microseconds), ClientLatenessP99 its 99th
	// percentile. It is not in Corrected.
	ClientLateness    Phase
	ClientLatenessP99 time.Duration
}

// lateTolerance is how far after its intended time a request may be sent
// before it counts as late: timer wake-ups are not exact.
const lateTolerance = time.Millisecond

// shortfallTolerance is how far below the target rate the achieved rate
// may fall before the report says it fell short: 5%.
const shortfallTolerance = 0.05

// FellShort reports whether res, an open-loop run, completed fewer
// requests per second than 5% below its target: the server
// (or the client) could not keep up. False for a closed-loop run.
func (res *Result) FellShort() bool {
	return res.OpenLoop != nil && res.RequestsPerSecond() < res.OpenLoop.TargetRate*(1-shortfallTolerance)
}

// Second is one second of a run: the requests whose responses ended in it
// and their latency percentiles (corrected under Config.Rate, with the
// uncorrected ones beside; else Total's). At is the second's start from
// the start of the run.
type Second struct {
	At            time.Duration
	Requests      int64
	P50, P99, Max time.Duration
	// The uncorrected figures, under Config.Rate only (else 0).
	UncorrectedP50, UncorrectedP99, UncorrectedMax time.Duration
}

// LoopFigures are the server's view of its event loop over one run,
// computed from its metrics endpoint (Config.MetricsURL) scraped just before
// and just after the measured run (the metrics loadtest/README.md lists). A figure whose metric the server does not export stays zero.
type LoopFigures struct {
	// Utilization is the fraction of the run the loop spent working (0 to
	// 1): the increase of the loop's busy seconds over the time between the
	// scrapes.
	Utilization float64
	// LagP99 is the 99th percentile of the loop lag recorded during the run
	// (gameserver_loop_lag_seconds's increase, interpolated within its bucket as
	// Prometheus's histogram_quantile: an estimate).
	LagP99 time.Duration
	// LagMax is the run's largest loop lag: exact (LagMaxBound false) when
	// the run raised gameserver_loop_lag_max_seconds, the server's all-time maximum;
	// otherwise a bound (LagMaxBound true: the lag was at most this), the
	// upper bound of the highest gameserver_loop_lag_seconds bucket that grew, or the
	// all-time maximum if lower.
	LagMax      time.Duration
	LagMaxBound bool
	// LongestTurn is the run's longest loop turn, exact or a bound
	// (LongestTurnBound) in the same way from gameserver_loop_longest_turn_seconds and
	// gameserver_loop_turn_seconds.
	LongestTurn      time.Duration
	LongestTurnBound bool
	// SlowRequests is the increase of gameserver_slow_requests_total during the run.
	SlowRequests int64
	// WorkTime is the increase of gameserver_work_seconds_total during the run: the time
	// the server's worker pool spent on work handed off the loop (0 when
	// the server has no pool or no such metric).
	WorkTime time.Duration
	// CPU is the server process's CPU time, user and system, during the
	// run: the increase of process_cpu_seconds_total (10 ms resolution); 0 when the
	// server does not export it. See Result.ServerCPUPerRequest.
	CPU time.Duration
	// Requests is the increase of gameserver_requests_total during the run:
	// the requests the server answered, every client's (0 when not
	// exported).
	Requests int64
	// Wait is the loop's attribution of its requests' waits during the
	// run (see LoopWait), nil when the server exports none.
	Wait *LoopWait
	// Error, when not empty, says why the endpoint could not be read; the
	// figures are then zero.
	Error string
}

// HasLoop reports whether l holds an event loop's figures: read without
// error from a server that exports them. A server without a loop (the
// net/http engine) exports its CPU and requests but no busy time, lag or
// turns, and its Utilization, LagP99 and LongestTurn are then not
// measured, not zero.
func (l *LoopFigures) HasLoop() bool {
	return l != nil && l.Error == "" && (l.Utilization > 0 || l.LagP99 > 0 || l.LongestTurn > 0)
}

// CPUPerRequest is the server's CPU over the requests it answered (CPU /
// Requests); 0 when either is unknown.
func (l *LoopFigures) CPUPerRequest() time.Duration {
	if l == nil || l.Requests <= 0 {
		return 0
	}
	return l.CPU / time.Duration(l.Requests)
}

// Failures is ab's breakdown of Failed requests.
type Failures struct {
	Connect    int64 // the connection could not be established
	Receive    int64 // read error, reset or EOF before the response ended
	Length     int64 // body length differed from DocumentLength (not with -l)
	Exceptions int64 // malformed response or failed write
}

// Phase is one row of ab's Connection Times table. Min, Median and Max are
// whole microseconds. Mean is exact (sum over count); SD is the exact
// sample standard deviation (n-1), as ab's. Median follows ab's definition
// but reads its values from a histogram (within 0.1%).
type Phase struct {
	Min, Mean, SD, Median, Max time.Duration
}

// Percentile is the latency within which Percent of the requests were
// served (ab's "Percentage of the requests served within a certain time").
type Percentile struct {
	Percent float64
	Latency time.Duration
}

// percentiles are the rows of the percentile table in hundredths of a
// percent: ab's 50 66 75 80 90 95 98 99 100 and our 99.9 and 99.99.
var percentiles = []int64{5000, 6600, 7500, 8000, 9000, 9500, 9800, 9900, 9990, 9999, 10000}

// ServerCPUPerRequest is the server's CPU time per complete request during
// the run (LoopFigures.CPU over CompleteRequests): what a request costs the
// server, a figure a busy machine inflates far less than it swings requests
// per second. 0 without the server's metrics, or when nothing completed.
// It counts every request the server served meanwhile, as its own: for a
// run that shared the server with another (a probe), see
// HOL.ServerCPUPerRequest.
func (r *Result) ServerCPUPerRequest() time.Duration {
	if r.Loop == nil || r.CompleteRequests == 0 {
		return 0
	}
	return r.Loop.CPU / time.Duration(r.CompleteRequests)
}

// RequestsPerSecond is ab's: complete requests over time taken.
func (r *Result) RequestsPerSecond() float64 {
	if r.TimeTaken <= 0 {
		return 0
	}
	return float64(r.CompleteRequests) / r.TimeTaken.Seconds()
}

// TimePerRequest is ab's "Time per request (mean)" in milliseconds:
// concurrency * time taken / complete requests.
func (r *Result) TimePerRequest() float64 {
	if r.CompleteRequests == 0 {
		return 0
	}
	return float64(r.ConcurrencyLevel) * r.TimeTaken.Seconds() * 1000 / float64(r.CompleteRequests)
}

// TimePerRequestAcross is ab's "Time per request (mean, across all
// concurrent requests)" in milliseconds: time taken / complete requests.
func (r *Result) TimePerRequestAcross() float64 {
	if r.CompleteRequests == 0 {
		return 0
	}
	return r.TimeTaken.Seconds() * 1000 / float64(r.CompleteRequests)
}

// TransferRate is ab's in KiB per second received: total transferred /
// 1024 / time taken.
func (r *Result) TransferRate() float64 {
	if r.TimeTaken <= 0 {
		return 0
	}
	return float64(r.TotalTransferred) / 1024 / r.TimeTaken.Seconds()
}
