package main

import (
	"net"
	"net/http"
	"sync/atomic"

	"github.com/felixge/httpsnoop"

	"github.com/statesecrets/server/gameserver"
)

// netStats counts, under -engine nethttp, the figures of gameserver.Stats
// that net/http has too: connections, bytes on the wire, requests and
// responses by status class, so the metrics endpoint (gameserver_*) and
// a dashboard read the same names on both engines. The loop's own figures
// (busy time, lag, turns, the worker pool) are unknown: the snapshot's
// Loop is false, and the metrics leave them out (there is no loop).
// Counting is a few atomic adds per request and per read or write, from
// net/http's goroutines.
type netStats struct {
	open, accepted     atomic.Int64
	bytesRead, written atomic.Uint64
	requests           atomic.Uint64
	responses          [6]atomic.Uint64 // by status/100, as Stats.Responses
}

// snapshot returns the counts as a gameserver.Stats.
func (n *netStats) snapshot() gameserver.Stats {
	s := gameserver.Stats{
		OpenConns:     int(n.open.Load()),
		AcceptedConns: uint64(n.accepted.Load()),
		BytesRead:     n.bytesRead.Load(),
		BytesWritten:  n.written.Load(),
		Requests:      n.requests.Load(),
	}
	for i := range n.responses {
		s.Responses[i] = n.responses[i].Load()
	}
	return s
}

// handler counts each request as it starts (Stats.Requests) and its
// response by status class as the handler returns (Stats.Responses; an
// event stream counts as its 200 when it ends, as on the loop). The
// ResponseWriter is wrapped by httpsnoop, which keeps the interfaces
// (http.Flusher for streams) of the one it wraps.
func (n *netStats) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.requests.Add(1)
		m := httpsnoop.CaptureMetrics(h, w, r)
		n.responses[min(max(m.Code/100, 0), 5)].Add(1)
	})
}

// listener counts the connections l accepts and the bytes read from and
// written to them.
func (n *netStats) listener(l net.Listener) net.Listener { return &countingListener{l, n} }

type countingListener struct {
	net.Listener
	n *netStats
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.n.accepted.Add(1)
	l.n.open.Add(1)
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n      *netStats
	closed atomic.Bool
}

func (c *countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.bytesRead.Add(uint64(k))
	return k, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.written.Add(uint64(k))
	return k, err
}

// CloseWrite half-closes a TCP connection, as net/http does before closing
// one whose request it refused (closeWriteAndWait): the wrapper must not
// hide it.
func (c *countingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close counts the connection closed once, however often it is called.
func (c *countingConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.n.open.Add(-1)
	}
	return c.Conn.Close()
}
