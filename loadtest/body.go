package loadtest

import "bytes"

// maxChunkDigits bounds a chunk-size so it fits in an int64.
const maxChunkDigits = 15

// feedBody consumes body bytes from b (never empty) for the current body
// state and returns how many it took. Chunked framing is parsed a byte at a
// time where it must be, so a chunk-size line or a CRLF split across reads
// at any boundary parses the same.
func (r *response) feedBody(b []byte) (int, error) {
	switch r.state {
	case stateLength, stateChunkData:
		return r.feedCounted(b), nil
	case stateClose:
		return len(b), nil
	case stateChunkExt, stateTrailerLine:
		return r.skipLine(b), nil
	default:
		return 1, r.feedChunkByte(b[0])
	}
}

// feedCounted takes up to r.remaining bytes of a Content-Length body or of
// chunk data.
func (r *response) feedCounted(b []byte) int {
	n := int64(len(b))
	if n > r.remaining {
		n = r.remaining
	}
	r.remaining -= n
	if r.remaining == 0 {
		if r.state == stateLength {
			r.state = stateDone
		} else {
			r.state = stateChunkCR
		}
	}
	return int(n)
}

// skipLine skips a chunk extension or trailer field line through its LF.
func (r *response) skipLine(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return len(b)
	}
	if r.state == stateChunkExt {
		r.endChunkSize()
	} else {
		r.state = stateTrailerBOL
	}
	return i + 1
}

// feedChunkByte advances the chunk-size, CRLF and trailer states by one
// byte (RFC 9112 section 7.1).
func (r *response) feedChunkByte(c byte) error {
	switch r.state {
	case stateChunkSize:
		return r.chunkSizeByte(c)
	case stateChunkCR:
		switch c {
		case '\r':
			r.state = stateChunkLF
		case '\n':
			r.state = stateChunkSize
		default:
			return errChunk
		}
	case stateChunkLF:
		if c != '\n' {
			return errChunk
		}
		r.state = stateChunkSize
	case stateTrailerBOL:
		switch c {
		case '\n':
			r.state = stateDone
		case '\r':
			r.state = stateTrailerLF
		default:
			r.state = stateTrailerLine
		}
	case stateTrailerLF:
		if c != '\n' {
			return errChunk
		}
		r.state = stateDone
	}
	return nil
}

// chunkSizeByte takes one byte of a chunk-size line.
func (r *response) chunkSizeByte(c byte) error {
	if v, ok := hexDigit(c); ok {
		if r.digits == maxChunkDigits {
			return errChunk
		}
		r.chunkSize = r.chunkSize<<4 | int64(v)
		r.digits++
		return nil
	}
	if r.digits == 0 {
		return errChunk
	}
	switch c {
	case '\n':
		r.endChunkSize()
	case ';', ' ', '\t', '\r':
		r.state = stateChunkExt // extensions (and BWS) run to the LF
	default:
		return errChunk
	}
	return nil
}

// endChunkSize starts the chunk's data, or the trailer after the last chunk.
func (r *response) endChunkSize() {
	r.remaining, r.chunkSize, r.digits = r.chunkSize, 0, 0
	if r.remaining == 0 {
		r.state = stateTrailerBOL
	} else {
		r.state = stateChunkData
	}
}

func hexDigit(c byte) (byte, bool) {
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
