package loadtest

import (
	"bytes"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseThreshold checks the threshold parser on any text: it never
// panics, keeps the text as written, and what it accepts is a known
// metric and operator with a value of at least 0 that prints in its unit.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<20ms", "page.p99.9<=1.5s", "errors<1%", "rate>=10/s", "max==3", "p42<1", "x.y.z<1", "<", "p99<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			assert.Contains(t, err.Error(), "threshold ")
			return
		}
		assert.Equal(t, s, th.Expr)
		assert.Contains(t, []string{"<", "<=", ">", ">=", "=="}, th.Op)
		assert.True(t, th.Metric == "max" || th.Metric == "rate" || th.Metric == "errors" || isPercentileMetric(th.Metric), th.Metric)
		assert.GreaterOrEqual(t, th.Value, 0.0)
		assert.NotContains(t, th.Step, ".")
		assert.NotEmpty(t, th.unitValue(th.Value))
	})
}

// FuzzReadEnvelope checks the envelope reader on any bytes: it never
// panics, and what it accepts is of a version it knows.
func FuzzReadEnvelope(f *testing.F) {
	for _, s := range []string{`{"kind":"run","schema_version":3,"results":{}}`, `{"complete_requests":1}`, `[{"url":"/"}]`,
		`{"schema_version":9}`, `{"schema_version":"3"}`, `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ReadEnvelope(b)
		if err != nil {
			return
		}
		assert.LessOrEqual(t, e.SchemaVersion, SchemaVersion)
	})
}

// streamOf reads body as a stream's events and returns them.
func streamOf(t testing.TB, body string) []Event {
	r := &usersRun{ctx: t.Context(), causes: newCauseMap(time.Second)}
	r.delivery = newStepStats(DeliveryStep, false)
	client, server := net.Pipe()
	server.Close()
	var got []Event
	s := &Stream{run: r, conn: client, done: make(chan struct{}), stop: func() bool { return true },
		opt: StreamOptions{OnEvent: func(ev *Event) { got = append(got, Event{Name: ev.Name, ID: ev.ID, Data: bytes.Clone(ev.Data)}) }}}
	r.streams.Add(1)
	s.read(strings.NewReader(body), false, nil)
	return got
}

func TestStreamParser(t *testing.T) {
	// Ensure the event stream parser follows the HTML standard's rules:
	// fields split at the first colon, one leading space dropped, data
	// lines joined, an event dispatched at a blank line only with data,
	// CRLF, LF and a last unterminated event dropped.
	got := streamOf(t, "event: a\r\ndata:1\r\ndata:  2\r\n\r\n"+
		": comment\n\n"+
		"id: 7\n\n"+
		"data: x:y\nevent\n\n"+
		"data: no end")
	require.Len(t, got, 2)
	assert.Equal(t, Event{Name: "a", Data: []byte("1\n 2")}, got[0])
	assert.Equal(t, Event{Name: "message", Data: []byte("x:y")}, got[1], "a field without a value resets nothing it should not")
}

// FuzzStreamParser checks the event stream parser on any bytes: it never
// panics, dispatches no more events than blank lines, each named.
func FuzzStreamParser(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "event: a\r\ndata: 1\r\ndata: 2\r\n\r\n", ": c\n\n", "id: 1\ndata:\n\n", strings.Repeat("d", 5000) + "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := streamOf(t, body)
		assert.LessOrEqual(t, len(got), strings.Count(body, "\n"))
		for _, ev := range got {
			assert.NotEmpty(t, ev.Name)
		}
	})
}

func TestCountsStatuses(t *testing.T) {
	// Ensure runs of one status are counted in a register and moved to
	// the map when the status changes or the run is merged.
	var c counts
	for _, code := range []int{200, 200, 404, 200, 200, 200, 503} {
		c.count(code)
	}
	c.flushStatus()
	assert.Equal(t, map[int]int64{200: 5, 404: 1, 503: 1}, c.statuses)
	c.flushStatus()
	assert.Equal(t, map[int]int64{200: 5, 404: 1, 503: 1}, c.statuses, "flushing twice counts nothing twice")
	res := &Result{}
	c.count(200)
	addCounts(res, &c)
	assert.Equal(t, int64(6), res.StatusCodes[200])
}

func TestLockedWriter(t *testing.T) {
	// Ensure writes through a lockedWriter from many goroutines land
	// whole.
	var b bytes.Buffer
	w := &lockedWriter{w: &b}
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			for range 100 {
				w.Write([]byte(strings.Repeat(string(rune('a'+i)), 50) + "\n"))
			}
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 800)
	for _, l := range lines {
		assert.Equal(t, strings.Repeat(l[:1], 50), l)
	}
}

func TestRequestLogBlocks(t *testing.T) {
	// Ensure the request log writes nothing until a block is full, then
	// whole blocks, and the rest when closed; a nil log closes cleanly.
	var b bytes.Buffer
	l := newRequestLog(&b)
	line := []byte(strings.Repeat("x", 99) + "\n")
	l.write(line)
	assert.Zero(t, b.Len(), "not a block yet")
	for b.Len() == 0 {
		l.write(line)
	}
	assert.Zero(t, b.Len()%100, "whole lines")
	require.NoError(t, l.close())
	assert.Zero(t, b.Len()%100)
	assert.Nil(t, newRequestLog(nil))
	assert.NoError(t, (*requestLog)(nil).close())
}

func TestHistogramWhenEmpty(t *testing.T) {
	// Ensure a series that recorded nothing still gives a .hgrm HdrHistogram
	// reads (its header and footer).
	path := t.TempDir() + "/empty.hgrm"
	require.NoError(t, writeHGRMFiles(path, []histogram{{name: "x"}}))
	rows, total, maxMS := readHGRM(t, path)
	for _, r := range rows {
		assert.Zero(t, r.count)
	}
	assert.Zero(t, total)
	assert.False(t, math.IsNaN(maxMS))
}
