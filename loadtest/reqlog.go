package loadtest

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// The per-request log (Config.RequestLog, UsersConfig.RequestLog, the
// command's -out): one JSON object a line for each request measured, as
// vegeta's `encode` and k6's `--out json` give them, so that a run can be
// re-binned, merged with another or plotted later:
//
//	{"start":"2026-12-07T05:21:03.123456Z","latency_us":1234,"status":200,"bytes":2752,"step":"static"}
//
// start is when the latency counts from (the intended send time under
// Config.Rate, a virtual user's step's beginning), latency_us the latency
// the figures report (corrected under Config.Rate), status 0 when no
// response came, bytes the response body's, step the run's or step's
// name, and "error" is there when the request failed. Lines are built in
// each writer's own buffer and written in blocks, so memory stays bounded
// however long the run is; the order of lines is only roughly by time.

// requestLog is the writer every worker or user of a run shares: it
// gathers lines in a block and writes whole blocks of whole lines, so
// that runs sharing one writer (through a lockedWriter) never split a
// line.
type requestLog struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// requestLogBlock is how much a worker gathers before writing it.
const requestLogBlock = 32 << 10

func newRequestLog(w io.Writer) *requestLog {
	if w == nil {
		return nil
	}
	return &requestLog{w: w}
}

// write adds whole lines, writing the block once it is full; the first
// error is kept, and what follows dropped.
func (l *requestLog) write(lines []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, lines...)
	if len(l.buf) >= requestLogBlock {
		l.flush()
	}
}

// flush writes the block; l.mu is held.
func (l *requestLog) flush() {
	if l.err == nil && len(l.buf) > 0 {
		_, l.err = l.w.Write(l.buf)
	}
	l.buf = l.buf[:0]
}

// close flushes what is buffered and returns the first error.
func (l *requestLog) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	return l.err
}

// appendRequestLine appends one request's line to b; step is the step's
// name as a JSON string (jsonString), made once per run or step so that
// a line costs no allocation.
func appendRequestLine(b []byte, start time.Time, latency time.Duration, status int, bytes int64, step []byte, err error) []byte {
	b = append(b, `{"start":"`...)
	b = start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","latency_us":`...)
	b = strconv.AppendInt(b, max(latency.Microseconds(), 0), 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, `,"step":`...)
	b = append(b, step...)
	if err != nil {
		b = append(b, `,"error":`...)
		b = append(b, jsonString(err.Error())...)
	}
	return append(b, "}\n"...)
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return q
}

// logRequest adds a request's line to the worker's block, writing the
// block once it is full.
func (w *worker) logRequest(start time.Time, latency time.Duration, status int, bytes int64, err error) {
	if w.run.log == nil {
		return
	}
	w.logBuf = appendRequestLine(w.logBuf, start, latency, status, bytes, w.run.t.stepJSON, err)
	if len(w.logBuf) >= requestLogBlock {
		w.flushLog()
	}
}

// logFinished logs a complete response whose Total was total
// microseconds: under Config.Rate its latency is the corrected one,
// counted from when it was due.
func (w *worker) logFinished(s *stamps, total int64) {
	start, latency := s.start, usec(total)
	if w.pace != nil {
		latency = usec(w.open.lastCorrect)
		start = s.done.Add(-latency)
	}
	w.logRequest(start, latency, w.resp.status, w.resp.bodyBytes, nil)
}

// flushLog writes the worker's block.
func (w *worker) flushLog() {
	if len(w.logBuf) > 0 {
		w.run.log.write(w.logBuf)
		w.logBuf = w.logBuf[:0]
	}
}

// lockedWriter serializes the writes of runs that share a request log at
// once (RunHOL's probe and load).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
