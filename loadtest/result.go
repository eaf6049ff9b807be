package loadtest

import "time"

// Result holds a run's figures, named as ab's report names them. Rendering
// (WriteReport, WriteJSON) only reads it.
type Result struct {
	ServerSoftware string // the Server field of the first response
	ServerHostname string // the URL's host
	ServerPort     int    // the URL's port
	DocumentPath   string // path and query, as sent

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

	// Percentiles of Total, ab's nine plus 99.9% and 99.99%.
	Percentiles []Percentile
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
