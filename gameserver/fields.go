package gameserver

import (
	"math"
	"net/http"
	"strings"
)

// Header field lines (RFC 9112 section 5, RFC 9110 section 5): what
// readHeader makes of them, the framing they decide, and the byte classes
// the parser checks them with.

// fieldInfo collects, while the header fields are read, what framing and
// connection handling need.
type fieldInfo struct {
	host           string // first Host value
	hosts          int
	contentLength  string // first Content-Length value
	contentLengths int    // Content-Length fields
	clConflict     bool   // a later Content-Length differs
	te             []string
	closeToken     bool // Connection: close
	keepAlive      bool // Connection: keep-alive
	expect100      bool
	expectOther    bool
	conditional    bool // Range or a precondition (If-*): the answer depends on it
}

// readFields parses the field lines in s (ended by the empty line) into h,
// which n lines fill (RFC 9112 section 5). small, if it has room, backs
// the values (the request's own array, which costs no allocation). With h
// nil it only checks the lines and notes what they mean (see
// parser.prepared).
func (f *fieldInfo) readFields(h http.Header, s string, n int, small []string) *protoError {
	// One backing array for the common single-valued fields, as
	// textproto.Reader does; one line is most likely Host, not stored.
	var strs []string
	if k := max(n-1, 0); k <= len(small) {
		strs = small[:k]
	} else {
		strs = make([]string, k)
	}
	for {
		key, value, rest, err := cutField(s)
		if err != nil {
			return err
		}
		if key == "" {
			break
		}
		s = rest
		f.note(key, value)
		if key == "Host" || h == nil {
			continue
		}
		if vv := h[key]; vv != nil || len(strs) == 0 {
			h[key] = append(vv, value)
			continue
		}
		vv := strs[:1:1]
		strs = strs[1:]
		vv[0] = value
		h[key] = vv
	}
	if f.expectOther {
		return errExpectation
	}
	return nil
}

// cutField parses the field line at the start of s into its canonical
// field name and its value without surrounding white space (RFC 9112
// section 5.1). An empty line returns key "".
func cutField(s string) (key, value, rest string, err *protoError) {
	line, rest := cutLine(s)
	if line == "" {
		return "", "", rest, nil
	}
	colon := strings.IndexByte(line, ':')
	switch {
	case line[0] == ' ' || line[0] == '\t':
		return "", "", "", errObsFold
	case colon < 0:
		return "", "", "", errNoColon
	case colon > 0 && (line[colon-1] == ' ' || line[colon-1] == '\t'):
		return "", "", "", errSpaceBeforeColon
	case !isToken(line[:colon]):
		return "", "", "", errFieldName
	}
	value = trimOWS(line[colon+1:])
	for i := 0; i < len(value); i++ {
		if !valueByte[value[i]] {
			return "", "", "", errFieldValue
		}
	}
	return canonicalKey(line[:colon]), value, rest, nil
}

// note records what the field key: value means for framing.
func (f *fieldInfo) note(key, value string) {
	switch key {
	case "Host":
		if f.hosts == 0 {
			f.host = value
		}
		f.hosts++
	case "Content-Length":
		f.contentLengths++
		if f.contentLengths == 1 {
			f.contentLength = value
		} else if value != f.contentLength {
			f.clConflict = true
		}
	case "Transfer-Encoding":
		f.te = append(f.te, value)
	case "Connection":
		forEachElement(value, func(e string) {
			f.closeToken = f.closeToken || strings.EqualFold(e, "close")
			f.keepAlive = f.keepAlive || strings.EqualFold(e, "keep-alive")
		})
	case "Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since":
		f.conditional = true // RFC 9110 sections 13.1 and 14.2
	case "Expect":
		// A non-empty value must be a list of 100-continue only.
		n := 0
		forEachElement(value, func(e string) {
			n++
			if strings.EqualFold(e, "100-continue") {
				f.expect100 = true
			} else {
				f.expectOther = true
			}
		})
		f.expectOther = f.expectOther || value != "" && n == 0
	}
}

// checkHost sets r.Host from the Host field unless the target was in
// absolute-form (RFC 9112 section 3.2). The field itself is not kept in
// r.Header, as net/http's server does.
func (f *fieldInfo) checkHost(r *http.Request) *protoError {
	switch {
	case f.hosts > 1:
		return errManyHosts
	case f.hosts == 0 && r.ProtoAtLeast(1, 1):
		return errNoHost
	case f.hosts == 0:
		return nil
	}
	for i := 0; i < len(f.host); i++ {
		if !hostByte[f.host[i]] {
			return errHost
		}
	}
	if r.Host == "" {
		r.Host = f.host
	}
	return nil
}

// setFraming decides how the body is delimited (RFC 9112 section 6.3) and
// sets r's ContentLength, TransferEncoding and Body (http.NoBody until the
// body is complete).
func (p *parser) setFraming(r *http.Request, f *fieldInfo, lim limits) *protoError {
	r.Body = http.NoBody
	p.framing = framingLength
	if f.te != nil {
		if err := checkTransferEncoding(r, f); err != nil {
			return err
		}
		delete(r.Header, "Transfer-Encoding")
		r.TransferEncoding = []string{"chunked"}
		r.ContentLength = -1
		p.framing = framingChunked
		return nil
	}
	if f.clConflict {
		return errContentLength
	}
	if f.contentLengths == 0 {
		return nil
	}
	n, ok := parseContentLength(f.contentLength)
	switch {
	case !ok:
		return errContentLength
	case n > 0 && n > lim.maxBodyBytes:
		return errBodyTooLarge
	}
	if len(r.Header["Content-Length"]) > 1 {
		r.Header["Content-Length"] = r.Header["Content-Length"][:1:1]
	}
	r.ContentLength = n
	return nil
}

// checkTransferEncoding accepts exactly one Transfer-Encoding field whose
// value is "chunked", case-insensitively (RFC 9112 sections 6.1 and 7).
// HTTP/1.0 is 400; then an unknown coding anywhere is 501; then a
// Content-Length, a malformed list, chunked twice or several fields is 400.
func checkTransferEncoding(r *http.Request, f *fieldInfo) *protoError {
	unknown := false
	for _, v := range f.te {
		forEachElement(v, func(e string) {
			unknown = unknown || !strings.EqualFold(e, "chunked")
		})
	}
	switch {
	case !r.ProtoAtLeast(1, 1):
		return errTE10
	case unknown:
		return errTransferCoding
	case f.contentLengths > 0:
		return errCLAndTE
	case len(f.te) != 1 || !strings.EqualFold(f.te[0], "chunked"):
		return errTE
	}
	return nil
}

// parseContentLength parses Content-Length = 1*DIGIT (RFC 9110 section
// 8.6), reporting false for anything else or a value over 2^63-1.
func parseContentLength(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		d := int64(s[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// close reports whether the connection closes after this request (RFC
// 9112 section 9.3): HTTP/1.0 unless keep-alive, HTTP/1.1 on close.
func (f *fieldInfo) close(minor int) bool {
	if minor == 0 {
		return f.closeToken || !f.keepAlive
	}
	return f.closeToken
}

// forEachElement calls fn with each non-empty element of the
// comma-separated list v, without surrounding white space (RFC 9110
// section 5.6.1).
func forEachElement(v string, fn func(string)) {
	for v != "" {
		var e string
		e, v, _ = strings.Cut(v, ",")
		if e = trimOWS(e); e != "" {
			fn(e)
		}
	}
}

// trimOWS removes optional white space, SP and HTAB (RFC 9110 section
// 5.6.3), from both ends of s.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// canonicalKey returns the canonical form of the field name k, a token, as
// textproto.CanonicalMIMEHeaderKey does: upper case first and after each
// hyphen, lower case elsewhere. A name already canonical is returned as
// is, a common one from a table; only other names allocate.
func canonicalKey(k string) string {
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return canonicalize(k)
		}
		upper = c == '-'
	}
	return k
}

func canonicalize(k string) string {
	var stack [64]byte
	b := stack[:0]
	if len(k) > len(stack) {
		b = make([]byte, 0, len(k))
	}
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
		upper = c == '-'
	}
	if v, ok := commonKeys[string(b)]; ok {
		return v
	}
	return string(b)
}

// commonKeys interns field names that clients (curl, browsers, load
// generators) often send in other than canonical case.
var commonKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Authorization",
		"Cache-Control", "Connection", "Content-Length", "Content-Type", "Cookie", "Dnt",
		"Expect", "Host", "If-Modified-Since", "If-None-Match", "Keep-Alive", "Origin",
		"Pragma", "Priority", "Range", "Referer", "Sec-Ch-Ua", "Sec-Ch-Ua-Mobile",
		"Sec-Ch-Ua-Platform", "Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site",
		"Sec-Fetch-User", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Upgrade-Insecure-Requests", "User-Agent", "X-Forwarded-For", "X-Forwarded-Proto",
		"X-Real-Ip", "X-Requested-With",
	} {
		m[k] = k
	}
	return m
}()

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isToken reports whether s is a token, 1*tchar (RFC 9110 section 5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return s != ""
}

// Byte classes, as tables for speed.
var (
	// tokenByte: tchar (RFC 9110 section 5.6.2).
	tokenByte = byteSet("!#$%&'*+-.^_`|~", true)
	// valueByte: field-vchar, SP and HTAB (RFC 9110 section 5.5): VCHAR and
	// obs-text, so anything but controls and DEL.
	valueByte = func() (t [256]bool) {
		for c := range t {
			t[c] = c == '\t' || c >= ' ' && c != 0x7f
		}
		return t
	}()
	// hostByte: what net/http's server accepts in Host (httpguts).
	hostByte = byteSet("!$%&'()*+,-.:;=[]_~", true)
	// pathByte: what url.URL leaves unescaped in a path (pchar and "/"
	// without pct-encoded and most sub-delims), so a path of these bytes
	// has Path equal to the raw path and no RawPath.
	pathByte = byteSet("-_.~$&+,/:;=@", true)
)

// byteSet returns a table of the bytes in extra plus, if alnum, ASCII
// letters and digits.
func byteSet(extra string, alnum bool) (t [256]bool) {
	for i := 0; i < len(extra); i++ {
		t[extra[i]] = true
	}
	for c := byte('0'); alnum && c <= 'z'; c++ {
		if isDigit(c) || 'a' <= c || 'A' <= c && c <= 'Z' {
			t[c] = true
		}
	}
	return t
}
