package gameserver

import (
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var defaultLimits = limits{maxHeaderBytes: DefaultMaxHeaderBytes, maxBodyBytes: DefaultMaxBodyBytes}

// fixture is one file of testdata/requests: the bytes a client sends on a
// connection, and the verdict its name gives (see the README there).
type fixture struct {
	name   string
	data   []byte
	status int // the last request's refusal, 0 if every request is accepted
}

func loadFixtures(tb testing.TB) []fixture {
	tb.Helper()
	paths, err := filepath.Glob("testdata/requests/*.http")
	require.NoError(tb, err)
	require.NotEmpty(tb, paths)
	var fxs []fixture
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(tb, err)
		name := strings.TrimSuffix(filepath.Base(path), ".http")
		verdict, _, _ := strings.Cut(name, "-")
		fx := fixture{name: name, data: data}
		if verdict != "ok" {
			fx.status, err = strconv.Atoi(verdict)
			require.NoError(tb, err, "fixture %s: name must start with ok- or a status", name)
		}
		fxs = append(fxs, fx)
	}
	return fxs
}

// serveInput runs in through one parser as the loop does, delivering it in
// pieces that end at the offsets cuts (ascending, the last one len(in)):
// after each complete request it resets the parser and goes on with the
// rest. It returns each request's result up to the first refusal, and the
// offset where the unfinished rest of the input begins.
func serveInput(in []byte, lim limits, cuts []int) ([]result, int) {
	var p parser
	var out []result
	start := 0
	for _, end := range cuts {
		for {
			r := finish(p.parse(in[start:end], lim))
			if r.incomplete() {
				break
			}
			out = append(out, r)
			if r.err != nil {
				return out, start
			}
			start += r.n
			p.reset()
		}
	}
	return out, start
}

// Ensure every fixture gets its verdict, the same whether it arrives whole,
// in two parts split at any offset, or byte by byte, and that each accepted
// request agrees with net/http's server.
func TestParseFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			in := fx.data
			whole, rest := serveInput(in, defaultLimits, []int{len(in)})
			require.NotEmpty(t, whole, "no request completed")
			last := whole[len(whole)-1]
			if fx.status == 0 {
				require.Nil(t, last.err)
				require.Equal(t, len(in), rest, "input left over")
			} else {
				require.NotNil(t, last.err, "accepted")
				require.Equal(t, fx.status, last.err.status, "refused with %v", last.err)
			}
			start := 0
			for _, r := range whole {
				checkAgainstStd(t, in[start:], r)
				start += r.n
			}
			for k := 0; k <= len(in); k++ {
				split, splitRest := serveInput(in, defaultLimits, []int{k, len(in)})
				requireSameResults(t, whole, split, "split at %d", k)
				require.Equal(t, rest, splitRest)
			}
			cuts := make([]int, len(in))
			for i := range cuts {
				cuts[i] = i + 1
			}
			bytewise, _ := serveInput(in, defaultLimits, cuts)
			requireSameResults(t, whole, bytewise, "byte by byte")
		})
	}
}

func requireSameResults(t *testing.T, want, got []result, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := range want {
		requireSameResult(t, want[i], got[i], msgAndArgs...)
	}
}

// Ensure the fields a handler reads are set as RFC 9112 and net/http say.
func TestParseRequestFields(t *testing.T) {
	parseFixture := func(t *testing.T, name string) (*http.Request, []byte) {
		t.Helper()
		data, err := os.ReadFile("testdata/requests/" + name + ".http")
		require.NoError(t, err)
		r := parseOnce(data, defaultLimits)
		require.Nil(t, r.err)
		require.NotNil(t, r.req)
		require.Equal(t, len(data), r.n)
		return r.req, r.body
	}
	t.Run("wrk GET", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-wrk-get")
		assert.Equal(t, "GET", req.Method)
		assert.Equal(t, "/", req.RequestURI)
		assert.Equal(t, &url.URL{Path: "/"}, req.URL)
		assert.Equal(t, "127.0.0.1:8080", req.Host)
		assert.Equal(t, "HTTP/1.1", req.Proto)
		assert.Equal(t, http.Header{}, req.Header, "Host moves to req.Host")
		assert.Equal(t, http.NoBody, req.Body)
		assert.Zero(t, req.ContentLength)
		assert.False(t, req.Close)
	})
	t.Run("ab GET is HTTP/1.0 and closes", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-ab-get")
		assert.Equal(t, 0, req.ProtoMinor)
		assert.True(t, req.Close)
		assert.Equal(t, http.Header{"User-Agent": {"ApacheBench/2.3"}, "Accept": {"*/*"}}, req.Header)
	})
	t.Run("ab -k keeps HTTP/1.0 alive", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-ab-keepalive")
		assert.False(t, req.Close)
	})
	t.Run("HTTP/1.1 close", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-connection-close")
		assert.True(t, req.Close)
	})
	t.Run("query", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-game-hq")
		assert.Equal(t, "hq", req.URL.Query().Get("function"))
		assert.Equal(t, "0123456789abcdef0123456789abcdef", req.URL.Query().Get("tid"))
	})
	t.Run("Content-Length body", func(t *testing.T) {
		req, body := parseFixture(t, "ok-post-form")
		assert.Equal(t, int64(27), req.ContentLength)
		assert.Equal(t, "source=3&offer=120&csrf=abc", string(body))
		assert.Equal(t, []string{"27"}, req.Header["Content-Length"])
	})
	t.Run("equal Content-Length fields become one", func(t *testing.T) {
		req, body := parseFixture(t, "ok-dup-content-length")
		assert.Equal(t, []string{"2"}, req.Header["Content-Length"])
		assert.Equal(t, "hi", string(body))
	})
	t.Run("chunked with extensions and trailers", func(t *testing.T) {
		req, body := parseFixture(t, "ok-chunked-ext-trailer")
		assert.Equal(t, "abc0123456789", string(body))
		assert.Equal(t, int64(-1), req.ContentLength)
		assert.Equal(t, []string{"chunked"}, req.TransferEncoding)
		assert.Equal(t, http.Header{"Checksum": {"1234"}, "X-Note": nil, "X-Other": {"yes"}}, req.Trailer)
		assert.NotContains(t, req.Header, "Transfer-Encoding")
		assert.NotContains(t, req.Header, "Trailer")
	})
	t.Run("absolute-form takes Host from the target", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-absolute-form")
		assert.Equal(t, "Example.ORG:8080", req.Host)
		assert.Equal(t, "http", req.URL.Scheme)
		assert.Equal(t, "/p/a", req.URL.Path)
	})
	t.Run("CONNECT authority-form", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-connect")
		assert.Equal(t, &url.URL{Host: "example.com:443"}, req.URL)
		assert.Equal(t, "example.com:443", req.Host)
	})
	t.Run("OPTIONS *", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-options-star")
		assert.Equal(t, "*", req.URL.Path)
	})
	t.Run("HTTP/1.2 is served as 1.1 but reported as sent", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-http12")
		assert.Equal(t, "HTTP/1.2", req.Proto)
		assert.True(t, req.ProtoAtLeast(1, 1))
		assert.False(t, req.Close)
	})
	t.Run("names canonical, repeated fields in order", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-repeated-fields")
		assert.Equal(t, []string{"a", "b"}, req.Header["Accept"])
		assert.Equal(t, []string{"c=1", "d=2"}, req.Header["Cookie"])
	})
	t.Run("browser's lower-case names", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-browser-get")
		assert.Equal(t, []string{"?0"}, req.Header["Sec-Ch-Ua-Mobile"])
		assert.Len(t, req.Header, 14)
	})
	t.Run("values trimmed, obs-text kept", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-obs-text-value")
		assert.Equal(t, "caf\xc3\xa9", req.Header.Get("X-Name"))
	})
	t.Run("Pragma: no-cache implies Cache-Control as net/http", func(t *testing.T) {
		req, _ := parseFixture(t, "ok-pragma-no-cache")
		assert.Equal(t, "no-cache", req.Header.Get("Cache-Control"))
	})
}

// Ensure every combination of request-line, framing fields, body and line
// ending is framed as net/http frames it (or refused as documented), the
// same whole as split anywhere.
func TestParseCombinations(t *testing.T) {
	lines := []string{"GET / HTTP/1.1", "POST /x?y=1 HTTP/1.0", "OPTIONS * HTTP/1.1",
		"PUT http://h.example/p HTTP/1.1", "CONNECT h.example:443 HTTP/1.1", "GET /%7e HTTP/1.2"}
	fields := [][]string{
		{"Host: h"},
		{"host: h", "content-length: 3"},
		{"Host: h", "Transfer-Encoding: chunked"},
		{"Host: h", "Transfer-Encoding: chunked", "Content-Length: 3"},
		{"Host: h", "Content-Length: 3", "Content-Length: 3"},
		{"Host: h", "Expect: 100-continue", "Content-Length: 3"},
		{"Host: h", "Connection: keep-alive", "Trailer: T"},
		{"Host: h", "Connection: close", "X-A: 1", "X-A: 2"},
		{"Host: h", "X-Fold: a", " b"},
		{"Content-Length: 3"},
	}
	bodies := []string{"", "abc", "3\r\nabc\r\n0\r\n\r\n", "3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n"}
	for _, eol := range []string{"\r\n", "\n"} {
		for _, line := range lines {
			for _, ff := range fields {
				for _, body := range bodies {
					in := []byte(line + eol + strings.Join(ff, eol) + eol + eol + body)
					whole := parseOnce(in, defaultLimits)
					checkAgainstStd(t, in, whole)
					for k := 0; k <= len(in); k += 7 {
						requireSameResult(t, whole, parseSplit(in, defaultLimits, k), "%q split at %d", in, k)
					}
				}
			}
		}
	}
}

// Ensure tricky values of the fields that decide framing and Host are
// judged as net/http judges them (or refused as documented), in requests
// with and without a body of either framing.
func TestParseFramingValues(t *testing.T) {
	values := []string{"", "3", "03", "+3", "-3", " 3 ", "3\t", "0x3", "3,3", "3, 3", "3 3", "1e1",
		"\xef\xbc\x93", "3\x00", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"chunked", "Chunked", " chunked ", "chunked,", ",chunked", "chunked, chunked", "chunked;a=b",
		"identity", "gzip, chunked", "chunked\x0b", "100-continue", "100-Continue, 100-continue",
		"100-continuex", "close", "keep-alive", "Keep-Alive, close", "a.example:80", "[::1]:80",
		"a b", "a/b", "a\x7fb", "caf\xc3\xa9"}
	bases := []string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST / HTTP/1.0\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	}
	for _, name := range []string{"Content-Length", "Transfer-Encoding", "Host", "Expect", "Connection", "Trailer"} {
		for _, value := range values {
			for _, base := range bases {
				in := withField([]byte(base), name, value)
				whole := parseOnce(in, defaultLimits)
				checkAgainstStd(t, in, whole)
				for k := 0; k <= len(in); k += 5 {
					requireSameResult(t, whole, parseSplit(in, defaultLimits, k), "%q split at %d", in, k)
				}
			}
		}
	}
}

// Ensure pipelined requests come out one by one, n pointing at the next.
func TestParsePipelined(t *testing.T) {
	in := []byte("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz" +
		"GET /3 HTTP/1.1\r\nHost: a\r\n\r\nGET /4")
	results, rest := serveInput(in, defaultLimits, []int{len(in)})
	require.Len(t, results, 3)
	assert.Equal(t, 28, results[0].n)
	assert.Equal(t, "/2", results[1].req.RequestURI)
	assert.Equal(t, "xyz", string(results[1].body))
	assert.Equal(t, "/3", results[2].req.RequestURI)
	assert.Equal(t, "GET /4", string(in[rest:]), "the unfinished request stays unconsumed")
}

// Ensure each limit is enforced at its boundary with its status, and as
// soon as it is passed.
func TestParseLimits(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: a\r\n\r\n" // 27 bytes
	post := func(n int) string {
		return "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n" + strings.Repeat("x", n)
	}
	const chunkedHeader = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	fields := func(head string, n int) string {
		for i := range n {
			head += fmt.Sprintf("X-%d: a\r\n", i)
		}
		return head
	}
	chunked := func(chunks ...string) string {
		s := chunkedHeader
		for _, c := range chunks {
			s += fmt.Sprintf("%x\r\n%s\r\n", len(c), c)
		}
		return s + "0\r\n\r\n"
	}
	tests := []struct {
		name   string
		in     string
		lim    limits
		status int // 0: accepted
	}{
		{"header at the limit", get, limits{27, 0}, 0},
		{"header over the limit", get, limits{26, 0}, 431},
		{"unterminated header over the limit", "GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("y", 50), limits{40, 0}, 431},
		{"empty lines before the request count", "\r\n\r\n" + get, limits{30, 0}, 431},
		{"request-line at the limit, header over it", get, limits{16, 0}, 431},
		{"request-line over the limit", get, limits{15, 0}, 414},
		{"long target", "GET /" + strings.Repeat("a", 60) + " HTTP/1.1\r\nHost: a\r\n\r\n", limits{40, 0}, 414},
		{"unterminated request-line over the limit", "GET /" + strings.Repeat("a", 60), limits{40, 0}, 414},
		{"fields at the cap", fields("GET / HTTP/1.1\r\nHost: a\r\n", maxHeaderFields-1) + "\r\n", defaultLimits, 0},
		{"fields over the cap", fields("GET / HTTP/1.1\r\nHost: a\r\n", maxHeaderFields) + "\r\n", defaultLimits, 431},
		{"fields over the cap, unterminated", fields("GET / HTTP/1.1\r\nHost: a\r\n", maxHeaderFields), defaultLimits, 431},
		{"trailer fields at the cap", fields(chunkedHeader+"0\r\n", maxHeaderFields) + "\r\n", defaultLimits, 0},
		{"trailer fields over the cap", fields(chunkedHeader+"0\r\n", maxHeaderFields+1) + "\r\n", defaultLimits, 431},
		{"body at the limit", post(10), limits{1024, 10}, 0},
		{"Content-Length over the limit, before the body", strings.TrimSuffix(post(11), strings.Repeat("x", 11)), limits{1024, 10}, 413},
		{"no body allowed, empty body", post(0), limits{1024, -1}, 0},
		{"no body allowed, chunked empty body", chunked(), limits{1024, -1}, 0},
		{"no body allowed, one byte", post(1), limits{1024, -1}, 413},
		{"no body allowed, one chunked byte", chunked("x"), limits{1024, -1}, 413},
		{"chunked at the limit", chunked("12345", "67890"), limits{1024, 10}, 0},
		{"chunked growing past the limit", chunked("12345", "67890", "1"), limits{1024, 10}, 413},
		{"chunk size over the limit, before its data", chunkedHeader + "5\r\n12345\r\n6\r\n", limits{1024, 10}, 413},
		{"huge chunk size", chunkedHeader + "ffffffffffffffff\r\n", defaultLimits, 413},
		{"trailer section over the header limit", chunkedHeader + "0\r\nX: " + strings.Repeat("y", 80) + "\r\n\r\n", limits{80, 10}, 431},
		{"chunk-size line at 4095 bytes", chunkedHeader + "1;" + strings.Repeat("e", 4093) + "\r\nx\r\n0\r\n\r\n", defaultLimits, 0},
		{"chunk-size line over 4095 bytes", chunkedHeader + "1;" + strings.Repeat("e", 4094) + "\r\nx\r\n0\r\n\r\n", defaultLimits, 400},
		{"unterminated chunk-size line over 4095 bytes", chunkedHeader + "1;" + strings.Repeat("e", 4096), defaultLimits, 400},
		{"chunks mostly overhead", chunkedHeader + strings.Repeat("1;"+strings.Repeat("e", 40)+"\r\nx\r\n", 1000), defaultLimits, 400},
		{"framing at the body limit", chunkedHeader + strings.Repeat("1;"+strings.Repeat("e", 11)+"\r\nx\r\n", 1000) + "0\r\n\r\n", limits{1024, 18000}, 0},
		{"framing over the body limit", chunkedHeader + strings.Repeat("1;"+strings.Repeat("e", 11)+"\r\nx\r\n", 1000) + "0\r\n\r\n", limits{1024, 17000}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseOnce([]byte(tt.in), tt.lim)
			if tt.status == 0 {
				require.Nil(t, r.err)
				require.NotNil(t, r.req)
				require.Equal(t, len(tt.in), r.n)
				return
			}
			require.NotNil(t, r.err, "not refused")
			require.Equal(t, tt.status, r.err.status, "refused with %v", r.err)
		})
	}
}

// Ensure expectContinue is true exactly while the body of an HTTP/1.1
// request that expects 100-continue is awaited.
func TestParseExpectContinue(t *testing.T) {
	tests := []struct {
		name   string
		header string
		body   string
		want   bool
	}{
		{"Content-Length", "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello", true},
		{"chunked", "PUT / HTTP/1.1\r\nHost: a\r\nEXPECT: 100-CONTINUE\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", true},
		{"HTTP/1.0 ignores it", "PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello", false},
		{"no Expect", "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", "hello", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p parser
			in := []byte(tt.header + tt.body)
			for k := 0; k < len(tt.header); k++ {
				req, _, err := p.parse(in[:k], defaultLimits)
				require.NoError(t, err)
				require.Nil(t, req)
				require.False(t, p.expectContinue(), "header incomplete at %d", k)
			}
			for k := len(tt.header); k < len(in); k++ {
				req, _, err := p.parse(in[:k], defaultLimits)
				require.NoError(t, err)
				require.Nil(t, req)
				require.Equal(t, tt.want, p.expectContinue(), "body incomplete at %d", k)
			}
			req, n, err := p.parse(in, defaultLimits)
			require.NoError(t, err)
			require.NotNil(t, req)
			require.Equal(t, len(in), n)
			require.False(t, p.expectContinue(), "request complete")
			p.reset()
			require.False(t, p.expectContinue(), "after reset")
		})
	}
	t.Run("no body: complete at once", func(t *testing.T) {
		var p parser
		req, _, err := p.parse([]byte("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"), defaultLimits)
		require.NoError(t, err)
		require.NotNil(t, req)
		require.False(t, p.expectContinue())
	})
}

// Ensure input delivered a byte at a time is scanned once: the search for
// the end of the header resumes where it stopped, the header is parsed
// once, and a chunked body is decoded as it arrives.
func TestParseIncremental(t *testing.T) {
	header := "POST / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-Pad: 0123456789\r\n", 100) +
		"Transfer-Encoding: chunked\r\n\r\n"
	in := []byte(header + "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")
	var p parser
	var hdr *requestAlloc
	for k := 1; k < len(in); k++ {
		req, _, err := p.parse(in[:k], defaultLimits)
		require.NoError(t, err)
		require.Nil(t, req)
		if k < len(header) {
			require.Equal(t, k, p.scan, "scan resumes at the end of the input")
			require.Nil(t, p.req)
			continue
		}
		if hdr == nil {
			hdr = p.req
		}
		require.Same(t, hdr, p.req, "header parsed once")
		require.LessOrEqual(t, p.chunked.pos, k)
	}
	require.Equal(t, "abcdefg", string(p.chunked.body), "body decoded before the last byte arrived")
	req, n, err := p.parse(in, defaultLimits)
	require.NoError(t, err)
	require.Equal(t, len(in), n)
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	require.Equal(t, "abcdefg", string(body))
}

// Ensure a refusal is final: more input does not change it.
func TestParseErrorSticks(t *testing.T) {
	var p parser
	in := []byte("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n")
	_, _, err := p.parse(in, defaultLimits)
	require.Equal(t, errObsFold, err)
	_, _, err = p.parse(append(in, "GET / HTTP/1.1\r\n"...), defaultLimits)
	require.Equal(t, errObsFold, err)
}

// Ensure a protoError names its status and problem, and the loop gets the
// bare message for the response body.
func TestProtoError(t *testing.T) {
	assert.Equal(t, "gameserver: 400 Bad Request: invalid Content-Length", errContentLength.Error())
	assert.Equal(t, "invalid Content-Length", errContentLength.msg)
	assert.Equal(t, "gameserver: 431 Request Header Fields Too Large: header section too large", errHeaderTooLarge.Error())
	assert.Equal(t, "gameserver: 414 Request URI Too Long: request line too long", errURITooLong.Error())
}

// Ensure the allocation-free origin-form path gives what
// url.ParseRequestURI gives.
func TestOriginForm(t *testing.T) {
	for _, target := range []string{
		"/", "/a/b", "/a?", "/a?b", "/a?b?", "/a??", "/?", "/game?function=hq&tid=00ff",
		"/a:b@c;d=e,f$g&h+i~j_k.l-m", "//x", "/a?b=%zz", "/a?b#c",
	} {
		want, err := url.ParseRequestURI(target)
		require.NoError(t, err)
		var got url.URL
		require.True(t, originForm(&got, target), target)
		assert.Equal(t, want, &got, target)
	}
	for _, target := range []string{"/%41", "/a#b", "/a!b", "/a*", "/é", "/a'b"} {
		var got url.URL
		assert.False(t, originForm(&got, target), target)
	}
}

// Ensure field names are canonical as textproto makes them.
func TestCanonicalKey(t *testing.T) {
	for _, k := range []string{
		"host", "HOST", "Host", "content-length", "x-forwarded-for", "X-FORWARDED-FOR", "sec-ch-ua",
		"a", "-", "--x", "x--y", "x_y-z", "1abc", "etag", "WWW-Authenticate",
		strings.Repeat("ab-", 40), "foo.bar-baz",
	} {
		assert.Equal(t, textproto.CanonicalMIMEHeaderKey(k), canonicalKey(k), k)
	}
}

// Ensure input that cannot be HTTP is refused at the first byte that shows
// it, with or without a line end to come, and that a method still arriving,
// or empty lines before it, are not.
func TestParseRefusesNonHTTPAtOnce(t *testing.T) {
	clientHello := "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
	for _, tc := range []struct {
		in   string
		want *protoError
	}{
		{clientHello, errTLS},
		{clientHello[:1], errTLS},
		{"\x00\x01\x02", errMethod},
		{"GE\x80", errMethod},
		{"G{", errMethod},
		{"GET\r", errRequestLine},
		{"GET\r\n", errRequestLine},
		{"GET\x16 / HTTP/1.1\r\nHost: a\r\n\r\n", errMethod},
		{"PROPFIND /x HTTP/1.1\r\nHost: a\r\n\r\n", nil},
		{"GET", nil},
		{"\r\n\r\nGE", nil},
		{"\r", nil},
		{"GET /\x16", nil}, // the target's bytes are checked when the line ends
	} {
		var p parser
		var err *protoError
		for k := 1; k <= len(tc.in) && err == nil; k++ {
			_, _, e := p.parse([]byte(tc.in[:k]), defaultLimits)
			if e != nil {
				err = e.(*protoError)
			}
		}
		assert.Equal(t, tc.want, err, "%q", tc.in)
	}
}
