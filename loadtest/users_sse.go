package loadtest

import (
	"bytes"
	"io"
	"unsafe"
)

// sseDecoder decodes an event stream's body as its bytes arrive, in one
// pass over the read buffer: the chunked transfer coding when the
// response has it (the raw path's parser, response.feedBody), then the
// stream's lines (WHATWG HTML section 9.2), calling dispatch with each
// event. Once its buffers
// have grown to the stream's longest line it allocates nothing for an
// event: the names are kept once per stream, the ids cut from a small
// arena (strings.Builder's way), the data joined in a buffer the event
// borrows.
type sseDecoder struct {
	dispatch func(*Event)
	body     response // the body's framing: chunked, or until the server closes

	line    []byte // the stream's line so far, when a read ended inside it
	cr      bool   // the last line ended at a CR: an LF next is the same line end
	data    []byte
	hasData bool
	ev      Event
	names   []string // the event names met, each made a string once
	arena   []byte   // where ids are cut from (see id)
}

// newSSEDecoder decodes a body in chunks (chunked) or up to the
// connection's end.
func newSSEDecoder(chunked bool, dispatch func(*Event)) *sseDecoder {
	d := &sseDecoder{dispatch: dispatch}
	d.body.state = stateClose
	if chunked {
		d.body.state = stateChunkSize
	}
	return d
}

// feed decodes b, all of it unless the body ended (io.EOF: the last
// chunk) or its framing is malformed.
func (d *sseDecoder) feed(b []byte) error {
	for len(b) > 0 {
		if d.body.state == stateDone {
			return io.EOF
		}
		st := d.body.state
		n, err := d.body.feedBody(b)
		if st == stateChunkData || st == stateClose {
			d.lines(b[:n])
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	if d.body.state == stateDone {
		return io.EOF
	}
	return nil
}

// indexEOL is the index of the first CR or LF in b, -1 if none.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}

// lines splits the stream's bytes into lines, each ended by CRLF, LF or
// a CR alone (WHATWG HTML section 9.2.5), a line cut by the end of b kept
// for the next call, as is a CR that ended b (an LF after it ends no
// line).
func (d *sseDecoder) lines(b []byte) {
	for len(b) > 0 {
		if d.cr {
			d.cr = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := indexEOL(b)
		if i < 0 {
			d.line = append(d.line, b...)
			return
		}
		line := b[:i]
		if len(d.line) > 0 {
			d.line = append(d.line, line...)
			line = d.line
		}
		d.field(line)
		d.cr = b[i] == '\r'
		d.line, b = d.line[:0], b[i+1:]
	}
}

// field takes one line of the stream: a blank line dispatches the event
// (when it has data), a comment is skipped, else the field's value is
// kept (event, data, id; others ignored).
func (d *sseDecoder) field(line []byte) {
	if len(line) == 0 {
		if d.hasData {
			d.ev.Data = d.data
			if d.ev.Name == "" {
				d.ev.Name = "message"
			}
			d.dispatch(&d.ev)
		}
		d.ev, d.data, d.hasData = Event{}, d.data[:0], false
		return
	}
	if line[0] == ':' {
		return // a comment: the heartbeat
	}
	name, value := line, []byte(nil)
	for i, c := range line {
		if c == ':' {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			break
		}
	}
	switch string(name) {
	case "event":
		d.ev.Name = d.name(value)
	case "data":
		if d.hasData {
			d.data = append(d.data, '\n')
		}
		d.data, d.hasData = append(d.data, value...), true
	case "id":
		d.ev.ID = d.id(value)
	}
}

// name is b as a string, made once per stream for each of the first
// names met (a stream has a handful: tick, player, feed...).
func (d *sseDecoder) name(b []byte) string {
	for _, s := range d.names {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(d.names) < 16 {
		d.names = append(d.names, s)
	}
	return s
}

// idArena is the size of the blocks ids are cut from.
const idArena = 512

// id is b as a string, cut from the stream's arena: bytes once written
// there are never changed, and a full arena is left to the strings that
// point into it (the garbage collector keeps it while one does), so the
// string is as immutable as any, for one allocation per idArena bytes of
// ids instead of one an event.
func (d *sseDecoder) id(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > idArena/4 {
		return string(b)
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, idArena)
	}
	start := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[start], len(b))
}
