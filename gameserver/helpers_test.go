package gameserver_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/require"
)

// ioTimeout bounds every blocking read or write a test makes. It is an upper
// bound for a hung server, never a speed requirement.
const ioTimeout = 10 * time.Second

// startServer serves cfg on a fresh 127.0.0.1:0 listener and returns the
// address and the Server. Cleanup shuts the server down (graceful, bounded)
// and asserts Serve returned ErrServerClosed. Connections made with dial are
// closed before that, because t.Cleanup runs functions last-in first-out.
func startServer(t testing.TB, cfg gameserver.Config) (string, *gameserver.Server) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	s := gameserver.New(cfg)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		select {
		case err := <-served:
			if !errors.Is(err, gameserver.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(ioTimeout):
			t.Error("Serve did not return after Shutdown")
		}
	})
	return addr, s
}

// client is one raw TCP connection to the server under test, with a buffered
// reader so responses can be read one at a time, as parsed http.Responses or
// as exact bytes.
type client struct {
	t  testing.TB
	c  *net.TCPConn
	br *bufio.Reader
}

// dial connects to addr; the connection is closed at cleanup.
func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c.(*net.TCPConn), br: bufio.NewReader(c)}
}

// writeAll sends s whole, within ioTimeout.
func (cl *client) writeAll(s string) {
	cl.t.Helper()
	require.NoError(cl.t, cl.c.SetWriteDeadline(time.Now().Add(ioTimeout)))
	_, err := io.WriteString(cl.c, s)
	require.NoError(cl.t, err, "writing request bytes")
}

// readResponse reads one response to a request with the given method and
// returns it with its body read whole into body. The body may take longer
// than ioTimeout as a whole (megabytes on a loaded machine), but not
// ioTimeout without progress.
func (cl *client) readResponse(method string) (*http.Response, string) {
	cl.t.Helper()
	require.NoError(cl.t, cl.c.SetReadDeadline(time.Now().Add(ioTimeout)))
	resp, err := http.ReadResponse(cl.br, &http.Request{Method: method})
	require.NoError(cl.t, err, "reading response head")
	var body []byte
	chunk := make([]byte, 64<<10)
	for err == nil {
		require.NoError(cl.t, cl.c.SetReadDeadline(time.Now().Add(ioTimeout)))
		var n int
		n, err = resp.Body.Read(chunk)
		body = append(body, chunk[:n]...)
	}
	if err == io.EOF {
		err = nil
	}
	require.NoError(cl.t, err, "reading response body")
	require.NoError(cl.t, resp.Body.Close())
	return resp, string(body)
}

// get sends a GET for path on the keep-alive connection and returns the
// response and its body.
func (cl *client) get(path string) (*http.Response, string) {
	cl.t.Helper()
	cl.writeAll("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n")
	return cl.readResponse(http.MethodGet)
}

// readRaw reads exactly the bytes of one response to a request with the
// given method: the head, then the body as framed by Content-Length, chunked
// coding (chunk framing kept) or the connection's end. 1xx, 204, 304 and
// HEAD responses end with their head.
func (cl *client) readRaw(method string) string {
	cl.t.Helper()
	require.NoError(cl.t, cl.c.SetReadDeadline(time.Now().Add(ioTimeout)))
	head := cl.readHead()
	resp := parseHead(cl.t, head)
	code := resp.StatusCode
	switch {
	case method == http.MethodHead || code/100 == 1 || code == 204 || code == 304:
		return head
	case len(resp.TransferEncoding) > 0:
		require.Equal(cl.t, []string{"chunked"}, resp.TransferEncoding)
		return head + cl.readChunkedRaw()
	case resp.Header.Get("Content-Length") != "":
		n, err := strconv.Atoi(resp.Header.Get("Content-Length"))
		require.NoError(cl.t, err)
		body := make([]byte, n)
		_, err = io.ReadFull(cl.br, body)
		require.NoError(cl.t, err, "reading %d body bytes", n)
		return head + string(body)
	default:
		rest, err := io.ReadAll(cl.br)
		require.NoError(cl.t, err, "reading close-delimited body")
		return head + string(rest)
	}
}

// readHead reads up to and including the blank line ending a response head.
func (cl *client) readHead() string {
	cl.t.Helper()
	var b strings.Builder
	for !strings.HasSuffix(b.String(), "\r\n\r\n") {
		line, err := cl.br.ReadString('\n')
		b.WriteString(line)
		require.NoError(cl.t, err, "reading response head, got %q", b.String())
	}
	return b.String()
}

// readChunkedRaw reads a chunked body through its last chunk and trailer
// section, returning the bytes exactly as received.
func (cl *client) readChunkedRaw() string {
	cl.t.Helper()
	var b strings.Builder
	for {
		line, err := cl.br.ReadString('\n')
		b.WriteString(line)
		require.NoError(cl.t, err, "reading chunk size, got %q", b.String())
		size, err := strconv.ParseUint(strings.TrimRight(strings.SplitN(line, ";", 2)[0], "\r\n"), 16, 63)
		require.NoError(cl.t, err, "chunk size line %q", line)
		if size == 0 {
			break
		}
		data := make([]byte, size+2)
		_, err = io.ReadFull(cl.br, data)
		require.NoError(cl.t, err, "reading chunk data")
		b.Write(data)
	}
	for { // trailer section, then the final CRLF
		line, err := cl.br.ReadString('\n')
		b.WriteString(line)
		require.NoError(cl.t, err, "reading trailer section")
		if line == "\r\n" {
			return b.String()
		}
	}
}

// readUntilEOF reads until the server closes the connection (EOF or reset)
// and returns what arrived. It fails the test if the server keeps the
// connection open past ioTimeout.
func (cl *client) readUntilEOF() string {
	cl.t.Helper()
	b, err := readToClose(cl.c, cl.br)
	require.NoError(cl.t, err, "waiting for the server to close; got %q", b)
	return string(b)
}

// readToClose reads r until EOF or a connection reset, within ioTimeout;
// err is nil for either ending and the read error otherwise.
func readToClose(c net.Conn, r io.Reader) ([]byte, error) {
	if err := c.SetReadDeadline(time.Now().Add(ioTimeout)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(r)
	if errors.Is(err, syscall.ECONNRESET) {
		err = nil
	}
	return buf.Bytes(), err
}

// expectClosedAfter reads one response, asserts its status code and that the
// server then closes the connection with nothing more.
func (cl *client) expectClosedAfter(method string, code int) *http.Response {
	cl.t.Helper()
	resp, _ := cl.readResponse(method)
	require.Equal(cl.t, code, resp.StatusCode, "status")
	require.Empty(cl.t, cl.readUntilEOF(), "bytes after the response")
	return resp
}

// parseHead parses the head of raw response bytes; the body is not read.
// Transfer-Encoding is in the result's TransferEncoding, not its Header.
func parseHead(t testing.TB, raw string) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), &http.Request{Method: http.MethodHead})
	require.NoError(t, err, "parsing head %q", raw)
	return resp
}

// varyingHeaders match the header fields whose values are the server's to
// choose: Date (checked by TestDateAndServerHeaders) and Server.
var varyingHeaders = regexp.MustCompile(`(?m)^(Date|Server): [^\r\n]*\r$`)

// normalize returns the raw bytes of one response in a canonical form for
// exact comparison: the values of Date and Server become "X", and the header
// fields are sorted, since the order of differently named fields carries no
// meaning (RFC 9110 section 5.3). The status line, field values and body are
// kept byte for byte.
func normalize(raw string) string {
	head, body, found := strings.Cut(raw, "\r\n\r\n")
	if !found {
		return raw
	}
	head = varyingHeaders.ReplaceAllString(head+"\r\n", "$1: X\r")
	lines := strings.Split(strings.TrimSuffix(head, "\r\n"), "\r\n")
	sort.Strings(lines[1:])
	return strings.Join(lines, "\r\n") + "\r\n\r\n" + body
}

// pattern returns n deterministic bytes that are not periodic in any small
// power of two, so a dropped, repeated or reordered block changes the hash.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range min(251, n) {
		b[i] = byte(i)
	}
	for filled := 251; filled < n; filled *= 2 { // whole periods: fast under -race
		copy(b[filled:], b[:filled])
	}
	return b
}

// patternSum is the SHA-256 of pattern(n).
func patternSum(n int) [sha256.Size]byte { return sha256.Sum256(pattern(n)) }

// piecesHandler answers with pattern(n) written in pieces of size bytes,
// declaring no length.
func piecesHandler(n, size int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for p := pattern(n); len(p) > 0; p = p[min(size, len(p)):] {
			w.Write(p[:min(size, len(p))])
		}
	})
}

// textHandler answers every request with body as text/plain, Content-Type
// set so servers that sniff and servers that do not agree.
func textHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body)
	})
}

// pathHandler answers each request with its method and request target, so
// responses can be matched to requests.
func pathHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Method+" "+r.URL.RequestURI())
	})
}

// echoHandler answers with the request body it received, whole.
func echoHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading body: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(body)
	})
}

// counter counts handler calls and remembers the request targets, safe for
// use from the loop and the test goroutine at once.
type counter struct {
	mu      sync.Mutex
	targets []string
}

// wrap returns h counting each call into c.
func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.targets = append(c.targets, r.URL.RequestURI())
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// seen returns the request targets served so far, in order.
func (c *counter) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.targets...)
}

// eventually polls cond every 10ms until it holds or ioTimeout passes. It is
// a bounded wait for the server to reach a state, not a speed assertion.
func eventually(t testing.TB, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, ioTimeout, 10*time.Millisecond, append([]any{msg}, args...)...)
}

// waitClosed waits for ch to close, bounded by ioTimeout.
func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(ioTimeout):
		t.Fatalf("%s never ran", what)
	}
}
