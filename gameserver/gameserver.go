package gameserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"
)

// Defaults applied where a Config field is zero.
const (
	// DefaultMaxHeaderBytes is the limit on a request's header section
	// (request line and header fields) when Config.MaxHeaderBytes is 0:
	// 64 KiB. nginx's large_client_header_buffers default is 4 buffers of
	// 8 KiB (no line over 8 KiB); net/http's DefaultMaxHeaderBytes is 1 MiB,
	// but there a header is parsed on its connection's own goroutine, while
	// here parsing it blocks every client of the loop.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxBodyBytes is the limit on a request's body when
	// Config.MaxBodyBytes is 0: 10 MiB.
	DefaultMaxBodyBytes = 10 << 20
	// DefaultReadHeaderTimeout applies when Config.ReadHeaderTimeout is 0.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout applies when Config.IdleTimeout is 0.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxOutputBytes applies when Config.MaxOutputBytes is 0:
	// 256 MiB.
	DefaultMaxOutputBytes = 256 << 20
	// DefaultWriteTimeout applies when Config.WriteTimeout is 0.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultDeferTimeout applies when Config.DeferTimeout is 0.
	DefaultDeferTimeout = 30 * time.Second
	// DefaultDrainIdleTimeout applies when Config.DrainIdleTimeout is 0.
	DefaultDrainIdleTimeout = time.Second
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown or
// Close, and by Post after the loop has stopped.
var ErrServerClosed = errors.New("gameserver: server closed")

// ErrLoopExited is returned by Serve when a handler, timer or posted
// function called runtime.Goexit (as testing's t.FailNow does) on the loop
// goroutine. That ends the loop goroutine without a panic to recover, so
// the server cannot go on: it logs the error, closes the listener and every
// connection (a response in progress is abandoned), and stops as after
// Close. Post then returns ErrServerClosed and Shutdown and Close return at
// once.
var ErrLoopExited = errors.New("gameserver: handler, timer or posted function called runtime.Goexit; the loop stopped")

// ErrLoopGoroutine is returned by Shutdown and Close called on the loop
// goroutine (from a handler, timer or posted function). They cannot wait
// there for the loop to stop, since the loop cannot stop before they
// return: they start the stop and return ErrLoopGoroutine at once. The
// stop proceeds after the calling function returns, as if called from
// another goroutine, except that Shutdown's ctx is not used: to bound a
// graceful shutdown, or to wait for it, call Shutdown from another
// goroutine (go s.Shutdown(ctx)).
var ErrLoopGoroutine = errors.New("gameserver: Shutdown or Close called on the loop goroutine: the stop has begun, but cannot be waited for there; call it from another goroutine to wait")

// Config configures a Server. The zero value of every field is usable and
// means the documented default. Config is read once, by New; changing it
// afterwards has no effect.
type Config struct {
	// Addr is the TCP address ListenAndServe listens on, "host:port".
	// "" means ":http" (port 80), as net/http.
	Addr string

	// Handler answers every request, on the loop goroutine. nil means
	// http.DefaultServeMux.
	Handler http.Handler

	// MaxHeaderBytes limits the request line plus header fields, in bytes,
	// and, separately, a chunked body's trailer section. A request over it
	// is answered 431 Request Header Fields Too Large (RFC 6585 section 5),
	// or 414 URI Too Long if its request-line alone does not end within it
	// (RFC 9112 section 3), and the connection closed. 0 means
	// DefaultMaxHeaderBytes; negative values are treated as 0. Whatever
	// its value, a header or trailer section of more than 256 field lines
	// is also answered 431, so one request cannot hold the loop parsing
	// hundreds of thousands of tiny fields.
	MaxHeaderBytes int

	// MaxBodyBytes limits a request's decoded body, in bytes. A request
	// whose Content-Length is over it, or whose chunked body grows past it,
	// is answered 413 Content Too Large (RFC 9110 section 15.5.14) and the
	// connection closed. 0 means DefaultMaxBodyBytes; negative means no body
	// is accepted at all (any non-empty body gets 413).
	//
	// Bodies are buffered whole, so together with MaxHeaderBytes it bounds
	// what one connection's request can cost in memory: a Content-Length
	// body is read into one buffer sized from the header, at most about
	// MaxHeaderBytes + MaxBodyBytes + 64 KiB (one read). A chunked body
	// costs its raw bytes as received plus the decoded body: its framing
	// (chunk-size lines, extensions, CRLFs) may total at most MaxBodyBytes
	// or 16 KiB, whichever is larger, or the request is refused with 400,
	// and the raw buffer grows by doubling as it arrives, so budget up to
	// about 5 times MaxBodyBytes for a chunked body of tiny chunks (about
	// 2 to 3 times for ordinary chunk sizes). Multiply by the connections
	// that may send such bodies at once (see MaxConns) for the server's
	// worst case.
	MaxBodyBytes int64

	// ReadHeaderTimeout is how long a client may take to send a request's
	// header section, counted from accept for a new connection's first
	// request (as net/http), and from the first byte after the idle wait
	// for a later one on a kept-alive connection (IdleTimeout bounds the
	// wait itself). It also bounds reading the body. On Linux, a TCP
	// listener has TCP_DEFER_ACCEPT: the kernel hands the server a new
	// connection when its first bytes arrive, or after about a second of
	// silence, and the count starts then. On expiry the connection is closed
	// without a response. 0 means DefaultReadHeaderTimeout; negative means
	// no limit.
	ReadHeaderTimeout time.Duration

	// IdleTimeout is how long a keep-alive connection may wait, with no
	// response pending, for the first byte of its next request. On expiry
	// the connection is closed. 0 means DefaultIdleTimeout; negative means
	// no limit.
	IdleTimeout time.Duration

	// WriteTimeout is how long queued response bytes may wait without the
	// client taking any of them. On expiry the connection is closed and the
	// rest of the output dropped. 0 means DefaultWriteTimeout; negative
	// means no limit.
	WriteTimeout time.Duration

	// DeferTimeout is how long a deferred response (see Defer) may wait
	// for its Finish. On expiry it is answered 503 Service Unavailable,
	// and logged; if its header was already flushed, the connection is
	// closed instead. 0 means DefaultDeferTimeout; negative means no
	// limit.
	DeferTimeout time.Duration

	// DrainIdleTimeout is how long Shutdown keeps a keep-alive connection
	// open while it is idle (no request begun, nothing to write), counted
	// from the start of the drain or from when the connection became idle,
	// whichever is later. HTTP/1.1 cannot tell a client that an idle
	// connection is about to close, so closing one at once races a
	// request the client (a reverse proxy reusing a pooled connection,
	// above all) may be sending on it: the request meets a reset, which
	// nginx answers 502 for a POST. Instead, while it drains, the server
	// answers any request that arrives with "Connection: close" and
	// closes the connection after it; it closes an idle connection when
	// its client closes it, or when this time (or its IdleTimeout, if
	// sooner) has passed. A proxy whose pooled connections idle for less
	// than both (nginx's keepalive_timeout in an upstream block) closes
	// them itself first, so it never races the close. 0 means
	// DefaultDrainIdleTimeout; negative means idle connections close on
	// the turn after the drain begins, once what their sockets already
	// hold has been read.
	DrainIdleTimeout time.Duration

	// SharedListener says that another process holds the listening socket
	// too and goes on accepting from it after this server stops: a
	// graceful restart that hands the socket to the next server (as
	// cmd/gameserver's supervisor does with its workers). Shutdown then
	// accepts what is queued on the socket at that moment and stops
	// watching it, leaving later connections to the other holders. false,
	// the default, means the server owns the socket, and on Linux Shutdown
	// first makes it drop new handshakes (see Shutdown), which would stop
	// every other holder of the socket from receiving connections too:
	// set it whenever the socket is shared.
	SharedListener bool

	// StreamBuffer bounds the memory the output queued for one event
	// stream (see Stream) holds, in bytes: a write that takes a stream
	// over it closes the stream's connection and counts it in
	// Stats.StreamsCut, so a client that never reads costs at most about
	// this much memory. What is counted is what the queue keeps alive, not
	// just the bytes queued: each buffer events were copied into, whole
	// (16 KiB); each event shared with other streams (Broadcast), at its
	// allocation's size, in full for every stream that holds it, since
	// the slowest may be the last to; and the queue's own list of
	// segments. 0 means DefaultStreamBuffer; negative means no limit.
	StreamBuffer int

	// MaxConns caps simultaneously open client connections, event
	// streams included. A connection accepted at the cap is served in
	// place of the connection that has been idle the longest, if one has
	// been idle for at least a second: that one is closed (counted in
	// Stats.EvictedIdleConns), as nginx reuses its keep-alive connections.
	// Idle means waiting for a request, its first or the next, with
	// nothing of one received and nothing left to write; event streams,
	// deferred responses, a handler running and a request partly
	// received are never closed for it. The connections idle longest go
	// first, and one at a time, a new one for each accepted: a keep-alive
	// client that has just had a response keeps its connection over one
	// that has been quiet longer. Before closing an idle connection the
	// loop reads its socket, and a request found there is served (the
	// next idle connection is tried instead); one still on its way when
	// the connection closes is reset, and the client sends it again on a
	// new connection, as RFC 9112 section 9.3 expects of a client whose
	// idle connection closes. With no connection idle for a second, the
	// connection accepted at the cap is closed at once, before anything
	// is read, and counted in Stats.RejectedConns. 0 means no cap other
	// than the process's file descriptor limit (nothing is ever closed
	// for it).
	MaxConns int

	// MaxConnsPerAddr caps the connections open at once from one client
	// address: an IPv4 address, or an IPv6 address's /64 prefix (what one
	// host or home network usually holds whole); connections that are not
	// IP (a Unix socket) are not counted. A connection accepted over it is
	// closed at once, before anything is read, as one over MaxConns, and
	// counted in Stats.RejectedConns. Without it, one client that opens
	// connections and sends half a header on each holds every connection
	// MaxConns allows until their ReadHeaderTimeout, and every other
	// client is refused meanwhile. 0 means the default: with a MaxConns
	// cap, a quarter of it (at least 1), so one address leaves three
	// quarters of the connections to the others; with no MaxConns cap, no
	// per-address cap either. Negative means no per-address cap.
	//
	// The cap sees the peer of the TCP connection, not a forwarded
	// address: behind a reverse proxy every connection comes from the
	// proxy (127.0.0.1 for one on the same host), so there set it
	// negative, or above what the proxy may open (its upstream
	// connections, event streams included), and cap clients at the proxy
	// (nginx's limit_conn).
	MaxConnsPerAddr int

	// MaxStreams caps simultaneously open event streams (see Stream): a
	// Stream call over it returns ErrTooManyStreams and sends nothing.
	// Streams last until closed, so without a cap of their own they could
	// take every connection MaxConns allows and lock out every request
	// that is not a stream. 0 means the default: with a MaxConns cap,
	// MaxConns less a reserve of a quarter of it (at least one stream),
	// so a full cap of streams leaves a quarter of the connections to
	// page requests; with no MaxConns cap, no stream cap either.
	// Negative means no stream cap (streams may take every connection).
	MaxStreams int

	// MaxOutputBytes is the server-wide budget for queued response
	// output, in bytes of memory held (whole buffers, not just the bytes
	// in them). Over it, no connection with output pending is read or
	// served until the total falls, so clients that never read cannot
	// grow the server's memory without bound; connections with nothing
	// queued are served as usual. Each connection is bounded on its own
	// too: it stops reading and serving once its queued output and the
	// input held behind it take 128 KiB. 0 means DefaultMaxOutputBytes;
	// negative means no server-wide budget.
	MaxOutputBytes int64

	// Logger receives errors: panics in handlers, timers and posted
	// functions (with the stack; http.ErrAbortHandler is not logged), accept
	// and poller failures. nil means slog.Default().
	Logger *slog.Logger

	// Workers is the number of goroutines of the Server's worker pool,
	// which runs the work of Go off the loop. 0 means one fewer than
	// GOMAXPROCS (as New finds it), at least 1: CPU-bound work then
	// leaves the loop goroutine a P whenever it returns from epoll_wait,
	// where with GOMAXPROCS busy workers it would queue behind them for
	// its time slice. Workers start on demand and stop with the loop.
	// Negative values are treated as 0.
	Workers int

	// WorkQueue bounds the work waiting for a worker. A Go call that
	// finds it full is answered 503 Service Unavailable with
	// "Retry-After: 1" at once, so a burst cannot build an unbounded
	// backlog. Refusals are logged once per episode: a line (Logger, level
	// Error) at the first, and one (level Warn, with the count) when the
	// queue takes work again. 0 means DefaultWorkQueue; negative values
	// are treated as 0.
	WorkQueue int

	// SlowRequest is the threshold of the slow-request log: a handler
	// call, or a deferred response's finish function, that holds the loop
	// this long or longer is logged (Logger, level Warn) and kept in the
	// last 128 of Server.SlowRequests, as Redis's SLOWLOG. 0 means
	// DefaultSlowRequest; negative turns the log off.
	SlowRequest time.Duration

	// RedactPath, if not nil, rewrites a request's URL path before the
	// slow-request log records it (for example to hide an id in the
	// path). The query is never recorded. It runs on the loop.
	RedactPath func(path string) string

	// LagResolution is the period of the loop-lag timer (see LagStats):
	// every LagResolution the loop measures how late the timer fired. 0
	// means DefaultLagResolution; negative turns the measurement off (and
	// the wake-up it costs an idle server, 100 a second by default).
	LagResolution time.Duration

	// LoopCPUs, if not empty, pins the loop's OS thread to these CPUs
	// (numbered from 0, as the system numbers them) with
	// sched_setaffinity when Serve starts, for as long as the loop runs:
	// a load generator or other busy processes on the other CPUs then
	// cannot take the loop's, and WaitStats tells how much the loop still
	// waited for one. Serve returns an error, before accepting anything,
	// if the system refuses (a CPU it does not have or the process may
	// not use) or is not Linux. Only the loop's thread is pinned: the
	// worker pool, and the portable back end's I/O goroutines, run where
	// the Go scheduler puts them. Empty, the default, pins nothing.
	LoopCPUs []int

	// AccessLog, if not nil, receives one line per response in the Common
	// Log Format (host ident authuser [date] "request line" status bytes),
	// refused requests included (request line "-"). host is the address of
	// the Request's RemoteAddr as the Handler left it, so a Handler behind
	// a trusted reverse proxy may set it to the client's address (as
	// nginx's realip module does); for a refused request it is the peer's.
	// Lines are buffered and written on the loop once per loop turn, so a
	// slow writer slows the loop. nil means no access log.
	AccessLog io.Writer
}

// Server is one event loop serving HTTP/1.1. Create it with New; its methods
// are safe to call from any goroutine unless documented otherwise.
type Server struct {
	cfg Config
	loop
}

// New returns a Server for cfg, with zero fields replaced by their
// defaults. It does not listen or start the loop: call Serve or
// ListenAndServe.
func New(cfg Config) *Server {
	s := &Server{cfg: withDefaults(cfg)}
	s.cfg.LoopCPUs = slices.Clone(cfg.LoopCPUs) // read once, by New
	s.loop.init(s)
	return s
}

// Serve runs the loop on a new goroutine, locked to its OS thread, accepting
// connections on l until Shutdown or Close, and waits for it. It always
// returns a non-nil error: ErrServerClosed after Shutdown or Close,
// ErrLoopExited if a function on the loop called runtime.Goexit, otherwise
// the error that stopped the loop. Serve takes ownership of l and closes it.
// On Linux l must give access to its file descriptor through syscall.Conn,
// as *net.TCPListener and *net.UnixListener do: the loop watches a duplicate
// of it in its own epoll set. Serve may be called at most once per Server;
// a second call returns an error.
func (s *Server) Serve(l net.Listener) error { return s.loop.serve(l) }

// ListenAndServe listens on Config.Addr over TCP (see Listen) and calls
// Serve.
func (s *Server) ListenAndServe() error {
	addr := s.cfg.Addr
	if addr == "" {
		addr = ":http"
	}
	l, err := Listen("tcp", addr, ListenOptions{})
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Shutdown stops the server gracefully, without resetting a request that
// was sent before it began.
//
// New connections stop first. On Linux, with a TCP listener the server
// owns (see Config.SharedListener) and that is plain TCP (as Listen and
// ListenAndServe make it; Go's net.Listen makes Multipath TCP listeners,
// which take no socket filter), the socket drops new handshakes (a socket
// filter discards SYN segments, so a client connecting now sends its SYN
// again about a second later and then meets the next server on the port,
// or a refusal); the connections queued on it, and those whose handshake
// was under way, are accepted (for at most 1.5 seconds), and then the
// listener closes. Otherwise the connections queued are accepted and the
// listener closes at once: a handshake that completes in between is
// reset, as with net/http, and a socket shared with another process is
// left to it.
//
// Each connection then serves the requests that had arrived when the
// drain began, in its buffer or in its socket (pipelined ones included),
// or when it was accepted during the drain, and finishes a request begun
// then; the response to the last of them carries "Connection: close", and
// the connection closes after it, half-closing first and discarding what
// the client sends after it for up to a second, so that this late input
// does not reset the responses (the client retries the requests the
// server did not answer, RFC 9112 section 9.6). Responses in progress are
// written whole, deferred ones wait for their Finish and event streams are
// closed (see Stream). A connection that is idle, or accepted without a
// request begun, stays open for Config.DrainIdleTimeout: a request that
// arrives meanwhile is answered with "Connection: close", and the
// connection closes when its client closes it or the time has passed. A
// client thus meets a reset only for a request it sends after the server
// said the connection closes, or, while idle, after DrainIdleTimeout.
//
// Shutdown returns nil when no connection is left. If ctx ends first,
// Shutdown closes all remaining connections (as Close), waits for the loop
// to stop, and returns ctx.Err(). Timers are stopped. Shutdown before
// Serve makes a later Serve return ErrServerClosed at once. Called on the
// loop goroutine, it begins the shutdown without waiting and returns
// ErrLoopGoroutine.
func (s *Server) Shutdown(ctx context.Context) error { return s.loop.shutdown(ctx) }

// Close stops the server at once: the listener and every connection are
// closed, pending output is dropped, and the loop stops. It waits for the
// loop to stop and returns nil; called on the loop goroutine, it cannot
// wait: the loop stops once the calling function returns, and Close
// returns ErrLoopGoroutine.
func (s *Server) Close() error { return s.loop.close() }

// Post queues f to run on the loop goroutine, after the current handler or
// timer returns; posted functions run in the order posted. A loop turn
// that has already run for 4 ms leaves the posted functions, and the
// timers due, that are still to run to its next turn, which comes at once
// (a turn's length is what every client in it waits). It is safe from
// any goroutine, including the loop itself, and never blocks on the loop.
// It returns ErrServerClosed, and f never runs, once the loop has stopped.
// Functions posted before Serve run when the loop starts. A panic in f is
// logged and the loop carries on.
func (s *Server) Post(f func()) error { return s.loop.post(f) }

// TurnElapsed returns how long the loop's turn in progress has run, its
// yield to the Go scheduler included, or 0 while the loop waits for
// events. Work that goes on over several turns (as Redis bounds the work
// of one turn of its event loop) calls it on the loop, from a handler, a
// timer or a posted function, to size its next piece to what the turn's
// earlier work left of a budget: a fan-out to thousands of streams sent
// in shares, whose share run after a 3 ms timer in the same turn would
// otherwise make it 3 ms longer. It is safe from any goroutine.
func (s *Server) TurnElapsed() time.Duration {
	t := s.loop.pub.turnStart.Load()
	if t == 0 {
		return 0
	}
	return time.Duration(max(s.loop.clock()-(t-1), 0))
}

// AfterFunc arranges for f to run once on the loop goroutine after d (d <= 0:
// on the next loop turn). It is safe from any goroutine. The returned Timer
// can cancel it. Timers do not keep a stopped loop alive: after Shutdown or
// Close they never fire. A panic in f is logged and the loop carries on.
func (s *Server) AfterFunc(d time.Duration, f func()) *Timer { return s.loop.addTimer(d, 0, f) }

// Every arranges for f to run on the loop goroutine every period, the first
// time one period from now, until the Timer is stopped; the next run is
// scheduled from the previous deadline, not from when f returned, and runs
// missed while the loop was busy are skipped, not queued. period must be
// positive, or Every panics. It is safe from any goroutine.
func (s *Server) Every(period time.Duration, f func()) *Timer {
	if period <= 0 {
		panic("gameserver: Every with non-positive period")
	}
	return s.loop.addTimer(period, period, f)
}

// Stats returns a snapshot of the server's counters. It is safe from any
// goroutine and does not wait for the loop: it may lag the loop by the turn
// in progress.
func (s *Server) Stats() Stats { return s.loop.stats() }

// SlowRequests returns the slow-request log (Config.SlowRequest): the
// last 128 entries at most, newest first, as Redis's SLOWLOG GET. It is
// safe from any goroutine; the slice is the caller's.
func (s *Server) SlowRequests() []SlowRequest { return s.loop.slow.entries() }

// Addr returns the address the server listens on, or nil before Serve.
func (s *Server) Addr() net.Addr { return s.loop.addr() }

// withDefaults returns cfg with zero fields replaced by their defaults.
func withDefaults(cfg Config) Config {
	if cfg.Handler == nil {
		cfg.Handler = http.DefaultServeMux
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadHeaderTimeout == 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.StreamBuffer == 0 {
		cfg.StreamBuffer = DefaultStreamBuffer
	}
	if cfg.DeferTimeout == 0 {
		cfg.DeferTimeout = DefaultDeferTimeout
	}
	if cfg.DrainIdleTimeout == 0 {
		cfg.DrainIdleTimeout = DefaultDrainIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxStreams == 0 && cfg.MaxConns > 0 {
		cfg.MaxStreams = max(cfg.MaxConns-cfg.MaxConns/4, 1)
	}
	if cfg.MaxConnsPerAddr == 0 && cfg.MaxConns > 0 {
		cfg.MaxConnsPerAddr = max(cfg.MaxConns/4, 1)
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.Workers <= 0 {
		cfg.Workers = defaultWorkers()
	}
	if cfg.WorkQueue <= 0 {
		cfg.WorkQueue = DefaultWorkQueue
	}
	if cfg.SlowRequest == 0 {
		cfg.SlowRequest = DefaultSlowRequest
	}
	if cfg.LagResolution == 0 {
		cfg.LagResolution = DefaultLagResolution
	}
	return cfg
}
