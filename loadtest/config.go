package loadtest

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults, as ab's.
const (
	// DefaultTimeout is how long a request may wait on the network when
	// Config.Timeout is 0: 30 seconds, ab's -s default.
	DefaultTimeout = 30 * time.Second
	// timedRequests caps the request count of a time-limited run when
	// Config.Requests is 0: 50000, as ab's -t implies -n 50000.
	timedRequests = 50000
	// defaultContentType is the Content-Type of a request body when
	// Config.ContentType is "", as ab's.
	defaultContentType = "text/plain"
)

// Config is one ab-style run. Each field carries the ab flag it mirrors.
// The zero value of every field but URL is usable.
type Config struct {
	// URL is the target, "http://host[:port]/path?query" or
	// "https://host[:port]/path?query" (ab's positional argument). Over
	// https each connection does a TLS handshake (crypto/tls, the system's
	// roots, the URL's host as the server name), counted in its Connect
	// time as ab counts it.
	URL string

	// Requests (-n) is how many requests to complete. 0 means 1 without a
	// TimeLimit and 50000 with one, as ab.
	Requests int

	// Concurrency (-c) is the number of workers, each with its own
	// connection, each sending its next request as soon as the previous
	// response is read. 0 means 1.
	Concurrency int

	// TimeLimit (-t) ends the run after this long even if Requests are not
	// done; requests in flight at that moment are abandoned and not
	// counted, as ab's. 0 means no limit.
	TimeLimit time.Duration

	// Warmup runs the same load for this long first and discards its
	// figures (not an ab flag). 0 means none.
	Warmup time.Duration

	// Timeout (-s) bounds each request's time on the network (connect,
	// write, read) as a deadline set when the request starts. 0 means
	// DefaultTimeout.
	Timeout time.Duration

	// KeepAlive (-k) reuses connections: requests are HTTP/1.0 with
	// "Connection: Keep-Alive", exactly as ab sends them, and a worker
	// reconnects when the server closes. Without it every request opens a
	// new connection and waits for the server to close it.
	KeepAlive bool

	// Method (-m) is the request method. "" means GET, or POST when Body is
	// set (ab's -p).
	Method string

	// Headers (-H) are extra header lines, "Name: value". A Host,
	// User-Agent or Accept header replaces the one ab would send.
	Headers []string

	// Body (-p) is the request body; ContentType (-T) its type, "" meaning
	// "text/plain", as ab's.
	Body        []byte
	ContentType string

	// VariableLength (-l) stops counting responses whose body length differs
	// from the first one's as Length failures.
	VariableLength bool

	// ContinueOnReceiveError (-r) counts a receive error as a failure and
	// goes on; without it the run aborts, as ab.
	ContinueOnReceiveError bool

	// BindAddrs (-B) are the local addresses the run's connections are
	// made from: each new connection binds the next one in turn, from the
	// first (ab's -B binds to one). Several spread the run over as many
	// client addresses, as a crowd of clients would come, for instance
	// 127.0.0.2 and up on loopback (any 127.0.0.0/8 address is local on
	// Linux) against a server that limits each address. nil means the
	// system picks the address.
	BindAddrs []netip.Addr

	// Rate, when above 0, makes the run open-loop at this many requests
	// per second in total (wrk2's -R; not an ab flag): request i of the run
	// is due at i/Rate seconds after the start and is sent by the first of
	// the Concurrency connections to be free. A request due while every
	// connection is busy is sent when one is free, late, and its latency
	// still counts from when it was due: the Result's percentiles are then
	// corrected for coordinated omission (see OpenLoop). With a TimeLimit
	// and no Requests, an open-loop run lasts the whole TimeLimit (no
	// 50000 cap), and the requests in flight when it ends are
	// waited for (each up to Timeout) and counted rather than abandoned as
	// ab abandons them: the longest waits of an open loop are those still
	// running at the end, so TimeTaken may pass TimeLimit. Those due that
	// no connection was free to send are counted in OpenLoop.Unsent. 0
	// means closed loop, ab's model.
	Rate float64

	// Timeline, when true, keeps per-second latency histograms so that the
	// Result has a Timeline (for the HTML report). It costs one more
	// histogram record per request. False means Result.Timeline is nil.
	Timeline bool

	// InsecureSkipVerify, for an https URL, accepts any certificate the
	// server presents (curl's -k, --insecure): for a test site with a
	// self-signed certificate. False verifies it against the system's roots
	// and the URL's host; a certificate that fails aborts the run at once.
	InsecureSkipVerify bool

	// MetricsURL, when set, is the server's Prometheus endpoint (text
	// format): Run scrapes it just before and just after the measured run
	// and sets Result.Loop (see LoopFigures). "" means none.
	MetricsURL string

	// RequestLog, when set, gets one JSON line for each measured request
	// (the warm-up's are not): when its latency counts from, the latency,
	// the status, the body's bytes, the run's name and any error, written
	// in blocks as the run goes, so memory stays bounded (see reqlog.go).
	// Run writes to it from one goroutine at a time. nil means none.
	RequestLog io.Writer

	// Progress, when set, is called from a progress goroutine with the
	// number of completed requests each time another tenth of the run is
	// done, as ab's "Completed N requests". It must not block.
	Progress func(completed int64)

	// step names the run in RequestLog's lines; "" means the URL's path.
	step string
	// noRawIO makes workers use net.Conn's Write and Read instead of the
	// raw-socket path (tests compare the two).
	noRawIO bool
	// lateWakeups delays each open-loop send this long past its due time,
	// as a slow timer or a busy machine would (tests of the lateness split).
	lateWakeups time.Duration
}

// target is a Config resolved for running: the address to dial and the
// request bytes, built once.
type target struct {
	addr    *net.TCPAddr
	host    string // as written in the URL, without the port
	port    int
	path    string      // path and query, as sent
	request []byte      // the whole request, body included
	head    bool        // HEAD: responses have no body
	tls     *tls.Config // for https, else nil
	// sentPerRequest is the bytes written per request when it has a body
	// (headers included, as ab's "Total body sent"), else 0.
	sentPerRequest int64
	cfg            Config
	stepJSON       []byte        // the run's name in the request log, a JSON string
	bindNext       atomic.Uint64 // the next of cfg.BindAddrs to bind a connection to
}

// errNoURL is returned when Config.URL is empty.
var errNoURL = errors.New("loadtest: no URL given")

// prepare validates cfg, resolves its host once and builds the request.
func prepare(cfg Config) (*target, error) {
	cfg = withDefaults(cfg)
	if cfg.URL == "" {
		return nil, errNoURL
	}
	u, port, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	addr, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(u.Hostname(), strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("loadtest: resolving %s: %w", u.Hostname(), err)
	}
	t := &target{addr: addr, host: u.Hostname(), port: port, path: u.RequestURI(), cfg: cfg}
	t.stepJSON = jsonString(cmp.Or(cfg.step, t.path))
	t.head = strings.EqualFold(cfg.Method, "HEAD")
	if u.Scheme == "https" {
		t.tls = &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: cfg.InsecureSkipVerify}
	}
	t.request = buildRequest(&cfg, hostField(u.Hostname(), port, defaultPort(u.Scheme)), t.path)
	if cfg.Body != nil {
		t.sentPerRequest = int64(len(t.request))
	}
	return t, nil
}

// CheckURL reports whether rawURL is a URL the harness can load, as ab
// takes them: http://host[:port]/path or https://host[:port]/path. The
// error names the problem.
func CheckURL(rawURL string) error {
	_, _, err := parseURL(rawURL)
	return err
}

// parseURL parses and checks rawURL (see CheckURL), with its port.
func parseURL(rawURL string) (*url.URL, int, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, 0, fmt.Errorf("loadtest: invalid URL %q: want http://host[:port]/path or https://host[:port]/path", rawURL)
	}
	port := defaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, 0, fmt.Errorf("loadtest: invalid port in URL %q", rawURL)
		}
	}
	return u, port, nil
}

// defaultPort is the scheme's port: 443 for https, else 80.
func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// hostField is the Host header's value: the host, with the port unless it
// is the scheme's default (def), as ab's.
func hostField(host string, port, def int) string {
	if port == def {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// withDefaults fills in the zero fields of cfg.
func withDefaults(cfg Config) Config {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.Requests <= 0 {
		cfg.Requests = 1
		switch {
		case cfg.TimeLimit > 0 && cfg.Rate > 0:
			cfg.Requests = math.MaxInt
		case cfg.TimeLimit > 0:
			cfg.Requests = timedRequests
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Method == "" {
		cfg.Method = "GET"
		if cfg.Body != nil {
			cfg.Method = "POST"
		}
	}
	if cfg.Body != nil && cfg.ContentType == "" {
		cfg.ContentType = defaultContentType
	}
	return cfg
}

// buildRequest lays out the request as ab does: request line (HTTP/1.0),
// Connection: Keep-Alive with -k, the -H headers, then Host, User-Agent and
// Accept unless a -H header replaced them; with a body, Content-length and
// Content-type come before the -H headers. No Accept-Encoding is sent unless
// a -H header asks for it.
func buildRequest(cfg *Config, hostport, path string) []byte {
	var b strings.Builder
	b.WriteString(cfg.Method + " " + path + " HTTP/1.0\r\n")
	if cfg.KeepAlive {
		b.WriteString("Connection: Keep-Alive\r\n")
	}
	if cfg.Body != nil {
		b.WriteString("Content-length: " + strconv.Itoa(len(cfg.Body)) + "\r\n")
		b.WriteString("Content-type: " + cfg.ContentType + "\r\n")
	}
	for _, h := range cfg.Headers {
		b.WriteString(strings.TrimRight(h, "\r\n") + "\r\n")
	}
	defaults := [...]struct{ name, line string }{
		{"host", "Host: " + hostport},
		{"user-agent", "User-Agent: ApacheBench/2.3 (statesecrets loadtest)"},
		{"accept", "Accept: */*"},
	}
	for _, d := range defaults {
		if !hasHeader(cfg.Headers, d.name) {
			b.WriteString(d.line + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return append([]byte(b.String()), cfg.Body...)
}

// hasHeader reports whether headers has a line for the lower-case name.
func hasHeader(headers []string, name string) bool {
	for _, h := range headers {
		if n, _, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(n), name) {
			return true
		}
	}
	return false
}
