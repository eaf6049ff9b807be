package gameserver

import (
	"bytes"
	"math"
	"net/http"
)

// The chunked transfer coding (RFC 9112 section 7.1), decoded as it
// arrives. Strict as net/http's reader: every chunk-size line, the end of
// every chunk's data and every trailer line must end in CRLF (a bare LF is
// refused, RFC 9112 errata 7633); chunk-size is 1 to 16 HEXDIG followed by
// optional SP/HTAB or by ";" and chunk extensions (ignored, but control
// characters are refused; white space before ";" is refused as net/http
// does). Each refusal is 400, but a chunk that would take the decoded body
// past limits.maxBodyBytes is 413 as soon as its size is read, and a
// trailer section over limits.maxHeaderBytes or with more than
// maxHeaderFields field lines is 431.
const (
	// maxChunkLine bounds a chunk-size line without its CRLF, in bytes,
	// as net/http's maxLineLength.
	maxChunkLine = 4095
	// maxChunkOverhead bounds framing bytes not justified by the data
	// they carry (16 bytes plus twice the size per chunk, as net/http), so
	// a body of tiny chunks with long extensions cannot cost unbounded
	// input for a small decoded body. It is also the least framing a body
	// may have in all (see maxFraming).
	maxChunkOverhead = 16 << 10
	// maxKeptBody is the largest decode buffer a parser keeps for its next
	// request.
	maxKeptBody = 64 << 10
)

var (
	errChunkSize    = badRequest("invalid chunk size")
	errChunkLine    = badRequest("chunked line not ended by CRLF")
	errChunkLong    = badRequest("chunk-size line too long")
	errChunkEnd     = badRequest("chunk data not followed by CRLF")
	errChunkExcess  = badRequest("chunked encoding contains too much non-data")
	errTrailerLarge = &protoError{http.StatusRequestHeaderFieldsTooLarge, "trailer section too large"}
	errTrailerMany  = &protoError{http.StatusRequestHeaderFieldsTooLarge, "too many trailer fields"}
)

// chunkPhase is what a chunkedDecoder expects next.
type chunkPhase uint8

const (
	chunkSizeLine chunkPhase = iota // chunk-size [chunk-ext] CRLF
	chunkData                       // the rest of the chunk's data
	chunkDataEnd                    // the CRLF after a chunk's data
	chunkTrailer                    // trailer section, ended by an empty line
)

// chunkedDecoder decodes a chunked body into body. Offsets are into the
// parser's buf.
type chunkedDecoder struct {
	phase   chunkPhase
	pos     int   // next byte to decode
	scan    int   // where the search for the current line's LF resumes
	left    int64 // data bytes of the current chunk not yet decoded
	start   int   // first byte of the body in the parser's buf
	excess  int64 // framing overhead not justified by data
	trailer int   // first byte of the trailer section
	fields  int   // trailer field lines seen
	body    []byte
}

// begin starts decoding at buf[start].
func (d *chunkedDecoder) begin(start int) {
	d.start, d.pos, d.scan = start, start, start
}

// maxFraming bounds all the framing of one chunked body (chunk-size lines,
// extensions and CRLFs, not data nor trailers) at the body limit, or
// maxChunkOverhead if larger. The raw body, which the connection keeps
// until the request is complete, is then at most about twice the body
// limit, whatever the chunk sizes: without it, 1-byte chunks with long
// extensions cost some 18 raw bytes per decoded byte.
func maxFraming(lim limits) int64 { return max(lim.maxBodyBytes, maxChunkOverhead) }

// reuse returns a fresh decoder that keeps d's buffer if it is small.
func (d *chunkedDecoder) reuse() chunkedDecoder {
	if cap(d.body) > maxKeptBody {
		return chunkedDecoder{}
	}
	return chunkedDecoder{body: d.body[:0]}
}

// decode decodes what buf holds of the body. It returns the offset just
// past the body's last byte (and its trailer section) once it is all in
// buf, or 0; trailer fields go to r.Trailer.
func (d *chunkedDecoder) decode(buf []byte, lim limits, r *http.Request) (int, *protoError) {
	for {
		more := false
		var err *protoError
		switch d.phase {
		case chunkSizeLine:
			more, err = d.readSize(buf, lim)
		case chunkData:
			more = d.readData(buf)
		case chunkDataEnd:
			more, err = d.readDataEnd(buf)
		case chunkTrailer:
			return d.readTrailer(buf, lim, r)
		}
		if err != nil || !more {
			return 0, err
		}
	}
}

// readSize reads a chunk-size line, reporting whether it was complete.
func (d *chunkedDecoder) readSize(buf []byte, lim limits) (bool, *protoError) {
	lf := bytes.IndexByte(buf[d.scan:], '\n')
	if lf < 0 {
		d.scan = len(buf)
		if len(buf)-d.pos > maxChunkLine+1 {
			return false, errChunkLong
		}
		return false, nil
	}
	line, err := d.cutLine(buf, d.scan+lf)
	if err != nil {
		return false, err
	}
	if len(line) > maxChunkLine {
		return false, errChunkLong
	}
	size, err := parseChunkSize(line)
	if err != nil {
		return false, err
	}
	d.excess += int64(len(line)) + 2 - 16 - 2*min(size, 1<<32)
	d.excess = max(d.excess, 0)
	framing := int64(d.pos-d.start) - int64(len(d.body))
	switch {
	case d.excess > maxChunkOverhead, framing > maxFraming(lim):
		return false, errChunkExcess
	case size == 0:
		d.phase, d.trailer = chunkTrailer, d.pos
	case lim.maxBodyBytes < 0 || size > lim.maxBodyBytes-int64(len(d.body)):
		return false, errBodyTooLarge
	default:
		d.phase, d.left = chunkData, size
	}
	return true, nil
}

// cutLine returns buf[d.pos:lf] without its CR, moving past the LF at lf;
// the line must end in CRLF.
func (d *chunkedDecoder) cutLine(buf []byte, lf int) ([]byte, *protoError) {
	line := buf[d.pos:lf]
	if len(line) == 0 || line[len(line)-1] != '\r' {
		return nil, errChunkLine
	}
	d.pos, d.scan = lf+1, lf+1
	return line[:len(line)-1], nil
}

// parseChunkSize parses chunk-size [chunk-ext] (RFC 9112 section 7.1.1).
// A size over 2^63-1 is reported as 2^63-1: it is over any body limit.
func parseChunkSize(line []byte) (int64, *protoError) {
	var n uint64
	i := 0
	for ; i < len(line); i++ {
		v, ok := hexValue(line[i])
		if !ok {
			break
		}
		if i == 16 {
			return 0, errChunkSize
		}
		n = n<<4 | uint64(v)
	}
	if i == 0 {
		return 0, errChunkSize
	}
	rest := line[i:]
	ext := len(rest) > 0 && rest[0] == ';'
	for _, c := range rest {
		if ext && !valueByte[c] || !ext && c != ' ' && c != '\t' {
			return 0, errChunkSize
		}
	}
	return int64(min(n, math.MaxInt64)), nil
}

func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// readData copies what buf holds of the current chunk's data, reporting
// whether the chunk is complete.
func (d *chunkedDecoder) readData(buf []byte) bool {
	k := int(min(int64(len(buf)-d.pos), d.left))
	d.body = append(d.body, buf[d.pos:d.pos+k]...)
	d.pos += k
	d.left -= int64(k)
	if d.left > 0 {
		return false
	}
	d.phase = chunkDataEnd
	return true
}

// readDataEnd checks the CRLF after a chunk's data, reporting whether it
// was complete; a wrong first byte is refused without waiting for the
// second.
func (d *chunkedDecoder) readDataEnd(buf []byte) (bool, *protoError) {
	rest := buf[d.pos:]
	if len(rest) > 0 && rest[0] != '\r' || len(rest) > 1 && rest[1] != '\n' {
		return false, errChunkEnd
	}
	if len(rest) < 2 {
		return false, nil
	}
	d.pos += 2
	d.scan = d.pos
	d.phase = chunkSizeLine
	return true, nil
}

// readTrailer finds the end of the trailer section and, once it is in
// buf, parses its fields into r.Trailer, returning the offset past it.
func (d *chunkedDecoder) readTrailer(buf []byte, lim limits, r *http.Request) (int, *protoError) {
	for {
		lf := bytes.IndexByte(buf[d.scan:], '\n')
		if lf < 0 {
			d.scan = len(buf)
			if len(buf)-d.trailer > lim.maxHeaderBytes {
				return 0, errTrailerLarge
			}
			return 0, nil
		}
		lf += d.scan
		if lf+1-d.trailer > lim.maxHeaderBytes {
			return 0, errTrailerLarge
		}
		line, err := d.cutLine(buf, lf)
		if err != nil {
			return 0, err
		}
		if len(line) == 0 {
			if err := setTrailer(r, buf[d.trailer:d.pos]); err != nil {
				return 0, err
			}
			return d.pos, nil
		}
		if d.fields++; d.fields > maxHeaderFields {
			return 0, errTrailerMany
		}
	}
}

// setTrailerKeys moves the Trailer field of a chunked request into
// r.Trailer's keys, as net/http does; the trailer section fills in the
// values.
func setTrailerKeys(r *http.Request, chunked bool) *protoError {
	vv := r.Header["Trailer"]
	if !chunked || vv == nil {
		return nil
	}
	delete(r.Header, "Trailer")
	var err *protoError
	for _, v := range vv {
		forEachElement(v, func(e string) {
			key := http.CanonicalHeaderKey(e)
			switch key {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				err = errTrailerKey
			}
			if r.Trailer == nil {
				r.Trailer = make(http.Header)
			}
			r.Trailer[key] = nil
		})
	}
	return err
}

// setTrailer adds the fields of a trailer section (RFC 9112 section 7.1.2)
// to r.Trailer, which net/http also fills with any field, declared in
// Trailer or not. The fields follow the header section's rules.
func setTrailer(r *http.Request, section []byte) *protoError {
	s := string(section)
	for {
		key, value, rest, err := cutField(s)
		if err != nil || key == "" {
			return err
		}
		s = rest
		if r.Trailer == nil {
			r.Trailer = make(http.Header)
		}
		r.Trailer[key] = append(r.Trailer[key], value)
	}
}
