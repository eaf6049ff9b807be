package handlers_test

import (
	"cmp"
	"context"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// The engines the tests' requests can go through (-engine).
const (
	engineDirect  = "direct"  // ServeHTTP on a recorder, on the test's goroutine
	engineLoop    = "loop"    // a gameserver loop on loopback
	engineNetHTTP = "nethttp" // net/http on loopback, through gameserver.Serial
)

// engine is where client requests go: `go test ./handlers -engine=nethttp`
// runs every client of these tests over loopback through that server, and
// the servers that serveLoop starts (live pages, login storms) too. The
// default is $STATESECRETS_TEST_ENGINE, or direct (make test runs the
// package under loop, then nethttp).
var engine = flag.String("engine", cmp.Or(os.Getenv("STATESECRETS_TEST_ENGINE"), engineDirect),
	"where the tests' requests go: direct (ServeHTTP on a recorder), loop (a gameserver on loopback)\n"+
		"or nethttp (net/http on loopback through gameserver.Serial); live and storm tests serve on nethttp\n"+
		"with -engine=nethttp, on the loop otherwise (default $STATESECRETS_TEST_ENGINE, or direct)")

// handler is what e's clients call: e.srv itself (direct), or a forwarder
// to a server of the -engine on loopback, started with e's first client
// and stopped with the test. The server serves the current e.srv (after a
// reopen too), and the request's RemoteAddr, as the test set it, so that
// rate limits see the addresses they see directly.
func (e *env) handler() http.Handler {
	switch *engine {
	case engineDirect:
		return e.srv
	case engineLoop, engineNetHTTP:
	default:
		require.FailNow(e.tb, "-engine must be direct, loop or nethttp", "got %q", *engine)
	}
	routesMu.Lock()
	defer routesMu.Unlock()
	rt, ok := routes[e]
	if !ok {
		rt = &route{env: e}
		served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get(remoteAddrHeader); a != "" {
				r.RemoteAddr = a
				r.Header.Del(remoteAddrHeader)
			}
			rt.srv.Load().ServeHTTP(w, r)
		})
		rt.addr = serveEngine(e.tb, served, nil, gameserver.Config{})
		rt.client = &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}
		e.tb.Cleanup(func() {
			rt.client.CloseIdleConnections()
			routesMu.Lock()
			delete(routes, e)
			routesMu.Unlock()
		})
		routes[e] = rt
	}
	return rt
}

// remoteAddrHeader carries a request's RemoteAddr to the server.
const remoteAddrHeader = "X-Test-Remote-Addr"

var (
	routesMu sync.Mutex
	routes   = map[*env]*route{}
)

// route forwards requests to an engine on loopback.
type route struct {
	env    *env
	addr   string
	client *http.Transport
	srv    atomic.Pointer[handlers.Server] // e.srv as of the last request sent
}

// ServeHTTP sends req, made for a handler (httptest.NewRequest), to the
// server as it is (Host, headers, body; no redirect followed, no
// compression asked for), and copies the answer into w.
func (rt *route) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	tb := rt.env.tb
	rt.srv.Store(rt.env.srv) // read on the test's goroutine, where reopen writes it
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := req.Clone(ctx)
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", rt.addr
	out.Header.Set(remoteAddrHeader, req.RemoteAddr)
	resp, err := rt.client.RoundTrip(out)
	require.NoError(tb, err, "%s engine", *engine)
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, err = io.Copy(w, resp.Body)
	require.NoError(tb, err)
}

// serveEngine serves h on a loopback port with the -engine's server (the
// loop configured by cfg, its Handler set to h, unless it is nethttp),
// calling poll, if not nil, every 10 ms as the engine's timer, and returns
// the address. The server stops with the test, its streams closed.
func serveEngine(tb testing.TB, h http.Handler, poll func(), cfg gameserver.Config) string {
	tb.Helper()
	addr, _, _ := serveEngineSoon(tb, h, poll, cfg)
	return addr
}

// serveEngineSoon is serveEngine, also returning the engine's way to run
// a function one at a time with h as soon as it can (handlers'
// SetLiveSoon): the loop's Post, or the SerialHandler's AfterFunc(0); and
// how long the loop's turn in progress has run (SetLiveTurn: the loop's
// TurnElapsed, nil under net/http).
func serveEngineSoon(tb testing.TB, h http.Handler, poll func(), cfg gameserver.Config) (string, func(func()), func() time.Duration) {
	tb.Helper()
	if *engine != engineNetHTTP {
		addr, srv := serveGameserver(tb, h, poll, cfg)
		return addr, func(f func()) { srv.Post(f) }, srv.TurnElapsed
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	done := make(chan struct{})
	s := gameserver.Serial(h)
	if poll != nil {
		s.Every(10*time.Millisecond, poll)
	}
	hs := &http.Server{Handler: s, ErrorLog: log.New(io.Discard, "", 0)}
	hs.RegisterOnShutdown(s.Close)
	go func() { hs.Serve(l); close(done) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		s.Close()
		s.Do(func() {}) // a poll in progress ends first
		<-done
	})
	return l.Addr().String(), func(f func()) { s.AfterFunc(0, f) }, nil
}

// serveGameserver serves h from a gameserver loop configured by cfg (its
// Handler set to h) on a loopback port, whatever the -engine, calling poll,
// if not nil, every 10 ms on the loop, and returns the address and the
// server, for its Stats. The server stops with the test.
func serveGameserver(tb testing.TB, h http.Handler, poll func(), cfg gameserver.Config) (string, *gameserver.Server) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	cfg.Handler = h
	srv := gameserver.New(cfg)
	if poll != nil {
		srv.Every(10*time.Millisecond, poll)
	}
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return l.Addr().String(), srv
}
