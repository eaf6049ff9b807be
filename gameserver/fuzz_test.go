package gameserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzLimits are small enough for the fuzzer to reach them.
var fuzzLimits = limits{maxHeaderBytes: 16 << 10, maxBodyBytes: 1 << 20}

// FuzzParseRequest checks parse against net/http's server on the first two
// requests of any input: whatever parse accepts, net/http accepts with the
// same method, target, version, Host, header fields, body and length;
// whatever parse refuses and net/http accepts is one of the deliberate
// strictnesses listed in deliberate. It also checks that feeding the input
// in two parts, split at a fuzzed offset, gives the same result as whole.
//
// The input is in, with the field "name: value" inserted after its first
// line when name is not empty: so the fuzzer mutates the value of a
// framing field (Content-Length, Transfer-Encoding, Host, Expect) on its
// own, which it seldom hits inside a whole request.
func FuzzParseRequest(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.data, uint(len(fx.data)/2), "", "")
	}
	post := []byte("POST /p HTTP/1.1\r\nHost: h\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	for _, field := range [][2]string{
		{"Content-Length", "3"}, {"Transfer-Encoding", "chunked"}, {"Host", "h"},
		{"Expect", "100-continue"}, {"Connection", "keep-alive"}, {"Trailer", "T"},
	} {
		f.Add(post, uint(len(post)/2), field[0], field[1])
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint, name, value string) {
		in = withField(in, name, value)
		whole := parseOnce(in, fuzzLimits)
		if len(in) > 0 {
			k := int(split % uint(len(in)+1))
			requireSameResult(t, whole, parseSplit(in, fuzzLimits, k), "split at %d", k)
		}
		checkAgainstStd(t, in, whole)
		if whole.req != nil && whole.n < len(in) {
			// The next pipelined request.
			rest := in[whole.n:]
			checkAgainstStd(t, rest, parseOnce(rest, fuzzLimits))
		}
	})
}

// withField returns in with "name: value" CRLF inserted after its first
// line, or in itself if name is empty or in has no LF.
func withField(in []byte, name, value string) []byte {
	i := bytes.IndexByte(in, '\n')
	if name == "" || i < 0 {
		return in
	}
	out := append([]byte(nil), in[:i+1]...)
	out = append(out, name+": "+value+"\r\n"...)
	return append(out, in[i+1:]...)
}

// result is what one parser made of an input.
type result struct {
	req  *http.Request
	body []byte
	n    int
	err  *protoError
}

func (r result) incomplete() bool { return r.req == nil && r.err == nil }

// parseOnce parses the first request of in with a fresh parser.
func parseOnce(in []byte, lim limits) result {
	var p parser
	return finish(p.parse(in, lim))
}

// parseSplit parses the first request of in fed as in[:k], then in.
func parseSplit(in []byte, lim limits, k int) result {
	var p parser
	if r := finish(p.parse(in[:k], lim)); !r.incomplete() {
		return r
	}
	return finish(p.parse(in, lim))
}

// finish reads the body of a parse result.
func finish(req *http.Request, n int, err error) result {
	if err != nil {
		var pe *protoError
		if !errors.As(err, &pe) {
			panic("parse returned a foreign error: " + err.Error())
		}
		return result{err: pe}
	}
	if req == nil {
		return result{}
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		panic("reading an in-memory body: " + err.Error())
	}
	return result{req: req, body: body, n: n}
}

// requireSameResult fails unless a and b agree on everything parse
// returns.
func requireSameResult(t *testing.T, a, b result, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, a.err, b.err, msgAndArgs...)
	require.Equal(t, a.n, b.n, msgAndArgs...)
	require.Equal(t, a.body, b.body, msgAndArgs...)
	if a.req != nil {
		requireSameRequest(t, a.req, b.req, msgAndArgs...)
	}
}

// requireSameRequest compares what a handler can see of a request.
func requireSameRequest(t *testing.T, want, got *http.Request, msgAndArgs ...any) {
	t.Helper()
	require.NotNil(t, got, msgAndArgs...)
	require.Equal(t, want.Method, got.Method, msgAndArgs...)
	require.Equal(t, want.RequestURI, got.RequestURI, msgAndArgs...)
	require.Equal(t, want.URL, got.URL, msgAndArgs...)
	require.Equal(t, want.Proto, got.Proto, msgAndArgs...)
	require.Equal(t, want.ProtoMajor, got.ProtoMajor, msgAndArgs...)
	require.Equal(t, want.ProtoMinor, got.ProtoMinor, msgAndArgs...)
	require.Equal(t, want.Host, got.Host, msgAndArgs...)
	require.Equal(t, want.Header, got.Header, msgAndArgs...)
	require.Equal(t, want.ContentLength, got.ContentLength, msgAndArgs...)
	require.Equal(t, want.TransferEncoding, got.TransferEncoding, msgAndArgs...)
	require.Equal(t, want.Close, got.Close, msgAndArgs...)
	if len(want.Trailer) > 0 || len(got.Trailer) > 0 {
		require.Equal(t, want.Trailer, got.Trailer, msgAndArgs...)
	}
}

// checkAgainstStd compares ours, parse's result for the first request of
// in, with net/http's.
func checkAgainstStd(t *testing.T, in []byte, ours result) {
	t.Helper()
	// net/http's server skips empty lines before a request only after a
	// POST; parse always does (RFC 9112 section 2.2).
	skip := 0
	for {
		if bytes.HasPrefix(in[skip:], []byte("\n")) {
			skip++
		} else if bytes.HasPrefix(in[skip:], []byte("\r\n")) {
			skip += 2
		} else {
			break
		}
	}
	std, stdErr := stdParse(in[skip:])
	switch {
	case ours.req != nil:
		require.NoError(t, stdErr, "parse accepted what net/http refuses: %q", in)
		requireSameRequest(t, std.req, ours.req, "input %q", in)
		require.Equal(t, std.body, ours.body, "body of %q", in)
		require.Equal(t, skip+std.n, ours.n, "length of %q", in)
	case ours.err != nil && stdErr == nil:
		require.True(t, deliberate(ours.err, in),
			"parse refused with %v what net/http accepts, outside the deliberate list: %q", ours.err, in)
	case ours.incomplete() && stdErr == nil:
		require.Failf(t, "framing disagrees", "net/http takes a complete request of %d bytes from %q, parse waits for more", std.n, in)
	}
}

// stdResult is what net/http's server makes of a request.
type stdResult struct {
	req  *http.Request
	body []byte
	n    int // bytes the request took from the input
}

// stdParse parses the first request of in as net/http's server does:
// http.ReadRequest, the body read to its end, then the checks of
// (*http.conn).readRequest and (*http.conn).serve (HTTP/1.x only, Host,
// field names and values, Expect).
func stdParse(in []byte) (*stdResult, error) {
	rd := bytes.NewReader(in)
	// A buffer over the whole input, so net/http's limit on a trailer
	// section (its buffer's size) does not refuse what the parser allows.
	br := bufio.NewReaderSize(rd, len(in)+16)
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	// ReadRequest drops the Host field, which the server checks first.
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(in)))
	if _, err := tp.ReadLine(); err != nil {
		return nil, err
	}
	fields, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	if err := stdServerChecks(req, fields["Host"]); err != nil {
		return nil, err
	}
	return &stdResult{req: req, body: body, n: len(in) - rd.Len() - br.Buffered()}, nil
}

// stdServerChecks is what net/http's server refuses beyond ReadRequest.
func stdServerChecks(req *http.Request, hosts []string) error {
	if req.ProtoMajor != 1 && !(req.Method == "PRI" && req.RequestURI == "*" && req.Proto == "HTTP/2.0") {
		return errors.New("505")
	}
	if req.ProtoAtLeast(1, 1) && len(hosts) == 0 && req.Method != "CONNECT" && req.Method != "PRI" {
		return errors.New("missing Host")
	}
	const hostBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!$%&'()*+,-.:;=[]_~"
	if len(hosts) == 1 && strings.Trim(hosts[0], hostBytes) != "" {
		return errors.New("malformed Host")
	}
	for k, vv := range req.Header {
		if k == "" || strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~") != "" {
			return errors.New("invalid header name")
		}
		for _, v := range vv {
			if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
				return errors.New("invalid header value")
			}
		}
	}
	if e := req.Header.Get("Expect"); e != "" && !strings.Contains(strings.ToLower(e), "100-continue") {
		return errors.New("417")
	}
	return nil
}

// deliberate reports whether refusing in with err, where net/http's server
// accepts it, is one of the parser's documented strictnesses, by a check
// of the input independent of the parser's code.
func deliberate(err *protoError, in []byte) bool {
	lower := bytes.ToLower(in)
	request := bytes.TrimLeft(in, "\r\n")
	method, rest, _ := bytes.Cut(request, []byte(" "))
	target, _, _ := bytes.Cut(rest, []byte(" "))
	switch err {
	case errObsFold: // RFC 9112 section 5.2: obs-fold, which net/http unfolds
		return bytes.Contains(in, []byte("\n ")) || bytes.Contains(in, []byte("\n\t"))
	case errSpaceBeforeColon: // RFC 9112 section 5.1; net/http keeps such trailer fields
		return bytes.Contains(in, []byte(" :"))
	case errCLAndTE: // RFC 9112 section 6.3 ought to; net/http lets chunked win
		return bytes.Contains(lower, []byte("content-length")) && bytes.Contains(lower, []byte("transfer-encoding"))
	case errTE10: // RFC 9112 section 6.1; net/http ignores Transfer-Encoding in HTTP/1.0
		return bytes.Contains(lower, []byte("transfer-encoding"))
	case errTarget, errNoHost: // RFC 9112 section 3.2: only the four forms, each for its methods; Host for CONNECT too
		return len(target) == 0 || target[0] != '/' || string(method) == "CONNECT"
	case errVersion: // net/http passes "PRI * HTTP/2.0" to handlers
		return bytes.HasPrefix(request, []byte("PRI * HTTP/2.0"))
	case errExpectation: // net/http looks only at the first Expect field, for the token anywhere
		return bytes.Contains(lower, []byte("expect"))
	case errChunkSize: // net/http does not check chunk extensions
		return bytes.ContainsFunc(in, func(r rune) bool { return r < ' ' && r != '\r' && r != '\n' && r != '\t' || r == 0x7f })
	case errFieldName: // trailer fields follow the header's rules; net/http does not check their names
		return bytes.Contains(lower, []byte("transfer-encoding"))
	case errChunkLine: // net/http reads trailer fields with bare LF if a CRLF CRLF follows
		return bytes.Contains(in, []byte("\n")) && bytes.Count(in, []byte("\n")) != bytes.Count(in, []byte("\r\n"))
	}
	return err.status == http.StatusRequestEntityTooLarge || err.status == http.StatusRequestHeaderFieldsTooLarge ||
		err.status == http.StatusRequestURITooLong
}
