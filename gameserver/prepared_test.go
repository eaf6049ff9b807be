package gameserver_test

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// preparedFiles is a PreparedHandler with one response at /a.html, which
// ServeHTTP also gives (with the same fields), so the two paths can be
// compared byte for byte. It records the paths ServeHTTP saw.
type preparedFiles struct {
	header http.Header
	body   []byte
	resp   *gameserver.Prepared

	mu   sync.Mutex
	seen []string
}

func newPreparedFiles(body string) *preparedFiles {
	h := http.Header{"Etag": {`"v1"`}, "Cache-Control": {"max-age=60"}}
	return &preparedFiles{header: h, body: []byte(body), resp: gameserver.Prepare(h, []byte(body))}
}

func (p *preparedFiles) Prepared(path []byte) *gameserver.Prepared {
	if string(path) == "/a.html" {
		return p.resp
	}
	return nil
}

func (p *preparedFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.Method+" "+r.RequestURI)
	p.mu.Unlock()
	for k, v := range p.header {
		w.Header()[k] = v
	}
	w.Write(p.body)
}

func (p *preparedFiles) handled() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func TestPrepared(t *testing.T) {
	// Ensure a prepared response is byte for byte what the handler would
	// send for the same request, and that ServeHTTP is not called for it.
	t.Run("SameAsHandler", func(t *testing.T) {
		const page = "<!DOCTYPE html><p>prepared</p>"
		files := newPreparedFiles(page)
		addr, _ := startServer(t, gameserver.Config{Handler: files})
		plain := http.HandlerFunc(newPreparedFiles(page).ServeHTTP) // the same handler, without Prepared
		addr2, _ := startServer(t, gameserver.Config{Handler: plain})
		for _, tc := range []struct{ name, req, method string }{
			{"GET", "GET /a.html HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n", http.MethodGet},
			{"HEAD", "HEAD /a.html HTTP/1.1\r\nHost: x\r\n\r\n", http.MethodHead},
			{"HTTP10KeepAlive", "GET /a.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", http.MethodGet},
			{"HTTP11Close", "GET /a.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", http.MethodGet},
			{"HTTP10", "GET /a.html HTTP/1.0\r\nHost: x\r\nAccept: */*\r\n\r\n", http.MethodGet},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, want := dial(t, addr), dial(t, addr2)
				got.writeAll(tc.req)
				want.writeAll(tc.req)
				assert.Equal(t, normalize(want.readRaw(tc.method)), normalize(got.readRaw(tc.method)))
			})
		}
		assert.Empty(t, files.handled())
	})

	// Ensure the requests a prepared response may not answer reach
	// ServeHTTP: conditional and range requests, a query, other methods,
	// other paths, and a body.
	t.Run("ToHandler", func(t *testing.T) {
		files := newPreparedFiles("x")
		addr, _ := startServer(t, gameserver.Config{Handler: files})
		reqs := []string{
			"GET /a.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v1\"\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\nrange: bytes=0-0\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Mon, 30 Nov 2026 10:00:00 GMT\r\n\r\n",
			"GET /a.html?v=2 HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET /a%2ehtml HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET http://x/a.html HTTP/1.1\r\nHost: x\r\n\r\n",
			"POST /a.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx",
			"GET /b.html HTTP/1.1\r\nHost: x\r\n\r\n",
		}
		cl := dial(t, addr)
		for _, r := range reqs {
			cl.writeAll(r)
			resp, _ := cl.readResponse(http.MethodGet)
			assert.Equal(t, http.StatusOK, resp.StatusCode, r)
		}
		want := make([]string, len(reqs))
		for i, r := range reqs {
			want[i] = strings.Join(strings.Fields(r)[:2], " ")
		}
		assert.Equal(t, want, files.handled())
	})

	// Ensure a request the parser refuses is refused, prepared response or
	// not.
	t.Run("Refused", func(t *testing.T) {
		files := newPreparedFiles("x")
		addr, _ := startServer(t, gameserver.Config{Handler: files})
		for _, r := range []string{
			"GET /a.html HTTP/1.1\r\n\r\n",                       // no Host
			"GET /a.html HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", // two
			"GET /a.html HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\nA: \x01\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
			"GET /a.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
			"GET  /a.html HTTP/1.1\r\nHost: x\r\n\r\n",
		} {
			cl := dial(t, addr)
			cl.writeAll(r)
			cl.expectClosedAfter(http.MethodGet, http.StatusBadRequest)
		}
		cl := dial(t, addr)
		cl.writeAll("GET /a.html HTTP/1.1\r\nHost: x\r\nExpect: later\r\n\r\n")
		cl.expectClosedAfter(http.MethodGet, http.StatusExpectationFailed)
		assert.Empty(t, files.handled())
	})

	// Ensure pipelined requests are all answered, in order, and counted
	// and logged as handled ones are.
	t.Run("PipelinedStatsAndLog", func(t *testing.T) {
		files := newPreparedFiles("body")
		var log testkit.LogBuffer
		addr, s := startServer(t, gameserver.Config{Handler: files, AccessLog: &log})
		cl := dial(t, addr)
		cl.writeAll(strings.Repeat("GET /a.html HTTP/1.1\r\nHost: x\r\n\r\n", 3) + "\r\nHEAD /a.html HTTP/1.1\r\nHost: x\r\n\r\n")
		for range 3 {
			_, body := cl.readResponse(http.MethodGet)
			assert.Equal(t, "body", body)
		}
		resp, body := cl.readResponse(http.MethodHead)
		assert.Equal(t, "4", resp.Header.Get("Content-Length"))
		assert.Empty(t, body)
		eventually(t, func() bool { return strings.Count(log.String(), "\n") == 4 }, "4 access log lines, got %q", log.String())
		assert.Contains(t, log.String(), `"GET /a.html HTTP/1.1" 200 4`)
		assert.Contains(t, log.String(), `"HEAD /a.html HTTP/1.1" 200 -`)
		st := s.Stats()
		assert.Equal(t, uint64(4), st.Requests)
		assert.Equal(t, uint64(4), st.Responses[2])
	})

	// Ensure a body larger than what is copied behind the header is sent
	// whole, to two connections at once.
	t.Run("LargeBody", func(t *testing.T) {
		files := newPreparedFiles(string(pattern(bigSize / 8)))
		addr, _ := startServer(t, gameserver.Config{Handler: files})
		a, b := dial(t, addr), dial(t, addr)
		a.writeAll("GET /a.html HTTP/1.1\r\nHost: x\r\n\r\n")
		b.writeAll("GET /a.html HTTP/1.1\r\nHost: x\r\n\r\n")
		for _, cl := range []*client{a, b} {
			_, body := cl.readResponse(http.MethodGet)
			require.Equal(t, patternSum(bigSize/8), sha256.Sum256([]byte(body)))
		}
	})
}

// TestPrepare checks the response Prepare builds, as a handler would frame it.
func TestPrepare(t *testing.T) {
	// Ensure the sniffed Content-Type and the length are added, framing
	// fields of the caller's are dropped, and Date and Server are added by
	// the loop unless given.
	files := &preparedFiles{header: http.Header{"Server": {"files"}, "Content-Length": {"99"}, "Connection": {"close"}}, body: []byte("<html>")}
	files.resp = gameserver.Prepare(files.header, files.body)
	addr, _ := startServer(t, gameserver.Config{Handler: files})
	cl := dial(t, addr)
	cl.writeAll("GET /a.html HTTP/1.1\r\nHost: x\r\n\r\n")
	raw := cl.readRaw(http.MethodGet)
	resp := parseHead(t, raw)
	assert.Equal(t, "6", resp.Header.Get("Content-Length"))
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, []string{"files"}, resp.Header.Values("Server"))
	assert.NotEmpty(t, resp.Header.Get("Date"))
	assert.Empty(t, resp.Header.Get("Connection"))
	assert.True(t, strings.HasSuffix(raw, "\r\n\r\n<html>"), raw)
	assert.Empty(t, files.handled())
}
