package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workerShuttingDown is a worker's line as it begins its graceful stop:
// its drain begins after it, so a request in its socket by then is served.
var workerShuttingDown = regexp.MustCompile(`time=(\S+) level=INFO msg="shutting down" worker=(\d+)`)

// pipeliner pipelines continuously, as the attack run's client did: on
// each connection it keeps window requests outstanding, writing the next
// as each response arrives, and when the server answers "Connection:
// close" it opens a new connection and goes on (the requests left
// unanswered are sent again: RFC 9112 section 9.3.2). It records when each
// request was written, to check that the server answered every one that
// had reached it before its drain began.
type pipeliner struct {
	base   string
	window int
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []*pipelinedConn
}

// pipelinedConn is what a pipeliner saw on one connection.
type pipelinedConn struct {
	slot     string      // X-Worker of its responses
	sent     []time.Time // when each request's write returned: it was in the server's socket then
	answered int         // responses, all 200, in order
	closed   bool        // the last response said "Connection: close", then a clean end of stream
	err      error       // a reset, an early end, a bad response: a failure
}

// startPipeliners starts n clients pipelining window requests each on
// base until stop.
func startPipeliners(base string, n, window int) *pipeliner {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipeliner{base: base, window: window, cancel: cancel}
	for range n {
		p.wg.Go(func() {
			for ctx.Err() == nil {
				pc := &pipelinedConn{}
				p.mu.Lock()
				p.conns = append(p.conns, pc)
				p.mu.Unlock()
				p.run(ctx, pc)
			}
		})
	}
	return p
}

// run pipelines on one new connection until the server closes it, it
// fails or ctx ends.
func (p *pipeliner) run(ctx context.Context, pc *pipelinedConn) {
	c, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
	if err != nil {
		p.record(pc, func() { pc.err = err })
		return
	}
	var writer sync.WaitGroup
	defer writer.Wait() // last: it records what was sent
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	tokens := make(chan struct{}, p.window)
	for range p.window {
		tokens <- struct{}{}
	}
	done := make(chan struct{})
	defer close(done)
	writer.Go(func() {
		for {
			select {
			case <-tokens:
			case <-done:
				return
			}
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				return // the reader tells why
			}
			p.record(pc, func() { pc.sent = append(pc.sent, time.Now()) })
		}
	})
	r := bufio.NewReader(c)
	for {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if err != nil {
			if ctx.Err() == nil {
				p.record(pc, func() { pc.err = fmt.Errorf("response %d: %w", pc.answered+1, err) })
			}
			return
		}
		p.record(pc, func() { pc.answered++; pc.slot = resp.Header.Get(workerHeader) })
		if resp.Close {
			_, err := r.ReadByte() // a clean FIN, not a reset, and nothing after
			p.record(pc, func() {
				if pc.closed = errors.Is(err, io.EOF); !pc.closed {
					pc.err = fmt.Errorf("after the response with Connection: close: %v, want EOF", err)
				}
			})
			return
		}
		tokens <- struct{}{}
	}
}

func (p *pipeliner) record(pc *pipelinedConn, f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

// stop ends the clients and checks what they saw against log, the
// group's: no connection reset or cut short, and on each connection a
// worker closed, every request left unanswered was written after that
// worker logged that it was shutting down (the drain begins after the
// line, so one written before was in its socket and had to be served).
// It returns the connections closed and the requests they left
// unanswered.
func (p *pipeliner) stop(t *testing.T, log string) (closed, unanswered int) {
	t.Helper()
	p.cancel()
	p.wg.Wait()
	shutdown := map[string]time.Time{} // slot: its first worker's line
	for _, m := range workerShuttingDown.FindAllStringSubmatch(log, -1) {
		if _, ok := shutdown[m[2]]; !ok {
			at, err := time.Parse(time.RFC3339Nano, m[1])
			require.NoError(t, err)
			shutdown[m[2]] = at // to the millisecond, so no later than the line
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, pc := range p.conns {
		assert.NoError(t, pc.err, "pipelined connection %d (worker %s)", i, pc.slot)
		if !pc.closed {
			continue
		}
		closed++
		unanswered += len(pc.sent) - pc.answered
		at, ok := shutdown[pc.slot]
		if !assert.True(t, ok, "worker %s closed a connection, but never logged shutting down", pc.slot) {
			continue
		}
		for j := pc.answered; j < len(pc.sent); j++ {
			assert.False(t, pc.sent[j].Before(at), "connection %d: request %d written at %s, before worker %s began to shut down at %s, was left unanswered",
				i, j+1, pc.sent[j].Format(time.RFC3339Nano), pc.slot, at.Format(time.RFC3339Nano))
		}
	}
	return closed, unanswered
}
