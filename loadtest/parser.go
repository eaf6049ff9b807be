package loadtest

import (
	"bytes"
	"errors"
)

// Errors a response parser reports. Each makes the request an Exception in
// ab's breakdown: the server sent something that is not an HTTP/1.x
// response (RFC 9112).
var (
	errStatusLine    = errors.New("loadtest: malformed status line")
	errHeaderField   = errors.New("loadtest: malformed header field")
	errContentLength = errors.New("loadtest: invalid Content-Length")
	errChunk         = errors.New("loadtest: malformed chunked body")
	errHeaderTooBig  = errors.New("loadtest: response header section larger than the read buffer")
)

// Parser states. A response moves from stateHeader to one body state, then
// to stateDone; 1xx interim responses go back to stateHeader.
const (
	stateHeader      = iota // waiting for a complete header section
	stateLength             // Content-Length body: remaining bytes to go
	stateClose              // close-delimited body: everything up to EOF
	stateChunkSize          // reading a chunk-size line (hex digits)
	stateChunkExt           // skipping chunk extensions up to LF
	stateChunkData          // inside chunk data: remaining bytes to go
	stateChunkCR            // expecting the CRLF after chunk data
	stateChunkLF            // expecting the LF after chunk data's CR
	stateTrailerBOL         // at the beginning of a trailer line
	stateTrailerLine        // inside a trailer field line, up to LF
	stateTrailerLF          // after a CR on an empty trailer line
	stateDone               // response complete
)

// response is an incremental HTTP/1.x response parser (RFC 9112). It never
// allocates after the first response (it copies the Server field once, for
// the report) and never copies body bytes: the caller's buffer is only read.
//
// Body framing follows RFC 9112 section 6.3: no body for a HEAD request or a
// 1xx, 204 or 304 response; Transfer-Encoding with chunked last means
// chunked (extensions and trailer fields are skipped); any other
// Transfer-Encoding, or neither header, means the body runs until the server
// closes; otherwise Content-Length counts it. A bare LF is accepted as a line
// terminator (RFC 9112 section 2.2), as ab does.
type response struct {
	state     int
	head      bool  // the request was HEAD: no body whatever the headers say
	scan      int   // where the search for the header's end resumes
	remaining int64 // bytes left in a Content-Length body or a chunk

	// Filled by a parsed header section.
	status     int
	http11     bool
	persistent bool // the server will keep the connection open (RFC 9112 section 9.3)
	chunkSize  int64
	digits     int

	headerBytes int64 // bytes of header sections (1xx ones too)
	bodyBytes   int64 // message body bytes as sent, chunk framing included

	wantServer bool   // copy the Server field (the first response only)
	server     string // the Server field, when wantServer was set
}

// reset prepares r for the next response on the connection.
func (r *response) reset(head, wantServer bool) {
	*r = response{head: head, wantServer: wantServer}
}

// done reports whether a complete response has been parsed.
func (r *response) done() bool { return r.state == stateDone }

// eof tells r the server closed the connection. It reports whether that
// completed the response: true only for a close-delimited body (or one
// already complete).
func (r *response) eof() bool {
	if r.state == stateClose {
		r.state = stateDone
	}
	return r.state == stateDone
}

// feed parses as much of b as it can and returns how many bytes it consumed.
// Bytes after a complete response are not consumed: they belong to the next
// one. A header section is consumed only once it is whole, so with n == 0 and
// no error the caller must read more and call again with b extended; full
// tells feed that b cannot grow, so a header section that does not fit is an
// error.
func (r *response) feed(b []byte, full bool) (n int, err error) {
	for n < len(b) && r.state != stateDone {
		var m int
		if r.state == stateHeader {
			m, err = r.feedHeader(b[n:], full)
			if m == 0 || err != nil {
				return n, err
			}
		} else {
			m, err = r.feedBody(b[n:])
			if err != nil {
				return n + m, err
			}
			r.bodyBytes += int64(m)
		}
		n += m
	}
	return n, nil
}

// feedHeader parses one complete header section at the start of b, if there
// is one, and returns its length.
func (r *response) feedHeader(b []byte, full bool) (int, error) {
	end := headerEnd(b, r.scan)
	if end < 0 {
		if full {
			return 0, errHeaderTooBig
		}
		// Resume a little before the end: the terminator may straddle reads.
		r.scan = max(0, len(b)-3)
		return 0, nil
	}
	r.scan = 0
	if err := r.parseHeader(b[:end]); err != nil {
		return 0, err
	}
	r.headerBytes += int64(end)
	return end, nil
}

// headerEnd returns the length of the header section at the start of b
// (through the empty line ending it), or -1 if b does not hold all of it.
func headerEnd(b []byte, from int) int {
	for i := from; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
	return -1
}

// parseHeader reads the status line and the fields that frame the body and
// decide persistence, then picks the body state.
func (r *response) parseHeader(h []byte) error {
	line, rest := cutLine(h)
	if err := r.parseStatusLine(line); err != nil {
		return err
	}
	f := fields{length: -1}
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		if len(line) == 0 {
			break
		}
		if err := f.add(line, r); err != nil {
			return err
		}
	}
	r.persistent = r.http11 && !f.close || !r.http11 && f.keepAlive
	return r.frame(&f)
}

// frame chooses the body state from the status code and framing fields
// (RFC 9112 section 6.3).
func (r *response) frame(f *fields) error {
	switch {
	case r.status >= 100 && r.status < 200 && r.status != 101:
		r.state = stateHeader // interim: the final response follows
	case r.head || r.status == 204 || r.status == 304 || r.status == 101:
		r.state = stateDone
	case f.chunked:
		r.state = stateChunkSize
	case f.transferCoding:
		r.state, r.persistent = stateClose, false
	case f.length >= 0:
		r.remaining = f.length
		r.state = stateLength
		if f.length == 0 {
			r.state = stateDone
		}
	default:
		r.state, r.persistent = stateClose, false
	}
	if r.status == 101 {
		r.persistent = false // no longer HTTP on this connection
	}
	return nil
}

// parseStatusLine parses "HTTP/1.x NNN reason".
func (r *response) parseStatusLine(line []byte) error {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return errStatusLine
	}
	switch line[7] {
	case '0':
	case '1':
		r.http11 = true
	default:
		return errStatusLine
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return errStatusLine
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return errStatusLine
	}
	r.status = code
	return nil
}

// cutLine splits b after its first line, dropping the LF or CRLF.
func cutLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}
