package loadtest

import "bytes"

// fields collects what a response's header fields say about framing and
// persistence; the rest are skipped without allocating.
type fields struct {
	length         int64 // Content-Length, -1 when absent
	chunked        bool  // Transfer-Encoding ends in chunked
	transferCoding bool  // Transfer-Encoding present
	close          bool  // Connection: close
	keepAlive      bool  // Connection: keep-alive
}

// add parses one field line. Obsolete line folding (RFC 9112 section 5.2)
// is rejected, as a field line without a colon is.
func (f *fields) add(line []byte, r *response) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
		return errHeaderField
	}
	name, value := line[:colon], trimOWS(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		return f.addLength(value)
	case equalFold(name, "transfer-encoding"):
		f.transferCoding = true
		f.chunked = lastTokenIs(value, "chunked")
	case equalFold(name, "connection"):
		f.close = f.close || hasToken(value, "close")
		f.keepAlive = f.keepAlive || hasToken(value, "keep-alive")
	case r.wantServer && equalFold(name, "server"):
		r.server = string(value)
		r.wantServer = false
	}
	return nil
}

// addLength parses a Content-Length value. Repeated fields (or a list) must
// agree (RFC 9110 section 8.6).
func (f *fields) addLength(v []byte) error {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = trimOWS(v[:i]), v[i+1:]
		} else {
			item, v = trimOWS(v), nil
		}
		n, ok := parseDecimal(item)
		if !ok || (f.length >= 0 && f.length != n) {
			return errContentLength
		}
		f.length = n
	}
	if f.length < 0 {
		return errContentLength
	}
	return nil
}

// parseDecimal parses a non-empty run of ASCII digits that fits in 62 bits.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// hasToken reports whether the comma-separated list v holds token,
// compared case-insensitively.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if equalFold(trimOWS(item), token) {
			return true
		}
	}
	return false
}

// lastTokenIs reports whether the last item of the list v is token.
func lastTokenIs(v []byte, token string) bool {
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	v = trimOWS(v)
	if i := bytes.IndexByte(v, ';'); i >= 0 { // transfer parameters
		v = trimOWS(v[:i])
	}
	return equalFold(v, token)
}

// trimOWS drops optional whitespace (SP, HTAB) at both ends.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b with the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
