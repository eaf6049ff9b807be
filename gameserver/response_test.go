package gameserver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFraming(t *testing.T) {
	// Ensure the body delimitation follows RFC 9112 section 6: an exact
	// Content-Length when known, chunked for HTTP/1.1 otherwise,
	// close-delimited for HTTP/1.0, none for HEAD, 1xx, 204 and 304.
	for _, tc := range []struct {
		name     string
		w        response
		final    bool
		frame    frame
		declared int64
	}{
		{"FinishedBody", response{status: 200, written: 12, declared: -1, proto11: true}, true, frameLength, 12},
		{"FinishedEmpty", response{status: 200, declared: -1, proto11: true}, true, frameLength, 0},
		{"Declared", response{status: 200, written: 3, declared: 10, proto11: true}, false, frameLength, 10},
		{"Flushed11", response{status: 200, written: 3, declared: -1, proto11: true}, false, frameChunked, -1},
		{"Flushed10", response{status: 200, written: 3, declared: -1}, false, frameClose, -1},
		{"HandlerChunked", response{status: 200, written: 3, declared: 3, proto11: true, teChunked: true}, true, frameChunked, -1},
		{"HeadFinished", response{status: 200, written: 40, declared: -1, head: true, proto11: true}, true, frameLength, 40},
		{"HeadNothingWritten", response{status: 200, declared: -1, head: true, proto11: true}, true, frameNone, -1},
		{"HeadFlushed", response{status: 200, written: 3, declared: -1, head: true, proto11: true}, false, frameNone, -1},
		{"NoContent", response{status: 204, declared: -1, proto11: true}, true, frameNone, -1},
		{"NotModified", response{status: 304, declared: 99, proto11: true}, true, frameNone, -1},
		{"ResetContent", response{status: 205, declared: -1, proto11: true}, false, frameLength, 0},
		{"ResetContentChunked", response{status: 205, declared: -1, teChunked: true}, true, frameLength, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, n := tc.w.framing(tc.final)
			assert.Equal(t, tc.frame, f, "frame")
			assert.Equal(t, tc.declared, n, "Content-Length")
		})
	}
}

func TestSniff(t *testing.T) {
	// Ensure Content-Type is sniffed as net/http does: only with a body,
	// without a handler Content-Type (even an empty one) or Content-Encoding.
	html := []byte("<!DOCTYPE html><p>hi")
	for _, tc := range []struct {
		name string
		w    response
		want string
	}{
		{"HTML", response{status: 200, body: html}, "text/html; charset=utf-8"},
		{"Empty", response{status: 200}, ""},
		{"HandlerType", response{status: 200, body: html, hasType: true}, ""},
		{"Encoded", response{status: 200, body: html, hasEncoding: true}, ""},
		{"NoBodyStatus", response{status: 304, body: html}, ""},
		{"FirstSpilled", response{status: 200, body: []byte("zz"), spill: [][]byte{[]byte("%PDF-")}}, "application/pdf"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.w.sniff()) })
	}
	// The reference: what net/http itself sends for the same body.
	rec := httptest.NewRecorder()
	rec.Write(html)
	assert.Equal(t, rec.Header().Get("Content-Type"), (&response{status: 200, body: html}).sniff())
}

func TestHandlerHeader(t *testing.T) {
	// Ensure handler fields are written sorted, values cannot split the
	// response, invalid names are dropped, and the framing fields are left
	// to the server but noted.
	w := &response{header: http.Header{
		"X-B":               {"two\r\nInjected: yes"},
		"X-A":               {" one "},
		"Bad Name":          {"x"},
		"Content-Length":    {"7"},
		"Connection":        {"keep-alive, close"},
		"Transfer-Encoding": {"chunked"},
		"Server":            {"mine"},
	}, declared: -1}
	got := string(w.appendHandlerHeader(nil, 200))
	assert.Equal(t, "Server: mine\r\nX-A: one\r\nX-B: two  Injected: yes\r\n", got)
	assert.Equal(t, int64(7), w.declared)
	assert.True(t, w.closeAfter)
	assert.True(t, w.teChunked)
	assert.True(t, w.hasServer)
	assert.False(t, w.hasDate)

	// A 304 carries no Content-Type (RFC 9110 section 15.4.5).
	w = &response{header: http.Header{"Content-Type": {"text/plain"}, "Etag": {`"x"`}}, declared: -1}
	assert.Equal(t, "Etag: \"x\"\r\n", string(w.appendHandlerHeader(nil, 304)))
	assert.True(t, w.hasType)
}

func TestStatusLine(t *testing.T) {
	assert.Equal(t, "HTTP/1.1 404 Not Found\r\n", string(appendStatusLine(nil, 404)))
	assert.Equal(t, "HTTP/1.1 599 status code 599\r\n", string(appendStatusLine(nil, 599)))
	assert.Equal(t, "HTTP/1.1 999 status code 999\r\n", string(appendStatusLine(nil, 999)))
}

func TestHasToken(t *testing.T) {
	assert.True(t, hasToken("keep-alive, Close", "close"))
	assert.True(t, hasToken("close", "close"))
	assert.False(t, hasToken("closed", "close"))
	assert.False(t, hasToken("", "close"))
}

func TestOutq(t *testing.T) {
	// Ensure queued bytes come out in order across copied pieces and
	// handed-over buffers, writev batches respect their byte limit, and
	// written pooled buffers return to the pool.
	c := testCore(t)
	var q outq
	var want bytes.Buffer
	small := []byte("header\r\n\r\n")
	big := c.getBuf()
	big = append(big, bytes.Repeat([]byte("b"), bufSize)...)
	q.write(small, c)
	want.Write(small)
	q.push(big)
	want.Write(big)
	long := bytes.Repeat([]byte("L"), bufSize+100) // spans two pooled buffers
	q.write(long, c)
	want.Write(long)
	require.Equal(t, want.Len(), q.n)

	var got bytes.Buffer
	for q.n > 0 {
		iov := q.iovecs(nil, 5000)
		n := 0
		for _, b := range iov {
			got.Write(b)
			n += len(b)
		}
		require.LessOrEqual(t, n, 5000)
		q.consume(n, c)
	}
	assert.Equal(t, want.Bytes(), got.Bytes())
	assert.Len(t, c.free, 4, "every pooled buffer back in the pool")
	assert.Empty(t, q.segs)
	assert.False(t, q.tailOpen)
}

func TestAccessLog(t *testing.T) {
	// Ensure lines follow the Common Log Format, with "-" for no body and
	// for a refused request, and quotes in the request line escaped.
	var out bytes.Buffer
	a := &accessLog{w: &out}
	a.setDate(time.Date(2026, 11, 30, 10, 27, 0, 0, time.FixedZone("", -7*3600)))
	req := httptest.NewRequest("GET", `/a"b?x=1`, nil)
	a.record("192.0.2.7:5555", req, 200, 2159)
	a.record("[2001:db8::1]:80", req, 304, 0)
	a.record("192.0.2.7:5555", nil, 400, 11)
	require.NoError(t, a.flush())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, `192.0.2.7 - - [30/Nov/2026:10:27:00 -0700] "GET /a\x22b?x=1 HTTP/1.1" 200 2159`, lines[0])
	assert.Equal(t, `2001:db8::1 - - [30/Nov/2026:10:27:00 -0700] "GET /a\x22b?x=1 HTTP/1.1" 304 -`, lines[1])
	assert.Equal(t, `192.0.2.7 - - [30/Nov/2026:10:27:00 -0700] "-" 400 11`, lines[2])
}
