package gameserver

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Request framing, RFC 9112. The parser is strict where leniency lets two
// HTTP implementations disagree about where a request ends (request
// smuggling, RFC 9112 section 11.2). Everything it accepts, net/http's
// server accepts too, with the same method, target, version, Host, header
// fields, body and length (FuzzParseRequest checks this). Refusals:
//
//	400 Bad Request: a malformed request-line (single SP separators,
//	    method a token); a request-target other than origin-form,
//	    absolute-form with scheme http or https, a host and no userinfo,
//	    "*" for OPTIONS, or authority-form host:port for CONNECT (RFC 9112
//	    section 3.2, RFC 9110 section 4.2.4); a field name that is not a
//	    token; white space before a colon (RFC 9112 section 5.1); a line
//	    starting with white space (obs-fold, section 5.2, or before the
//	    first field, section 2.2); a control character, including a CR
//	    not followed by LF, in the header section (section 2.2); HTTP/1.1
//	    without Host, CONNECT included, two Host fields, or a Host with
//	    bytes net/http refuses (section 3.2); Content-Length that is not
//	    1*DIGIT, overflows int64, or differs between fields (RFC 9110
//	    section 8.6); Content-Length with Transfer-Encoding (RFC 9112
//	    section 6.3); Transfer-Encoding in HTTP/1.0 (section 6.1), empty,
//	    in several fields, or naming chunked twice (section 7.1); a
//	    Trailer naming Content-Length, Transfer-Encoding or Trailer; a
//	    malformed chunked body (see chunked.go).
//	413 Content Too Large: Content-Length, or a chunked body, over
//	    limits.maxBodyBytes, decided before the body arrives.
//	417 Expectation Failed: an Expect field holding anything but
//	    100-continue (RFC 9110 section 10.1.1), in any version.
//	414 URI Too Long: a request-line that ends past
//	    limits.maxHeaderBytes (RFC 9112 section 3), decided as soon as the
//	    unterminated line passes it.
//	431 Request Header Fields Too Large: header section over
//	    limits.maxHeaderBytes (RFC 6585 section 5), decided as soon as the
//	    unterminated section passes it; more than maxHeaderFields field
//	    lines, decided at the first line past the cap; a trailer section
//	    over either limit.
//	501 Not Implemented: a transfer coding other than chunked (RFC 9112
//	    section 6.1), such as gzip, identity or "chunked, gzip".
//	505 HTTP Version Not Supported: a well-formed HTTP-version whose major
//	    version is not 1 (HTTP/0.9, HTTP/2.0, the HTTP/2 preface).
//
// Choices where the RFCs allow either: a bare LF ends a line of the header
// section as CRLF does (RFC 9112 section 2.2 MAY; net/http and nginx do),
// but chunk-size lines, chunk data and trailer lines need CRLF (as
// net/http); any number of empty lines before the request-line are skipped
// (section 2.2 SHOULD ignore at least one), counted against
// maxHeaderBytes; repeated Content-Length fields with the same value are
// taken as one (RFC 9110 section 8.6 MAY), a comma-separated list is not;
// HTTP/1.x with x > 1 is served as HTTP/1.1 but reported as sent (section
// 2.6, as net/http); "Expect: 100-continue" in HTTP/1.0 is ignored (RFC
// 9110 section 10.1.1) and the Expect field is kept in Header.

// maxHeaderFields caps the field lines of a header section, and of a
// trailer section. Parsing blocks every client of the loop, and a section
// of tiny fields under maxHeaderBytes costs a map entry and a string per
// field: 256 is far more than browsers (about 20), curl or ab send, and
// bounds that work whatever maxHeaderBytes is.
const maxHeaderFields = 256

// limits bounds what parse accepts.
type limits struct {
	maxHeaderBytes int   // request line + header fields, bytes
	maxBodyBytes   int64 // decoded body; <0 means no body accepted
}

// protoError is a request the server refuses: the loop answers status with
// msg as a text/plain body, with "Connection: close", and closes the
// connection after writing it. status is one of 400, 413, 414, 417, 431,
// 501, 505.
type protoError struct {
	status int
	msg    string
}

// Error names the status and the problem, as
// "gameserver: 400 Bad Request: invalid Content-Length".
func (e *protoError) Error() string {
	return "gameserver: " + strconv.Itoa(e.status) + " " + http.StatusText(e.status) + ": " + e.msg
}

func badRequest(msg string) *protoError { return &protoError{http.StatusBadRequest, msg} }

// The refusals parse returns; shared, so neither the loop nor a test may
// change them.
var (
	errHeaderTooLarge   = &protoError{http.StatusRequestHeaderFieldsTooLarge, "header section too large"}
	errTooManyFields    = &protoError{http.StatusRequestHeaderFieldsTooLarge, "too many header fields"}
	errURITooLong       = &protoError{http.StatusRequestURITooLong, "request line too long"}
	errBodyTooLarge     = &protoError{http.StatusRequestEntityTooLarge, "body too large"}
	errVersion          = &protoError{http.StatusHTTPVersionNotSupported, "HTTP version not supported"}
	errExpectation      = &protoError{http.StatusExpectationFailed, "unsupported Expect"}
	errTransferCoding   = &protoError{http.StatusNotImplemented, "unsupported transfer coding"}
	errRequestLine      = badRequest("malformed request line")
	errMethod           = badRequest("invalid method")
	errTLS              = badRequest("TLS handshake on a plain-HTTP port")
	errTarget           = badRequest("invalid request target")
	errHTTPVersion      = badRequest("malformed HTTP version")
	errFieldName        = badRequest("invalid header field name")
	errFieldValue       = badRequest("invalid header field value")
	errNoColon          = badRequest("header field line without colon")
	errSpaceBeforeColon = badRequest("white space before colon in header field")
	errObsFold          = badRequest("header field line starts with white space")
	errNoHost           = badRequest("missing Host header")
	errManyHosts        = badRequest("multiple Host headers")
	errHost             = badRequest("malformed Host header")
	errContentLength    = badRequest("invalid Content-Length")
	errCLAndTE          = badRequest("both Content-Length and Transfer-Encoding")
	errTE               = badRequest("invalid Transfer-Encoding")
	errTE10             = badRequest("Transfer-Encoding in an HTTP/1.0 request")
	errTrailerKey       = badRequest("bad key in Trailer")
)

// framing is how the body of a request is delimited (RFC 9112 section 6.3).
type framing uint8

const (
	framingHeader  framing = iota // header section not complete yet
	framingLength                 // Content-Length (possibly 0)
	framingChunked                // Transfer-Encoding: chunked
	framingDone                   // complete: parse returned the request
)

// parser frames one request at a time. The zero value is ready; call reset
// after each complete request.
//
// Offsets are into the buf passed to parse, which keeps its prefix between
// calls, so work done on an earlier call is never repeated: the search for
// the end of the header section resumes where it stopped, the header is
// parsed once, and a chunked body is decoded as it arrives.
type parser struct {
	framing   framing
	scan      int // header: where the search for the next LF resumes
	line      int // header: first byte of the line being searched
	start     int // first byte of the request-line, after empty lines
	lines     int // header: non-empty lines seen, request-line included
	method    int // header: where checkMethod resumes; -1 once the method ended
	bodyStart int // first byte after the header section
	end       int // done: first byte after the request
	req       *requestAlloc
	expect100 bool
	chunked   chunkedDecoder
	err       *protoError
	// lookup is the Handler's PreparedHandler.Prepared, nil if it has
	// none (kept by reset): parse answers a request it has a response
	// for with that response, not an http.Request (see p.prepared).
	lookup func(path []byte) *Prepared
	hit    preparedHit // the request parse answered with a prepared response
}

// requestAlloc holds what one request needs in a single allocation.
type requestAlloc struct {
	req    http.Request
	url    url.URL
	body   bodyReader
	ctx    reqCtx
	values [4]string // backs the Header's values when that few fields have them
}

// parse examines buf: the connection's unconsumed input, starting at the
// first byte of the current request (on a later call: the same prefix,
// possibly with more bytes appended). It returns
//
//	(req, n, nil)  a complete request occupying buf[:n]. req.Body yields the
//	               decoded body (http.NoBody when empty); it may alias buf
//	               and is valid until the handler returns. req.Close is set
//	               per RFC 9112 section 9.3. RemoteAddr and the context are
//	               for the loop to set.
//	(nil, n, nil)  a complete request occupying buf[:n], to be answered by
//	               the prepared response in p.hit (only with p.lookup).
//	(nil, 0, nil)  incomplete: call again with more bytes. Then
//	               expectContinue reports whether to send 100 Continue.
//	(nil, 0, *protoError) refuse; later calls return the same error.
//
// The Header is canonical as net/http's: Host, Transfer-Encoding and, for a
// chunked request, Trailer are removed (see Request.Host,
// Request.TransferEncoding and Request.Trailer); duplicate equal
// Content-Length fields become one. Trailer fields of a chunked body are
// stored in req.Trailer.
func (p *parser) parse(buf []byte, lim limits) (*http.Request, int, error) {
	n, err := p.advance(buf, lim)
	if err != nil {
		p.err = err
		return nil, 0, err
	}
	if n == 0 {
		return nil, 0, nil
	}
	p.framing, p.end = framingDone, n
	if p.hit.resp != nil {
		return nil, n, nil
	}
	return &p.req.req, n, nil
}

// advance does parse's work, returning 0 while the request is incomplete.
func (p *parser) advance(buf []byte, lim limits) (int, *protoError) {
	if p.err != nil {
		return 0, p.err
	}
	if p.framing == framingDone {
		return p.end, nil
	}
	if p.framing == framingHeader {
		end, err := p.scanHeader(buf, lim.maxHeaderBytes)
		if err != nil || end < 0 {
			return 0, err
		}
		if p.lookup != nil && p.prepared(buf[p.start:end], p.lookup) {
			return end, nil
		}
		if err := p.readHeader(buf[p.start:end], lim); err != nil {
			return 0, err
		}
		p.bodyStart = end
		p.chunked.begin(end)
	}
	return p.readBody(buf, lim)
}

// expectContinue reports whether the header section is complete, carried
// "Expect: 100-continue" in HTTP/1.1, and the body is still incomplete:
// then the loop writes "HTTP/1.1 100 Continue" once for this request
// (RFC 9110 section 10.1.1).
func (p *parser) expectContinue() bool {
	return p.expect100 && (p.framing == framingLength || p.framing == framingChunked) && p.err == nil
}

// reset prepares p for the next request on the connection. The buffer a
// chunked body was decoded into is kept for reuse unless it grew large.
func (p *parser) reset() {
	c := p.chunked.reuse()
	*p = parser{chunked: c, lookup: p.lookup}
}

// scanHeader finds the end of the header section: the offset just past the
// empty line that ends it, or -1 if buf does not hold it yet. Empty lines
// before the request-line move p.start (RFC 9112 section 2.2). Every limit
// is checked at the first line, or unterminated rest of buf, past it, so
// the verdict is the same however the input is split.
func (p *parser) scanHeader(buf []byte, limit int) (int, *protoError) {
	for {
		i := bytes.IndexByte(buf[p.scan:], '\n')
		if i < 0 {
			p.scan = len(buf)
			break
		}
		lf := p.scan + i
		if lf+1 > limit {
			return -1, p.tooLarge()
		}
		first := p.line
		p.scan, p.line = lf+1, lf+1
		if lf > first && !(lf == first+1 && buf[first] == '\r') {
			if p.lines == 0 {
				if err := p.checkMethod(buf[:lf]); err != nil {
					return -1, err
				}
			}
			p.lines++
			if p.lines-1 > maxHeaderFields {
				return -1, errTooManyFields
			}
			continue
		}
		if first == p.start {
			p.start = lf + 1
			continue
		}
		return lf + 1, nil
	}
	if p.lines == 0 && p.line == p.start {
		if err := p.checkMethod(buf); err != nil {
			return -1, err
		}
	}
	if len(buf) > limit {
		return -1, p.tooLarge()
	}
	return -1, nil
}

// checkMethod refuses a request-line whose method, buf[p.start:] up to the
// first SP, holds a byte that is not a tchar (RFC 9110 sections 9.1 and
// 5.6.2), as soon as that byte arrives: input that is not HTTP (a TLS
// ClientHello sent to a plain-HTTP port, a binary protocol) gets its 400
// at once rather than waiting out the header timeout for a line end that
// may never come. It runs before the request-line's other checks on both
// a complete and an incomplete line, so the verdict is the same however
// the input is split. Bytes already checked are not checked again.
func (p *parser) checkMethod(buf []byte) *protoError {
	if p.method < 0 {
		return nil
	}
	i := max(p.method, p.start)
	for ; i < len(buf); i++ {
		c := buf[i]
		switch {
		case c == ' ':
			p.method = -1
			return nil
		case tokenByte[c]:
			continue
		case i == p.start && (c == '\r' || c == '\n'):
			return nil // an empty line before the request-line (RFC 9112 section 2.2)
		case i == p.start && c == 0x16:
			return errTLS // a TLS record of type handshake (RFC 8446 section 5.1)
		case c == '\r' || c == '\n':
			return errRequestLine // the line ended within the method
		}
		return errMethod
	}
	p.method = i
	return nil
}

// tooLarge is the refusal of a header section past the byte limit: 414 if
// the request-line has not ended within it (a long request-target is what
// makes one long), 431 otherwise.
func (p *parser) tooLarge() *protoError {
	if p.lines == 0 {
		return errURITooLong
	}
	return errHeaderTooLarge
}

// readHeader parses the header section hdr (request-line, field lines and
// the empty line) into p.req and decides the body's framing.
func (p *parser) readHeader(hdr []byte, lim limits) *protoError {
	// One string holds every method, target and field value of the
	// request, so each of them costs no allocation of its own.
	s := string(hdr)
	line, s := cutLine(s)
	a := new(requestAlloc)
	r := &a.req
	if err := parseRequestLine(r, line); err != nil {
		return err
	}
	var f fieldInfo
	// The Host field is not stored (as net/http's server): size the map
	// for the others, so that a request with Host alone allocates no
	// bucket.
	r.Header = make(http.Header, max(p.lines-2, 0))
	if err := f.readFields(r.Header, s, p.lines-1, a.values[:]); err != nil {
		return err
	}
	if err := parseTarget(a, r.RequestURI); err != nil {
		return err
	}
	if err := f.checkHost(r); err != nil {
		return err
	}
	if err := p.setFraming(r, &f, lim); err != nil {
		return err
	}
	if err := setTrailerKeys(r, p.framing == framingChunked); err != nil {
		return err
	}
	if f.expect100 && r.ProtoAtLeast(1, 1) {
		// An HTTP/1.0 client cannot expect 100 Continue: ignore it.
		p.expect100 = true
	}
	r.Close = f.close(r.ProtoMinor)
	if pragma := r.Header["Pragma"]; pragma != nil && pragma[0] == "no-cache" && r.Header["Cache-Control"] == nil {
		r.Header["Cache-Control"] = []string{"no-cache"} // as net/http
	}
	p.req = a
	return nil
}

// readBody reports the end of the request once its body is in buf, or 0.
func (p *parser) readBody(buf []byte, lim limits) (int, *protoError) {
	r := &p.req.req
	if p.framing == framingChunked {
		n, err := p.chunked.decode(buf, lim, r)
		if n > 0 && len(p.chunked.body) > 0 {
			p.req.body.b = p.chunked.body
			r.Body = &p.req.body
		}
		return n, err
	}
	if r.ContentLength > int64(len(buf)-p.bodyStart) {
		return 0, nil
	}
	end := p.bodyStart + int(r.ContentLength)
	if r.ContentLength > 0 {
		p.req.body.b = buf[p.bodyStart:end]
		r.Body = &p.req.body
	}
	return end, nil
}

// cutLine returns the line at the start of s without its LF or CRLF, and
// the rest of s after the LF. s must contain an LF.
func cutLine(s string) (line, rest string) {
	i := strings.IndexByte(s, '\n')
	line, rest = s[:i], s[i+1:]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, rest
}

// parseRequestLine sets r's Method, RequestURI and Proto fields from
// method SP request-target SP HTTP-version (RFC 9112 section 3). Only
// HTTP-version is checked beyond splitting (the target is checked by
// parseTarget).
func parseRequestLine(r *http.Request, line string) *protoError {
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return errRequestLine
	}
	major, minor, ok := parseVersion(proto)
	switch {
	case !ok:
		return errHTTPVersion
	case major != 1:
		return errVersion
	case !isToken(method):
		return errMethod
	case target == "":
		return errTarget
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return errTarget
		}
	}
	r.Method, r.RequestURI = method, target
	r.Proto, r.ProtoMajor, r.ProtoMinor = proto, major, minor
	return nil
}

// parseVersion parses HTTP-version, "HTTP/" DIGIT "." DIGIT (RFC 9112
// section 2.3; the name is case-sensitive).
func parseVersion(v string) (major, minor int, ok bool) {
	if len(v) != len("HTTP/1.1") || v[:5] != "HTTP/" || v[6] != '.' ||
		!isDigit(v[5]) || !isDigit(v[7]) {
		return 0, 0, false
	}
	return int(v[5] - '0'), int(v[7] - '0'), true
}

// parseTarget sets a.req.URL (and Host, for absolute-form) from the
// request-target (RFC 9112 section 3.2), with url.ParseRequestURI's
// results as net/http.
func parseTarget(a *requestAlloc, target string) *protoError {
	r := &a.req
	switch {
	case target == "*":
		if r.Method != http.MethodOptions {
			return errTarget
		}
		a.url.Path = "*"
		r.URL = &a.url
		return nil
	case r.Method == http.MethodConnect:
		// authority-form: net/http parses it as the authority of a URL.
		u, err := url.ParseRequestURI("http://" + target)
		if err != nil || u.Host == "" || u.Port() == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.ForceQuery {
			return errTarget
		}
		u.Scheme = ""
		r.URL, r.Host = u, u.Host
		return nil
	case target[0] == '/':
		if !originForm(&a.url, target) {
			u, err := url.ParseRequestURI(target)
			if err != nil {
				return errTarget
			}
			a.url = *u
		}
		r.URL = &a.url
		return nil
	}
	u, err := url.ParseRequestURI(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errTarget
	}
	r.URL, r.Host = u, u.Host
	return nil
}

// originForm sets u as url.ParseRequestURI(t) would for an origin-form t
// whose path needs no escaping, without allocating. It reports false,
// leaving u alone, for any other t.
func originForm(u *url.URL, t string) bool {
	q := strings.IndexByte(t, '?')
	path := t
	if q >= 0 {
		path = t[:q]
	}
	for i := 0; i < len(path); i++ {
		if !pathByte[path[i]] {
			return false
		}
	}
	u.Path = path
	if q < 0 {
		return true
	}
	if q == len(t)-1 {
		u.ForceQuery = true
		return true
	}
	u.RawQuery = t[q+1:]
	return true
}

// bodyReader is a request body already in memory.
type bodyReader struct{ b []byte }

func (r *bodyReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// WriteTo lets io.Copy and io.ReadAll skip a buffer.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(r.b)
	r.b = r.b[n:]
	return int64(n), err
}

func (r *bodyReader) Close() error { return nil }
