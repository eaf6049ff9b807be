package gameserver_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// okBody is okResponse for echoHandler.
func okBody(body string) string { return okResponse("application/octet-stream", body) }

func TestRequestBody(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, gameserver.Config{Handler: echoHandler()})
	const next = "GET /next HTTP/1.1\r\nHost: test\r\n\r\n"
	for _, tc := range []struct {
		name, req, body string
	}{
		{"ContentLength", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 11\r\n\r\nhello world", "hello world"},
		{"ContentLengthZero", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n", ""},
		{"Chunked", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n1;name=value\r\n \r\nA\r\n0123456789\r\n00b\r\nhello world\r\n0\r\n\r\n",
			"hello 0123456789hello world"},
		{"ChunkedTrailer", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n", "abc"},
		{"ChunkedEmpty", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", ""},
		{"HTTP10ContentLength", "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\nabc", "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure the handler gets the decoded body whole, and the
			// request pipelined behind it is framed from the right byte.
			cl := dial(t, addr)
			cl.writeAll(tc.req + next)
			raw := cl.readRaw(http.MethodPost)
			if strings.Contains(tc.req, "HTTP/1.0") {
				// HTTP/1.0 or 1.1 in the status line are both allowed
				// (RFC 9110 section 6.2); keep-alive must be confirmed.
				require.Contains(t, raw, "\r\nConnection: keep-alive\r\n")
				raw = strings.Replace(raw, "Connection: keep-alive\r\n", "", 1)
				raw = strings.Replace(raw, "HTTP/1.0 ", "HTTP/1.1 ", 1)
			}
			assert.Equal(t, okBody(tc.body), normalize(raw))
			assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodGet)))
		})
	}
}

func TestRequestBodyInPieces(t *testing.T) {
	t.Parallel()
	// Ensure 1 MiB bodies arriving in many writes, with Content-Length and
	// chunked, reach the handler byte-identical.
	const n = 1 << 20
	addr, _ := startServer(t, gameserver.Config{Handler: echoHandler()})
	body := string(pattern(n))

	cl := dial(t, addr)
	cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n")
	for i := 0; i < n; i += 100_000 {
		cl.writeAll(body[i:min(i+100_000, n)])
	}
	resp, got := cl.readResponse(http.MethodPost)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, patternSum(n), sha256.Sum256([]byte(got)))

	cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := 0; i < n; i += 30_000 {
		piece := body[i:min(i+30_000, n)]
		cl.writeAll(strconv.FormatInt(int64(len(piece)), 16) + "\r\n" + piece + "\r\n")
	}
	cl.writeAll("0\r\n\r\n")
	resp, got = cl.readResponse(http.MethodPost)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, patternSum(n), sha256.Sum256([]byte(got)))
}

func TestByteAtATime(t *testing.T) {
	t.Parallel()
	// Ensure requests arriving one byte per segment (Nagle is off, so
	// each write is its own segment) are framed as if sent whole: a
	// chunked POST with a trailer, then a GET.
	addr, _ := startServer(t, gameserver.Config{Handler: echoHandler()})
	cl := dial(t, addr)
	req := "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n"
	for i := range len(req) {
		cl.writeAll(req[i : i+1])
	}
	assert.Equal(t, okBody("hello world"), normalize(cl.readRaw(http.MethodPost)))
	assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodGet)))
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(echoHandler()), MaxBodyBytes: 16})
	const post = "POST /big HTTP/1.1\r\nHost: test\r\n"
	const sixteen = "0123456789abcdef"

	t.Run("AtLimit", func(t *testing.T) {
		// Ensure a body of exactly MaxBodyBytes is accepted, both ways.
		cl := dial(t, addr)
		cl.writeAll(post + "Content-Length: 16\r\n\r\n" + sixteen)
		assert.Equal(t, okBody(sixteen), normalize(cl.readRaw(http.MethodPost)))
		cl.writeAll(post + "Transfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n")
		assert.Equal(t, okBody(sixteen), normalize(cl.readRaw(http.MethodPost)))
	})
	for _, tc := range []struct{ name, req string }{
		{"DeclaredWithBody", post + "Content-Length: 17\r\n\r\n" + sixteen + "x"},
		// The declared length alone decides: the body is never waited for.
		{"DeclaredNoBodyYet", post + "Content-Length: 17\r\n\r\n"},
		{"DeclaredHuge", post + "Content-Length: 99999999999\r\n\r\n"},
		{"ChunkedGrowth", post + "Transfer-Encoding: chunked\r\n\r\n10\r\n" + sixteen + "\r\n1\r\nx\r\n0\r\n\r\n"},
		{"ChunkedOneBigChunk", post + "Transfer-Encoding: chunked\r\n\r\n11\r\n" + sixteen + "x\r\n0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a body over MaxBodyBytes gets 413 and the connection
			// closed, without calling the handler (RFC 9110 section 15.5.14).
			cl := dial(t, addr)
			cl.writeAll(tc.req)
			resp := cl.expectClosedAfter(http.MethodPost, http.StatusRequestEntityTooLarge)
			assert.True(t, resp.Close, "Connection: close")
		})
	}
	assert.Equal(t, []string{"/big", "/big"}, calls.seen(), "only the AtLimit requests were served")
}

func TestNoBodyAccepted(t *testing.T) {
	t.Parallel()
	// Ensure negative MaxBodyBytes refuses any non-empty body with 413 and
	// still serves requests without one.
	addr, _ := startServer(t, gameserver.Config{Handler: echoHandler(), MaxBodyBytes: -1})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\nPOST / HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n")
	assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodGet)))
	assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodPost)))
	cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1\r\n\r\nx")
	cl.expectClosedAfter(http.MethodPost, http.StatusRequestEntityTooLarge)
}

// continueLine is the interim response to "Expect: 100-continue".
const continueLine = "HTTP/1.1 100 Continue\r\n\r\n"

func TestExpectContinue(t *testing.T) {
	t.Parallel()
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(echoHandler()), MaxBodyBytes: 16})

	for _, expect := range []string{"100-continue", "100-Continue"} {
		t.Run(expect, func(t *testing.T) {
			// Ensure the 100 arrives before the client sends the body, then
			// the final response; the expectation is case-insensitive (RFC
			// 9110 section 10.1.1).
			cl := dial(t, addr)
			cl.writeAll("POST /e HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nExpect: " + expect + "\r\n\r\n")
			interim := make([]byte, len(continueLine))
			_, err := io.ReadFull(cl.br, interim)
			require.NoError(t, err)
			require.Equal(t, continueLine, string(interim))
			cl.writeAll("he")
			cl.writeAll("llo")
			assert.Equal(t, okBody("hello"), normalize(cl.readRaw(http.MethodPost)))
			// 100 Continue went out once: the next response is final.
			cl.writeAll("GET /e HTTP/1.1\r\nHost: test\r\n\r\n")
			assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodGet)))
		})
	}

	t.Run("Chunked", func(t *testing.T) {
		// Ensure a chunked body is waited for with 100 Continue too.
		cl := dial(t, addr)
		cl.writeAll("POST /e HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
		assert.Equal(t, continueLine, cl.readRaw(http.MethodPost))
		cl.writeAll("5\r\nhello\r\n0\r\n\r\n")
		assert.Equal(t, okBody("hello"), normalize(cl.readRaw(http.MethodPost)))
	})

	t.Run("NoBody", func(t *testing.T) {
		// Ensure a request with nothing to wait for is answered at once,
		// without an interim response.
		cl := dial(t, addr)
		cl.writeAll("POST /e HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n")
		assert.Equal(t, okBody(""), normalize(cl.readRaw(http.MethodPost)))
	})

	t.Run("OverLimit", func(t *testing.T) {
		// Ensure a declared length over MaxBodyBytes gets 413 instead of
		// 100, so the client never sends the body.
		cl := dial(t, addr)
		cl.writeAll("POST /over HTTP/1.1\r\nHost: test\r\nContent-Length: 17\r\nExpect: 100-continue\r\n\r\n")
		raw := cl.readUntilEOF()
		assert.True(t, strings.HasPrefix(raw, "HTTP/1.1 413 "), "got %q", raw)
	})

	t.Run("OtherExpectation", func(t *testing.T) {
		// Ensure an expectation other than 100-continue gets 417 (RFC 9110
		// section 10.1.1) without calling the handler.
		cl := dial(t, addr)
		cl.writeAll("POST /other HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nExpect: 200-ok\r\n\r\nhello")
		resp, _ := cl.readResponse(http.MethodPost)
		assert.Equal(t, http.StatusExpectationFailed, resp.StatusCode)
	})

	t.Run("HTTP10Ignored", func(t *testing.T) {
		// Ensure 100-continue in an HTTP/1.0 request is ignored (RFC 9110
		// section 10.1.1 MUST): no interim response, just the answer.
		cl := dial(t, addr)
		cl.writeAll("POST /e HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello")
		raw := cl.readUntilEOF()
		assert.False(t, strings.HasPrefix(raw, "HTTP/1.1 100"), "interim response to HTTP/1.0: %q", raw)
		resp := parseHead(t, raw)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, strings.HasSuffix(raw, "\r\n\r\nhello"), "got %q", raw)
	})
	assert.Equal(t, []string{"/e", "/e", "/e", "/e", "/e", "/e", "/e"}, calls.seen())
}

// badRequests are requests RFC 9112 requires (or our contract chooses) to
// refuse with 400, each followed by a request that must never be served.
var badRequests = []struct{ name, req string }{
	{"ContentLengthAndTransferEncoding", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"TransferEncodingAndContentLength", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"},
	{"DuplicateContentLengthDiffers", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"},
	{"ContentLengthListDiffers", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 3, 4\r\n\r\nabcd"},
	{"ContentLengthNotDigits", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 0x3\r\n\r\nabc"},
	{"ContentLengthSigned", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: +3\r\n\r\nabc"},
	{"ContentLengthNegative", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: -1\r\n\r\n"},
	{"ContentLengthOverflow", "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 99999999999999999999999\r\n\r\n"},
	{"SpaceBeforeColon", "GET / HTTP/1.1\r\nHost: test\r\nX-Thing : 1\r\n\r\n"},
	{"SpaceBeforeColonTransferEncoding", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n"},
	{"ObsFold", "GET / HTTP/1.1\r\nHost: test\r\nX-Thing: a\r\n b\r\n\r\n"},
	{"ObsFoldTab", "GET / HTTP/1.1\r\nHost: test\r\nX-Thing: a\r\n\tb\r\n\r\n"},
	{"WhiteSpaceBeforeFirstField", "GET / HTTP/1.1\r\n Host: test\r\n\r\n"},
	{"BareCRInField", "GET / HTTP/1.1\r\nHost: test\r\nX-Thing: a\rb\r\n\r\n"},
	{"BareCRLineEnd", "GET / HTTP/1.1\r\nHost: test\rX-Thing: b\r\n\r\n"},
	{"BareCRInRequestLine", "GET /\r HTTP/1.1\r\nHost: test\r\n\r\n"},
	{"NoColon", "GET / HTTP/1.1\r\nHost: test\r\nX-Thing\r\n\r\n"},
	{"NoHost", "GET / HTTP/1.1\r\n\r\n"},
	{"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
	{"MalformedRequestLine", "GET /\r\nHost: test\r\n\r\n"},
	{"ChunkSizeNotHex", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
	{"ChunkSizeEmpty", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n"},
	{"ChunkSizeNegative", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n"},
	{"ChunkSizePrefixed", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n"},
	{"ChunkSizeOverflow", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n"},
	// White space after chunk-size is accepted as net/http does (chunked.go),
	// but not before a chunk extension's ";".
	{"ChunkSizeSpaceBeforeExt", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5 ;x=1\r\nhello\r\n0\r\n\r\n"},
	{"ChunkDataNoCRLF", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n"},
	{"ChunkDataTooLong", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n"},
	{"ChunkSizeBareLF", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"},
	{"ChunkedTwice", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"},
	{"TransferEncodingHTTP10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
}

func TestBadRequest(t *testing.T) {
	t.Parallel()
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(echoHandler())})
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a malformed or ambiguous request gets 400 with
			// Connection: close, and the server closes the connection
			// without reading on (RFC 9112 sections 2.2, 5.1, 5.2, 6.3, 7.1).
			cl := dial(t, addr)
			cl.writeAll(tc.req + "GET /smuggled HTTP/1.1\r\nHost: test\r\n\r\n")
			resp := cl.expectClosedAfter(http.MethodGet, http.StatusBadRequest)
			assert.True(t, resp.Close, "Connection: close")
		})
	}
	assert.Empty(t, calls.seen(), "handler called for a bad request")
}

func TestSmuggling(t *testing.T) {
	t.Parallel()
	// Ensure the classic desync attempts (CL.TE, TE.CL, CL.CL, TE with a
	// space before the colon) never get their hidden request served: a
	// front end that honoured the other framing would forward it as part
	// of the first request's body.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(pathHandler())})
	const hidden = "GET /smuggled HTTP/1.1\r\nHost: test\r\n\r\n"
	for name, req := range map[string]string{
		"CL.TE": "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: " + strconv.Itoa(5+len(hidden)) +
			"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden,
		"TE.CL": "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n" +
			strconv.FormatInt(int64(len(hidden)), 16) + "\r\n" + hidden + "\r\n0\r\n\r\n",
		"CL.CL": "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nContent-Length: " +
			strconv.Itoa(len(hidden)) + "\r\n\r\n" + hidden,
		"TE.space": "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: " + strconv.Itoa(5+len(hidden)) +
			"\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + hidden,
		"TE.obsfold": "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: " + strconv.Itoa(5+len(hidden)) +
			"\r\nX-Pad: x\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden,
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		raw := cl.readUntilEOF()
		assert.True(t, strings.HasPrefix(raw, "HTTP/1.1 400 "), "%s: got %q", name, raw)
	}
	assert.NotContains(t, calls.seen(), "/smuggled")
	assert.Empty(t, calls.seen())
}

func TestHeaderTooLarge(t *testing.T) {
	t.Parallel()
	// Ensure a header section over MaxHeaderBytes gets 431 and the
	// connection closed (RFC 6585 section 5), whether the section ends or
	// not, as does a trailer section over it, while one under it is served.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(pathHandler()), MaxHeaderBytes: 1024})
	small := "GET /small HTTP/1.1\r\nHost: test\r\nX-Pad: " + strings.Repeat("a", 900) + "\r\n\r\n"
	cl := dial(t, addr)
	cl.writeAll(small)
	assert.Equal(t, okText("GET /small"), normalize(cl.readRaw(http.MethodGet)))

	for _, req := range []string{
		"GET /big HTTP/1.1\r\nHost: test\r\nX-Pad: " + strings.Repeat("a", 2000) + "\r\n\r\n",
		"GET /big HTTP/1.1\r\nHost: test\r\nX-Pad: " + strings.Repeat("a", 2000), // never ends
		"GET /big HTTP/1.1\r\nHost: test\r\n" + strings.Repeat("X-Pad: a\r\n", 200) + "\r\n",
		"POST /big HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Pad: " + // and a trailer section
			strings.Repeat("a", 2000) + "\r\n\r\n",
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		resp := cl.expectClosedAfter(http.MethodGet, http.StatusRequestHeaderFieldsTooLarge)
		assert.True(t, resp.Close, "Connection: close")
	}
	// Ensure a request-line that does not end within the limit, whole or
	// not, gets 414 URI Too Long instead (RFC 9112 section 3).
	for _, req := range []string{
		"GET /big?" + strings.Repeat("q", 2000) + " HTTP/1.1\r\nHost: test\r\n\r\n",
		"GET /big?" + strings.Repeat("q", 2000),
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		resp := cl.expectClosedAfter(http.MethodGet, http.StatusRequestURITooLong)
		assert.True(t, resp.Close, "Connection: close")
	}
	assert.Equal(t, []string{"/small"}, calls.seen())
}

func TestHeaderFieldCap(t *testing.T) {
	t.Parallel()
	// Ensure a header section of more than 256 field lines gets 431 and the
	// connection closed under the default MaxHeaderBytes, as does a trailer
	// section of as many, while 256 are served.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(pathHandler())})
	fields := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X-%d: a\r\n", i)
		}
		return b.String()
	}
	cl := dial(t, addr)
	cl.writeAll("GET /256 HTTP/1.1\r\nHost: test\r\n" + fields(255) + "\r\n")
	assert.Equal(t, okText("GET /256"), normalize(cl.readRaw(http.MethodGet)))
	for _, req := range []string{
		"GET /257 HTTP/1.1\r\nHost: test\r\n" + fields(256) + "\r\n",
		"GET /many HTTP/1.1\r\nHost: test\r\n" + fields(5000), // never ends
		"POST /trailer HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + fields(257) + "\r\n",
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		raw := cl.readUntilEOF()
		assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, parseHead(t, raw).StatusCode)
		assert.True(t, strings.HasSuffix(raw, "too many header fields") || strings.HasSuffix(raw, "too many trailer fields"), "got %q", raw)
	}
	assert.Equal(t, []string{"/256"}, calls.seen())
}

func TestUnsupported(t *testing.T) {
	t.Parallel()
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(pathHandler())})
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		// Ensure a transfer coding other than chunked gets 501 (RFC 9112
		// section 6.1 SHOULD).
		{"Gzip", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip\r\n\r\nxxxx", http.StatusNotImplemented},
		{"GzipChunked", "POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", http.StatusNotImplemented},
		// Ensure a major version other than 1 gets 505 (RFC 9110 15.6.6).
		{"HTTP2", "GET / HTTP/2.0\r\nHost: test\r\n\r\n", http.StatusHTTPVersionNotSupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := dial(t, addr)
			cl.writeAll(tc.req)
			cl.expectClosedAfter(http.MethodGet, tc.status)
		})
	}
	assert.Empty(t, calls.seen())
}

// fixtureVerdict returns the status a fixture's last request must get
// (0 for "ok": every request is served) and whether it is a CONNECT, after
// whose 2xx the connection is a tunnel, not HTTP.
func fixtureVerdict(t testing.TB, name string, raw []byte) (status int, connect bool) {
	t.Helper()
	verdict, _, _ := strings.Cut(name, "-")
	connect = strings.HasPrefix(string(raw), "CONNECT ")
	if verdict == "ok" {
		return 0, connect
	}
	status, err := strconv.Atoi(verdict)
	require.NoError(t, err, "fixture name %q", name)
	return status, connect
}

func TestRequestFixtures(t *testing.T) {
	t.Parallel()
	// Ensure every raw request fixture (testdata/requests/README.md) gets,
	// over a real connection, the verdict its name gives: "ok" fixtures
	// are all answered 200, and a request pipelined after them too (unless
	// the fixture ends the connection); refused ones get their status for
	// the last request, then the connection closes and the request
	// pipelined after it is never served.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(textHandler("ok"))})
	files, err := filepath.Glob("testdata/requests/*.http")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			want, connect := fixtureVerdict(t, name, raw)
			marker := "/after-" + name
			cl := dial(t, addr)
			if connect && want == 0 {
				cl.writeAll(string(raw))
				resp := parseHead(t, cl.readHead())
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				return
			}
			cl.writeAll(string(raw) + "GET " + marker + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
			var statuses []int
			require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(ioTimeout)))
			for {
				if _, err := cl.br.Peek(1); errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
					break // the server closed: after a refusal, or Connection: close
				}
				resp, err := http.ReadResponse(cl.br, &http.Request{Method: http.MethodGet})
				require.NoError(t, err, "response %d", len(statuses)+1)
				_, err = io.Copy(io.Discard, resp.Body)
				require.NoError(t, err)
				if resp.StatusCode != http.StatusContinue {
					statuses = append(statuses, resp.StatusCode)
				}
			}
			require.NotEmpty(t, statuses)
			last := len(statuses) - 1
			for i, code := range statuses[:last] {
				assert.Equal(t, http.StatusOK, code, "response %d of %v", i+1, statuses)
			}
			if want == 0 {
				assert.Equal(t, http.StatusOK, statuses[last], "last of %v", statuses)
			} else {
				assert.Equal(t, want, statuses[last], "last of %v", statuses)
				assert.NotContains(t, calls.seen(), marker, "request after a refused one was served")
			}
		})
	}
}
