package testkit

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Event is one message of an event stream as a test reads it (WHATWG
// HTML 9.2.6, the fields the game uses): its event, id and data fields,
// the data's lines joined by "\n".
type Event struct {
	Event, ID, Data string
}

// EventStream reads an event stream's messages on a goroutine of its own
// (ReadEvents, OpenEvents).
type EventStream struct {
	// Events are the messages as they arrive: one with a data field (as a
	// browser dispatches them, ParseEvents); a comment line (a heartbeat)
	// as an Event named ":" with EventsOptions.Comments, a message with an
	// id and no data as one named "id" with EventsOptions.IDs.
	Events chan Event
	// Done receives the read's end, once: io.EOF for a stream the server
	// ended.
	Done chan error

	resp *http.Response
	opt  EventsOptions
}

// EventsOptions say which messages besides events an EventStream
// reports.
type EventsOptions struct {
	Comments bool // comment lines, as events named ":"
	IDs      bool // messages with only an id, as events named "id"
}

// EventWait is how long Next waits for a message.
const EventWait = 10 * time.Second

// ReadEvents reads the event stream of resp, an open response, whose
// body it closes when the test ends.
func ReadEvents(t testing.TB, resp *http.Response, opt EventsOptions) *EventStream {
	t.Helper()
	s := &EventStream{Events: make(chan Event, 100), Done: make(chan error, 1), resp: resp, opt: opt}
	t.Cleanup(func() { resp.Body.Close() })
	go s.read()
	return s
}

// OpenEvents sends req with c (nil: http.DefaultClient, any timeout of
// c's lifted: a stream outlives it) and reads its event stream; it fails
// the test unless the response is a 200 text/event-stream.
func OpenEvents(t testing.TB, c *http.Client, req *http.Request, opt EventsOptions) *EventStream {
	t.Helper()
	sc := http.Client{}
	if c != nil {
		sc = *c
	}
	sc.Timeout = 0
	resp, err := sc.Do(req)
	require.NoError(t, err)
	s := ReadEvents(t, resp, opt)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return s
}

func (s *EventStream) read() {
	r := bufio.NewReader(s.resp.Body)
	var m message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			s.Done <- err
			return
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if strings.HasPrefix(line, ":") {
			if s.opt.Comments {
				s.Events <- Event{Event: ":"}
			}
			continue
		}
		if line != "" {
			m.add(line)
			continue
		}
		if ev, ok := m.dispatch(); ok {
			s.Events <- ev
		} else if s.opt.IDs && ev.ID != "" {
			s.Events <- Event{Event: "id", ID: ev.ID}
		}
	}
}

// ParseEvents reads text, a whole event stream, as WHATWG's
// "Interpreting an event stream" does (HTML 9.2.6): lines end with CRLF,
// LF or CR; comments and retry fields are skipped; a message is
// dispatched at an empty line if it had a data field, its data the data
// fields' values joined by "\n". Unlike a browser's last event ID, an
// Event's ID is its own message's id field.
func ParseEvents(text string) []Event {
	var out []Event
	var m message
	for _, line := range strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text), "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
		case line != "":
			m.add(line)
		default:
			if ev, ok := m.dispatch(); ok {
				out = append(out, ev)
			}
		}
	}
	return out
}

// message is an event stream's message being read: its fields so far and
// its data buffer, each data field's value followed by "\n".
type message struct {
	ev   Event
	data strings.Builder
}

// add takes one field line of a message.
func (m *message) add(line string) {
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "event":
		m.ev.Event = value
	case "id":
		m.ev.ID = value
	case "data":
		m.data.WriteString(value)
		m.data.WriteByte('\n')
	}
}

// dispatch returns the message read, ended by an empty line, and starts
// the next; ok is false if it had no data field (WHATWG dispatches
// nothing then: ev still holds its id and event fields).
func (m *message) dispatch() (ev Event, ok bool) {
	ev, ok = m.ev, m.data.Len() > 0
	ev.Data = strings.TrimSuffix(m.data.String(), "\n")
	m.ev = Event{}
	m.data.Reset()
	return ev, ok
}

// End waits for the stream's end, its messages read and dropped, and
// returns the read's end (io.EOF when the server ended it); it fails the
// test if the stream has not ended within d.
func (s *EventStream) End(t testing.TB, d time.Duration) error {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case <-s.Events:
		case err := <-s.Done:
			s.Done <- err
			return err
		case <-deadline:
			require.FailNow(t, "the event stream did not end", "within %v", d)
		}
	}
}

// Close closes the stream's connection, as a browser tab that goes away.
func (s *EventStream) Close() error { return s.resp.Body.Close() }

// Next returns the next message, failing the test if the stream ends or
// none comes within EventWait.
func (s *EventStream) Next(t testing.TB) Event {
	t.Helper()
	select {
	case ev := <-s.Events:
		return ev
	case err := <-s.Done:
		select {
		case ev := <-s.Events: // read before the end: select chose at random
			s.Done <- err
			return ev
		default:
		}
		require.FailNow(t, "the event stream ended", "%v", err)
	case <-time.After(EventWait):
		require.FailNow(t, "no event within "+EventWait.String())
	}
	return Event{}
}

// Until returns the messages up to and including the first named kind.
func (s *EventStream) Until(t testing.TB, kind string) []Event {
	t.Helper()
	var got []Event
	for {
		ev := s.Next(t)
		got = append(got, ev)
		if ev.Event == kind {
			return got
		}
	}
}

// Wait returns the first message that match accepts, failing the test
// if the stream ends or none comes within d.
func (s *EventStream) Wait(t testing.TB, d time.Duration, match func(Event) bool) Event {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-s.Events:
			if match(ev) {
				return ev
			}
		case err := <-s.Done:
			s.Done <- err
			for { // what was read before the end
				select {
				case ev := <-s.Events:
					if match(ev) {
						return ev
					}
					continue
				default:
				}
				require.FailNow(t, "the event stream ended", "%v", err)
			}
		case <-deadline:
			require.FailNow(t, "no such event on the stream", "within %v", d)
		}
	}
}
