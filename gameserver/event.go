package gameserver

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Event is one server-sent event, as an EventStream's client reads it
// (WHATWG HTML, "Server-sent events", section "Interpreting an event
// stream"). WriteEvent frames it; MarshalText gives its bytes, for
// Broadcast.
type Event struct {
	// ID is the event's id field: a client that reconnects sends the
	// last one it saw as Last-Event-ID, so a stream can resume where it
	// left off. "" sends none. It may not hold a line break or NUL.
	ID string
	// Event is the event's type, the name a browser's
	// EventSource.addEventListener listens for; "" sends none, and the
	// client dispatches it as "message". It may not hold a line break.
	Event string
	// Data is the event's data. Each of its lines (ended by CR LF, LF or
	// CR) is sent as a data field of its own, and the client joins them
	// again with LF, so any text arrives as it was written. An event
	// with no data is not dispatched by a browser: only its ID and Retry
	// take effect.
	Data string
	// Retry asks the client to wait this long before reconnecting once
	// the stream is lost, sent in whole milliseconds (the retry field).
	// Zero or negative sends none: the client keeps its own (browsers:
	// a few seconds).
	Retry time.Duration
}

// ErrEventField is returned by WriteEvent and MarshalText for an Event
// whose ID or Event holds a line break (or ID a NUL), which would end the
// field early and change the event.
var ErrEventField = errors.New("gameserver: event id or type holds a line break or NUL")

// MarshalText returns e framed as text/event-stream: its fields, one a
// line (event, id, retry, then the data lines), and the empty line that
// ends the event. It returns ErrEventField
// for an ID or Event that cannot be sent.
func (e Event) MarshalText() ([]byte, error) { return e.AppendText(nil) }

// AppendText appends e framed as text/event-stream (see MarshalText) to
// b; b is returned unchanged with ErrEventField.
func (e Event) AppendText(b []byte) ([]byte, error) {
	if strings.ContainsAny(e.ID, "\r\n\x00") || strings.ContainsAny(e.Event, "\r\n") {
		return b, ErrEventField
	}
	if e.Event != "" {
		b = append(append(append(b, "event: "...), e.Event...), '\n')
	}
	if e.ID != "" {
		b = append(append(append(b, "id: "...), e.ID...), '\n')
	}
	if e.Retry > 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), e.Retry.Milliseconds(), 10), '\n')
	}
	for data, more := e.Data, e.Data != ""; more; {
		var line string
		line, data, more = cutEventLine(data)
		b = append(append(append(b, "data: "...), line...), '\n')
	}
	return append(b, '\n'), nil
}

// cutEventLine cuts s at its first line end (CR LF, LF or CR), and
// reports whether one was found: a line end at the very end of s leaves
// one more, empty, line.
func cutEventLine(s string) (line, rest string, found bool) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, "", false
	}
	n := 1
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		n = 2
	}
	return s[:i], s[i+n:], true
}

// WriteEvent queues e on the stream, framed as text/event-stream (see
// MarshalText), as Write queues bytes. It returns ErrEventField, and
// writes nothing, for an Event that cannot be sent, and ErrStreamClosed
// once the stream has ended.
func (s *EventStream) WriteEvent(e Event) error {
	var buf []byte
	if s.fb == nil {
		buf = s.l.eventBuf[:0] // Write copies it; the loop reuses it for the next event
	}
	b, err := e.AppendText(buf)
	if err != nil {
		return err
	}
	if s.fb == nil {
		s.l.eventBuf = b[:0]
	}
	_, err = s.Write(b)
	return err
}
