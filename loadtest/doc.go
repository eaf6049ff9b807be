// Package loadtest is an ApacheBench-compatible HTTP load generator:
// Concurrency workers, each with its own TCP connection, each sending its
// next request as soon as the previous response has been read, until
// Requests are done or TimeLimit is up (ab's closed-loop model and flags,
// see Config); or, with Config.Rate, an open loop on a fixed schedule whose
// latencies are corrected for coordinated omission (wrk2's model, see
// OpenLoop).
//
// Run measures one URL and returns a Result: ab's figures under ab's names,
// with ab's definitions (Apache httpd support/ab.c, ab 2.3). WriteReport
// prints it in ab's layout, WriteJSON as JSON. RunGap measures a static and a
// dynamic URL at the same settings and WriteComparison sets them beside a
// Reference, another server's published figures. RunHOL measures head-of-line
// blocking (a probe alone and while others load a slow page), RunSweep a
// range of concurrencies with the knee and Little's law. WriteHTML renders
// any of them as one self-contained page with inline SVG charts; Threshold
// checks figures for CI; Config.MetricsURL adds the server loop's own
// figures from its Prometheus endpoint; Config.BindAddrs spreads the
// connections over many client addresses; an https URL is loaded over TLS.
// Every subcommand's JSON is one versioned Envelope (WriteEnvelope,
// ReadEnvelope, schema.json).
//
// RunUsers runs virtual users, as k6, Locust and Gatling have them: a
// Scenario per user with its own cookie jar (User: Get, PostForm, Stream and
// Wait for server-sent events, Think), users arriving on an open-loop
// schedule (Arrival: users per second, or a ramp), each named step in its
// own histogram, and the delivery of events from the write that caused them
// (User.Cause) in another; StepThreshold checks steps ("hq.p99<50ms") on the
// run or on each window (UsersConfig.StopWhen, to find where a service
// level breaks).
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
