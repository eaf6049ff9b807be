// Package loadtest is an ApacheBench-compatible closed-loop HTTP load
// generator: Concurrency workers, each with its own TCP connection, each
// sending its next request as soon as the previous response has been read,
// until Requests are done or TimeLimit is up (ab's model and flags, see
// Config).
//
// Run measures one URL and returns a Result: ab's figures under ab's names,
// with ab's definitions (Apache httpd support/ab.c, ab 2.3). WriteReport
// prints it in ab's layout, WriteJSON as JSON. RunGap measures a static and a
// dynamic URL at the same settings and WriteComparison sets them beside a
// Reference, by default StateSecrets2002.
//
// Latencies go into per-worker HdrHistograms (microseconds, three
// significant digits) and running sums, so memory does not grow with the
// number of requests. Means and standard deviations are exact; medians and
// percentiles use ab's index rules on the histogram, so they are within 0.1%
// of ab's exact values. The differences are listed on Phase and in
// README.md.
//
// The client is lean on purpose so that it is not the bottleneck: requests
// are prepared once, responses are parsed without allocating (RFC 9112
// framing: Content-Length, chunked, close-delimited, HEAD, 1xx, 204, 304),
// and on Unix each small response costs one write and one read system call.
// It imports nothing of the server it measures.
package loadtest
