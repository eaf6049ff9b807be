package gameserver_test

import (
	"crypto/sha256"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// okResponse is the canonical (normalize) form of a 200 response to
// HTTP/1.1 with body and Content-Type contentType.
func okResponse(contentType, body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) +
		"\r\nContent-Type: " + contentType + "\r\nDate: X\r\nServer: X\r\n\r\n" + body
}

// okText is okResponse for textHandler and pathHandler.
func okText(body string) string { return okResponse("text/plain", body) }

// abRequest is the request ab -k sends (ab.c: HTTP/1.0 with
// "Connection: Keep-Alive").
const abRequest = "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 127.0.0.1\r\n" +
	"User-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"

func TestPersistentHTTP11(t *testing.T) {
	t.Parallel()
	// Ensure an HTTP/1.1 connection persists by default (RFC 9112 section
	// 9.3) and each response is exactly framed by Content-Length.
	addr, _ := startServer(t, gameserver.Config{Handler: pathHandler()})
	cl := dial(t, addr)
	for _, path := range []string{"/a", "/b?x=1", "/c"} {
		cl.writeAll("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n")
		require.Equal(t, okText("GET "+path), normalize(cl.readRaw(http.MethodGet)))
	}
}

func TestHTTP10(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("hello")})

	t.Run("CloseByDefault", func(t *testing.T) {
		// Ensure an HTTP/1.0 request without keep-alive is answered and the
		// connection closed after the response (RFC 9112 section 9.3).
		cl := dial(t, addr)
		cl.writeAll("GET / HTTP/1.0\r\n\r\n")
		resp := cl.expectClosedAfter(http.MethodGet, http.StatusOK)
		assert.Equal(t, 1, resp.ProtoMajor)
		assert.NotContains(t, strings.ToLower(resp.Header.Get("Connection")), "keep-alive")
	})

	t.Run("KeepAliveAsAb", func(t *testing.T) {
		// Ensure ab -k's request (HTTP/1.0, Connection: Keep-Alive) gets
		// Connection: keep-alive and a Content-Length, and the connection
		// stays open for the next request: ab counts a keep-alive request
		// only then (ab.c reads "Keep-Alive"/"keep-alive" and Content-Length).
		cl := dial(t, addr)
		for range 3 {
			cl.writeAll(abRequest)
			resp, body := cl.readResponse(http.MethodGet)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.True(t, strings.EqualFold(resp.Header.Get("Connection"), "keep-alive"),
				"Connection header %q", resp.Header.Get("Connection"))
			require.Equal(t, "5", resp.Header.Get("Content-Length"))
			require.Equal(t, "hello", body)
		}
		// The same connection, now without keep-alive: answered, then closed.
		cl.writeAll("GET / HTTP/1.0\r\nHost: test\r\n\r\n")
		cl.expectClosedAfter(http.MethodGet, http.StatusOK)
	})
}

func TestHTTP10KeepAliveLargeUnknownLength(t *testing.T) {
	t.Parallel()
	// Ensure a keep-alive HTTP/1.0 client never gets a response it cannot
	// delimit: if the answer says keep-alive it carries Content-Length,
	// otherwise the body runs to the connection's close. Either way the
	// body arrives whole.
	const n = 1 << 20
	addr, _ := startServer(t, gameserver.Config{Handler: piecesHandler(n, 1000)})
	cl := dial(t, addr)
	cl.writeAll(abRequest)
	resp, body := cl.readResponse(http.MethodGet)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, patternSum(n), sha256.Sum256([]byte(body)))
	if strings.EqualFold(resp.Header.Get("Connection"), "keep-alive") {
		assert.Equal(t, strconv.Itoa(n), resp.Header.Get("Content-Length"))
	} else {
		assert.Empty(t, cl.readUntilEOF())
	}
}

func TestPipelining(t *testing.T) {
	t.Parallel()
	// Ensure requests sent in one write, with a body among them, are each
	// answered once, in order (RFC 9112 section 9.3.2).
	addr, _ := startServer(t, gameserver.Config{Handler: pathHandler()})
	cl := dial(t, addr)
	cl.writeAll("GET /1 HTTP/1.1\r\nHost: test\r\n\r\n" +
		"POST /2 HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\n\r\nbody" +
		"GET /3 HTTP/1.1\r\nHost: test\r\n\r\n" +
		"DELETE /4 HTTP/1.1\r\nHost: test\r\n\r\n")
	for _, want := range []string{"GET /1", "POST /2", "GET /3", "DELETE /4"} {
		require.Equal(t, okText(want), normalize(cl.readRaw(http.MethodGet)))
	}
}

func TestPipelinedResponseNotHeldBack(t *testing.T) {
	t.Parallel()
	// Ensure a finished response goes out while the next pipelined request
	// is still incomplete: the client waits for response 1 before sending
	// the rest of request 2.
	addr, _ := startServer(t, gameserver.Config{Handler: pathHandler()})
	cl := dial(t, addr)
	cl.writeAll("GET /1 HTTP/1.1\r\nHost: test\r\n\r\nGET /2 HTTP/1.1\r\nHo")
	require.Equal(t, okText("GET /1"), normalize(cl.readRaw(http.MethodGet)))
	cl.writeAll("st: test\r\n\r\n")
	require.Equal(t, okText("GET /2"), normalize(cl.readRaw(http.MethodGet)))
}

func TestConnectionClose(t *testing.T) {
	t.Parallel()
	// Ensure "Connection: close" is honoured (RFC 9112 section 9.6): the
	// response says Connection: close, the request pipelined after it is
	// not served, and the server closes the connection.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(pathHandler())})
	cl := dial(t, addr)
	cl.writeAll("GET /1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n" +
		"GET /2 HTTP/1.1\r\nHost: test\r\n\r\n")
	got := cl.readUntilEOF()
	assert.Equal(t, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 6\r\n"+
		"Content-Type: text/plain\r\nDate: X\r\nServer: X\r\n\r\nGET /1", normalize(got))
	assert.Equal(t, []string{"/1"}, calls.seen())
}

func TestHead(t *testing.T) {
	t.Parallel()
	// Ensure HEAD gets the header section GET would (Content-Length
	// included) and no body (RFC 9110 section 9.3.2), so the next pipelined
	// response follows at once.
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("hello world")})
	cl := dial(t, addr)
	cl.writeAll("HEAD / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, strings.TrimSuffix(okText("hello world"), "hello world"),
		normalize(cl.readRaw(http.MethodHead)))
	assert.Equal(t, okText("hello world"), normalize(cl.readRaw(http.MethodGet)))
}

// imfFixdate is RFC 9110 section 5.6.7's preferred date format.
var imfFixdate = regexp.MustCompile(`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} ` +
	`(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$`)

func TestDateAndServerHeaders(t *testing.T) {
	t.Parallel()
	// Ensure 2xx and 4xx responses carry a Date in IMF-fixdate (RFC 9110
	// sections 5.6.7 and 6.6.1) giving the current time, and a Server field.
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("hello")})
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: test\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n", // no Host: 400
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		resp, _ := cl.readResponse(http.MethodGet)
		date := resp.Header.Get("Date")
		require.Regexp(t, imfFixdate, date, "Date of %q", req)
		when, err := time.Parse(http.TimeFormat, date)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), when, 10*time.Minute, "Date is not the current time")
		assert.NotEmpty(t, resp.Header.Get("Server"), "Server header")
		assert.Len(t, resp.Header.Values("Date"), 1)
	}
}

func TestHalfClosedClient(t *testing.T) {
	t.Parallel()
	// Ensure a client that shuts down its sending side after the request
	// still gets the whole response, and then the server closes.
	const n = 1 << 20
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(pattern(n))
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	require.NoError(t, cl.c.CloseWrite())
	resp, body := cl.readResponse(http.MethodGet)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, patternSum(n), sha256.Sum256([]byte(body)))
	assert.Empty(t, cl.readUntilEOF())
}

func TestHalfClosedPipeline(t *testing.T) {
	t.Parallel()
	// Ensure a client that pipelines and then shuts down its sending side
	// gets every complete request answered, in order, nothing for a
	// request cut short, and then the close.
	addr, _ := startServer(t, gameserver.Config{Handler: pathHandler()})
	for _, tc := range []struct {
		tail string
		want []string
	}{
		{"GET /3 HTTP/1.1\r\nHost: test\r\n\r\n", []string{"GET /1", "POST /2", "GET /3"}},
		{"GET /3 HTTP/1.1\r\nHo", []string{"GET /1", "POST /2"}},
		{"POST /3 HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nabc", []string{"GET /1", "POST /2"}},
	} {
		cl := dial(t, addr)
		cl.writeAll("GET /1 HTTP/1.1\r\nHost: test\r\n\r\nPOST /2 HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi" + tc.tail)
		require.NoError(t, cl.c.CloseWrite())
		var want strings.Builder
		for _, body := range tc.want {
			want.WriteString(okText(body))
		}
		var got strings.Builder
		for range tc.want {
			got.WriteString(normalize(cl.readRaw(http.MethodGet)))
		}
		assert.Equal(t, want.String(), got.String(), "then %q", tc.tail)
		assert.Empty(t, cl.readUntilEOF(), "then %q", tc.tail)
	}
}

func TestServeMux(t *testing.T) {
	t.Parallel()
	// Ensure an http.ServeMux routes, 404s, 405s and redirects through the
	// server unchanged.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "item "+r.PathValue("id"))
	})
	mux.Handle("/dir/", textHandler("dir"))
	addr, _ := startServer(t, gameserver.Config{Handler: mux})
	cl := dial(t, addr)

	cl.writeAll("GET /items/42 HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, okText("item 42"), normalize(cl.readRaw(http.MethodGet)))

	cl.writeAll("GET /nowhere HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 404 Not Found\r\nContent-Length: 19\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\nDate: X\r\nServer: X\r\n"+
		"X-Content-Type-Options: nosniff\r\n\r\n404 page not found\n", normalize(cl.readRaw(http.MethodGet)))

	cl.writeAll("POST /items/42 HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n")
	resp, _ := cl.readResponse(http.MethodPost)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))

	// The redirect's status is the mux's choice: compare with a direct call.
	want := httptest.NewRecorder()
	mux.ServeHTTP(want, httptest.NewRequest(http.MethodGet, "/dir", nil))
	cl.writeAll("GET /dir HTTP/1.1\r\nHost: test\r\n\r\n")
	resp, _ = cl.readResponse(http.MethodGet)
	assert.Equal(t, want.Code, resp.StatusCode)
	assert.Equal(t, "/dir/", resp.Header.Get("Location"))
}

func TestServeContent(t *testing.T) {
	t.Parallel()
	// Ensure http.ServeContent's conditional and range requests (RFC 9110
	// sections 13 and 14) work through the server: 206 with the right
	// slice, 304 without a body, 416 past the end.
	modtime := time.Date(2002, 5, 1, 12, 0, 0, 0, time.UTC)
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "data.txt", modtime, strings.NewReader("0123456789"))
	})})
	cl := dial(t, addr)

	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\nRange: bytes=2-5\r\n\r\n")
	resp, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, "bytes 2-5/10", resp.Header.Get("Content-Range"))
	assert.Equal(t, "2345", body)

	// 304 has no body: the pipelined request after it must parse cleanly.
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\nIf-None-Match: \"v1\"\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: test\r\nIf-Modified-Since: " + modtime.Format(http.TimeFormat) + "\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: test\r\nRange: bytes=20-30\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	raw := cl.readRaw(http.MethodGet)
	assert.True(t, strings.HasPrefix(raw, "HTTP/1.1 304 Not Modified\r\n"), "got %q", raw)
	assert.True(t, strings.HasSuffix(raw, "\r\n\r\n"), "304 with a body: %q", raw)
	resp, _ = cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	resp, _ = cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
	resp, body = cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "0123456789", body)
	assert.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
	assert.Equal(t, modtime.Format(http.TimeFormat), resp.Header.Get("Last-Modified"))
}

func TestHTMLTemplate(t *testing.T) {
	t.Parallel()
	// Ensure html/template output reaches the client exactly, escaped.
	tmpl := template.Must(template.New("p").Parse(`<p title="{{.}}">{{.}}</p>`))
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		assert.NoError(t, tmpl.Execute(w, `<script>"x"&`))
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	const page = `<p title="&lt;script&gt;&#34;x&#34;&amp;">&lt;script&gt;&#34;x&#34;&amp;</p>`
	assert.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(page))+
		"\r\nContent-Type: text/html; charset=utf-8\r\nDate: X\r\nServer: X\r\n\r\n"+page,
		normalize(cl.readRaw(http.MethodGet)))
}

func TestStatsMatchTheWire(t *testing.T) {
	t.Parallel()
	// Ensure Stats counts connections, responses (refusals included) and
	// bytes each way exactly as the client saw them.
	addr, s := startServer(t, gameserver.Config{Handler: textHandler("hello")})
	cl := dial(t, addr)
	reqs := "GET /1 HTTP/1.1\r\nHost: test\r\n\r\nGET /2 HTTP/1.1\r\nHost: test\r\n\r\n"
	cl.writeAll(reqs)
	got := cl.readRaw(http.MethodGet) + cl.readRaw(http.MethodGet)
	eventually(t, func() bool { return s.Stats().BytesWritten == uint64(len(got)) },
		"BytesWritten, want %d", len(got))
	st := s.Stats()
	assert.Equal(t, uint64(len(reqs)), st.BytesRead)
	assert.Equal(t, uint64(2), st.Requests)
	assert.Equal(t, uint64(1), st.AcceptedConns)
	assert.Equal(t, 1, st.OpenConns)
	assert.NotZero(t, st.LoopTurns)
	require.NoError(t, cl.c.Close())
	eventually(t, func() bool { return s.Stats().OpenConns == 0 }, "OpenConns after the client closed")

	// A refusal is a response too.
	bad := dial(t, addr)
	bad.writeAll("GET / HTTP/1.1\r\nHost : test\r\n\r\n")
	bad.readUntilEOF()
	// (The server may accept the connection only once its bytes arrive,
	// TCP_DEFER_ACCEPT: OpenConns alone may read 0 before it did.)
	eventually(t, func() bool { st := s.Stats(); return st.OpenConns == 0 && st.Requests == 3 }, "OpenConns after a refusal")
	assert.Equal(t, uint64(2), s.Stats().AcceptedConns)
	assert.Equal(t, [6]uint64{2: 2, 4: 1}, s.Stats().Responses, "two 200s and the 400, by status class")
}

// reportHandler answers with what a handler sees of its request, in a
// stable text form, for comparing servers.
func reportHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		host, _, splitErr := net.SplitHostPort(r.RemoteAddr)
		fmt.Fprintf(w, "method=%s uri=%q path=%q rawpath=%q query=%q\nproto=%s %d.%d host=%q\n",
			r.Method, r.RequestURI, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Proto, r.ProtoMajor, r.ProtoMinor, r.Host)
		fmt.Fprintf(w, "length=%d te=%q close=%v header=%v\nbody=%q err=%v trailer=%v\n",
			r.ContentLength, r.TransferEncoding, r.Close, r.Header, body, err, r.Trailer)
		fmt.Fprintf(w, "remote=%s %v tls=%v ctx=%v form=%v\n",
			host, splitErr, r.TLS != nil, r.Context() != nil, r.FormValue("a"))
	})
}

func TestRequestAsNetHTTP(t *testing.T) {
	t.Parallel()
	// Ensure a handler sees each request exactly as under net/http's
	// server: method, target, URL, version, Host, header, body, trailer,
	// Close, RemoteAddr's host and a form.
	addr, _ := startServer(t, gameserver.Config{Handler: reportHandler()})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	std := &http.Server{Handler: reportHandler()}
	go std.Serve(l)
	t.Cleanup(func() { std.Close() })

	for _, req := range []string{
		"GET /a/b%2Fc?x=1&y=%20 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n",
		"GET http://example.com/abs?q HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: test\r\nX-Multi: 1\r\nx-multi: 2\r\nCookie: a=1\r\nCookie: b=2\r\nX-Empty:\r\n\r\n",
		"POST /form HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2",
		"POST /c HTTP/1.1\r\nHost: test\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 9\r\n\r\n",
		"PUT /p HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
		"GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n",
		"GET /b HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc",
		"POST /z HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n",
		"POST /u HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"GET /o HTTP/1.1\r\nHost: test\r\nX-Obs: caf\xe9 \t\r\nX-Trim:   v  \r\n\r\n",
		"GET /lf HTTP/1.1\nHost: test\nX-A: 1\n\n",
	} {
		ours, theirs := dial(t, addr), dial(t, l.Addr().String())
		ours.writeAll(req)
		theirs.writeAll(req)
		_, got := ours.readResponse(http.MethodGet)
		_, want := theirs.readResponse(http.MethodGet)
		assert.Equal(t, want, got, "request %q", req)
	}
}

func TestOptionsAsterisk(t *testing.T) {
	t.Parallel()
	// Ensure "OPTIONS *" (a question to the server, RFC 9110 section 9.3.7)
	// is answered as net/http's server answers it, 200 with an empty body,
	// rather than handed to the Handler: an http.ServeMux would answer it
	// 400 and close the connection.
	addr, _ := startServer(t, gameserver.Config{Handler: http.NewServeMux()})
	cl := dial(t, addr)
	cl.writeAll("OPTIONS * HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n")
	resp, body := cl.readResponse(http.MethodOptions)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
	assert.False(t, resp.Close, "Connection: close")
	resp, _ = cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestAccessLogLines(t *testing.T) {
	t.Parallel()
	// Ensure AccessLog gets one Common Log Format line per response,
	// refusals included: host ident authuser [date] "request line" status
	// bytes.
	var log testkit.LogBuffer
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("hello"), AccessLog: &log})
	cl := dial(t, addr)
	cl.writeAll("GET /x?y=1 HTTP/1.1\r\nHost: test\r\n\r\nPOST /p HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi")
	cl.readRaw(http.MethodGet)
	cl.readRaw(http.MethodPost)
	bad := dial(t, addr)
	bad.writeAll("GET /bad HTTP/1.1\r\nHost : test\r\n\r\n")
	bad.readUntilEOF()

	eventually(t, func() bool { return strings.Count(log.String(), "\n") >= 3 }, "access log: %q", log.String())
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	const date = `\[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]`
	assert.Regexp(t, `^127\.0\.0\.1 - - `+date+` "GET /x\?y=1 HTTP/1\.1" 200 5$`, lines[0])
	assert.Regexp(t, `^127\.0\.0\.1 - - `+date+` "POST /p HTTP/1\.1" 200 5$`, lines[1])
	assert.Regexp(t, `^127\.0\.0\.1 - - `+date+` ".*" 400 \d+$`, lines[2])
}

func TestManyPipelined(t *testing.T) {
	t.Parallel()
	// Ensure a thousand requests in one write are each answered, in order.
	addr, _ := startServer(t, gameserver.Config{Handler: pathHandler()})
	cl := dial(t, addr)
	var reqs strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&reqs, "GET /%d HTTP/1.1\r\nHost: test\r\n\r\n", i)
	}
	cl.writeAll(reqs.String())
	for i := range 1000 {
		_, body := cl.readResponse(http.MethodGet)
		require.Equal(t, "GET /"+strconv.Itoa(i), body)
	}
}

func TestDateAdvances(t *testing.T) {
	t.Parallel()
	// Ensure Date follows the clock on a long-lived server (a cached Date
	// must be refreshed): two responses more than a second apart carry
	// different, increasing dates.
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok")})
	cl := dial(t, addr)
	first, _ := cl.get("/")
	time.Sleep(1100 * time.Millisecond)
	second, _ := cl.get("/")
	t1, err := http.ParseTime(first.Header.Get("Date"))
	require.NoError(t, err)
	t2, err := http.ParseTime(second.Header.Get("Date"))
	require.NoError(t, err)
	assert.True(t, t2.After(t1), "Date %v then %v", t1, t2)
}

// Ensure a client that speaks TLS, or anything but HTTP, to the server gets
// a 400 naming the problem at once, not after the header timeout (set here
// far beyond the test's patience), and loses the connection.
func TestNonHTTPRefusedAtOnce(t *testing.T) {
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok"), ReadHeaderTimeout: time.Hour})
	for in, msg := range map[string]string{
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03": "TLS handshake on a plain-HTTP port",
		"\x00\x00\x00\x10SSH":                          "invalid method",
	} {
		cl := dial(t, addr)
		cl.writeAll(in)
		resp, body := cl.readResponse(http.MethodGet)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Equal(t, msg, body)
		assert.Empty(t, cl.readUntilEOF(), "bytes after the response")
	}
}
