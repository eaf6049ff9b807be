// Package gameserver is a single-goroutine, event-loop HTTP/1.1 server for
// standard http.Handlers.
//
// One goroutine, locked to its OS thread, runs the whole server: on Linux it
// waits in epoll_wait over non-blocking sockets, accepts connections, reads
// and frames requests, calls the Handler, writes responses, fires timers and
// runs functions posted from other goroutines. There is no goroutine per
// connection or per request. Handlers therefore run one at a time, in order,
// on that goroutine (the loop): state touched only from handlers, timers and
// posted functions needs no locks. The price is visible by design: while one
// handler runs, every other client waits.
//
// On systems other than Linux a portable back end serves the same API: it
// reads and writes through the net package on helper goroutines, but handlers,
// timers and posted functions still run one at a time on the loop goroutine.
//
// Requests are framed per RFC 9112 with strict rules (see Config), bodies are
// buffered whole before the Handler runs, so a Handler never waits on the
// network. The http.ResponseWriter passed to a Handler buffers the body: a
// response whose Handler returns without calling Flush is sent with an exact
// Content-Length. It also implements http.Flusher: Flush sends the header and
// the body so far, and the rest follows chunked (HTTP/1.1 clients) or
// delimited by closing the connection (HTTP/1.0 clients). It does not
// implement http.Hijacker, so it cannot switch protocols: a WriteHeader(101)
// is logged and answered 500 instead. A 205 Reset Content goes out with
// "Content-Length: 0" and no content (RFC 9110 section 15.3.6); 1xx, 204
// and 304 responses carry no content either. Responses carry the status line
// "HTTP/1.1" to every client, as RFC 9110 section 6.2 asks. An HTTP/1.0
// client that asked for keep-alive (as ab does) keeps its connection, with
// "Connection: keep-alive", for responses with a Content-Length; any other
// response to it ends the connection, as with net/http.
//
// A ResponseWriter, its Header map and the request body are valid only until
// ServeHTTP returns, as with net/http; here the rule is enforced, because the
// server reuses their memory for later requests. After ServeHTTP returns the
// ResponseWriter is cut off: Write returns an error ("gameserver:
// ResponseWriter used after the handler returned"), Header returns a map
// nobody reads, and WriteHeader and Flush do nothing, so a writer kept past
// its request can never reach another request's response. The request body
// may by then hold another request's bytes: copy what must outlive the
// handler.
//
// Fairness: a connection gets one request served per loop turn. A client
// that pipelines many requests has the next one served on the next turn,
// round-robin with every other connection that has work, so a batch of
// slow requests delays other clients by one request each, not by the whole
// batch.
//
// Memory: a Handler's Write never blocks. Everything a Handler writes is
// queued in memory on its connection until the client takes it, so a
// Handler that streams unbounded data (Flush after Flush) to a slow client
// grows the server's memory without limit; WriteTimeout only closes a
// connection whose client takes nothing at all for that long. Bound what a
// Handler writes. Reading stops while a connection's queued output is over
// 1 MiB, so pipelined requests do not pile up responses behind it.
//
// Each request's context is the server's base context: it carries
// http.LocalAddrContextKey, not a per-request cancellation, and is canceled
// when the loop stops.
package gameserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	// DefaultWriteTimeout applies when Config.WriteTimeout is 0.
	DefaultWriteTimeout = 30 * time.Second
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

	// ReadHeaderTimeout is how long a client may take from the first byte
	// of a request (or from connecting) to the end of its header section,
	// and also bounds reading the body. On expiry the connection is closed
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

	// MaxConns caps simultaneously open client connections. A connection
	// accepted over the cap is closed at once, before anything is read.
	// 0 means no cap other than the process's file descriptor limit.
	MaxConns int

	// Logger receives errors: panics in handlers, timers and posted
	// functions (with the stack; http.ErrAbortHandler is not logged), accept
	// and poller failures. nil means slog.Default().
	Logger *slog.Logger

	// AccessLog, if not nil, receives one line per response in the Common
	// Log Format (host ident authuser [date] "request line" status bytes),
	// refused requests included (request line "-"). host is the address of
	// the Request's RemoteAddr as the Handler left it, so a Handler behind a
	// trusted reverse proxy may set it to the client's address (as nginx's
	// realip module does); for a refused request it is the peer's. Lines are buffered and
	// written on the loop once per loop turn, so a slow writer slows the
	// loop. nil means no access log.
	AccessLog io.Writer
}

// Stats is a snapshot of a Server's counters since Serve began. The loop
// publishes it at the end of every loop turn.
type Stats struct {
	OpenConns     int           // client connections open now
	AcceptedConns uint64        // client connections accepted in total
	RejectedConns uint64        // connections closed at once for MaxConns
	Requests      uint64        // responses started (handlers called plus error responses)
	BytesRead     uint64        // bytes read from clients
	BytesWritten  uint64        // bytes written to clients
	LoopBusy      time.Duration // time the loop spent working, not waiting in epoll_wait
	LoopTurns     uint64        // loop iterations (epoll_wait returns)
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

// ListenAndServe listens on Config.Addr over TCP and calls Serve.
func (s *Server) ListenAndServe() error {
	addr := s.cfg.Addr
	if addr == "" {
		addr = ":http"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Shutdown stops the server gracefully: it closes the listener at once,
// closes idle keep-alive connections, lets requests already being read or
// served finish and their responses drain to the clients, closes each
// connection after its last response (a connection accepted that has not
// begun its first request yet gets that one request, within
// ReadHeaderTimeout, since its client cannot retry it elsewhere), and returns nil when no connection is left. If ctx ends
// first, Shutdown closes all remaining connections, waits for the loop to
// stop, and returns ctx.Err(). Timers are stopped. Shutdown before Serve
// makes a later Serve return ErrServerClosed at once. Called on the loop
// goroutine, it begins the shutdown without waiting and returns
// ErrLoopGoroutine.
func (s *Server) Shutdown(ctx context.Context) error { return s.loop.shutdown(ctx) }

// Close stops the server at once: the listener and every connection are
// closed, pending output is dropped, and the loop stops. It waits for the
// loop to stop and returns nil; called on the loop goroutine, it cannot
// wait: the loop stops once the calling function returns, and Close
// returns ErrLoopGoroutine.
func (s *Server) Close() error { return s.loop.close() }

// Post queues f to run on the loop goroutine, after the current handler or
// timer returns; posted functions run in the order posted. It is safe from
// any goroutine, including the loop itself, and never blocks on the loop.
// It returns ErrServerClosed, and f never runs, once the loop has stopped.
// Functions posted before Serve run when the loop starts. A panic in f is
// logged and the loop carries on.
func (s *Server) Post(f func()) error { return s.loop.post(f) }

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
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}
