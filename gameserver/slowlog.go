package gameserver

import (
	"net/http"
	"sync"
	"time"
)

// DefaultSlowRequest is the threshold of the slow-request log when
// Config.SlowRequest is 0: 50 ms.
const DefaultSlowRequest = 50 * time.Millisecond

// slowLogSize is how many slow requests the Server keeps, as Redis's
// slowlog-max-len default.
const slowLogSize = 128

// SlowRequest is one entry of the slow-request log (Server.SlowRequests):
// a handler call, or the finish function of a deferred response, that held
// the loop for Config.SlowRequest or longer, as Redis's SLOWLOG records a
// command. While it ran, no other client was served.
type SlowRequest struct {
	Time     time.Time     // when the call started
	Duration time.Duration // how long it held the loop
	Phase    string        // "handler", or "finish" for a deferred response's finish function
	Method   string        // the request's method
	Path     string        // the request's URL path, through Config.RedactPath if set; never the query
	Conns    int           // client connections open at the time

	// Attributed reports whether the loop attributed the request's wait
	// before its handler (see WaitStats): a handler call in a sampled
	// turn, where the platform tells (WaitStats.Known). Then HeadOfLine
	// is how long it waited while the loop ran other work, and CPUWait
	// how long while the loop's thread waited for a CPU; otherwise both
	// are unknown (zero here, "unknown" in the Logger's line).
	Attributed bool
	HeadOfLine time.Duration
	CPUWait    time.Duration
}

// slowLog keeps the last slowLogSize entries in a ring. The loop appends;
// any goroutine may read, under mu (held only to copy).
type slowLog struct {
	mu    sync.Mutex
	ring  [slowLogSize]SlowRequest
	next  int    // ring index of the next entry
	total uint64 // entries ever logged
}

// add records e, overwriting the oldest entry once the ring is full.
func (s *slowLog) add(e SlowRequest) {
	s.mu.Lock()
	s.ring[s.next] = e
	s.next = (s.next + 1) % slowLogSize
	s.total++
	s.mu.Unlock()
}

// entries returns the kept entries, newest first (as SLOWLOG GET).
func (s *slowLog) entries() []SlowRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int(min(s.total, slowLogSize))
	out := make([]SlowRequest, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, s.ring[(s.next-i+slowLogSize)%slowLogSize])
	}
	return out
}

// count returns the number of entries ever logged.
func (s *slowLog) count() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// timed runs f, a call on the loop serving req on c (phase "handler" or
// "finish"), and times it: for the slow-request log, if it held the loop
// for Config.SlowRequest or longer, and for the wait attribution, if it is
// a handler of a sampled turn (see WaitStats). req may be nil (a refused
// request): then nothing is measured.
func (l *loop) timed(phase string, c *conn, req *http.Request, f func()) {
	attribute := l.wait.on && phase == phaseHandler
	if req == nil || l.cfg.SlowRequest < 0 && !attribute {
		f()
		return
	}
	start := l.clock() // monotonic only: cheaper than time.Now, twice per request
	if attribute {
		l.noteHandlerStart(start)
	}
	defer l.noteCall(phase, c, req, start, attribute) // also after a panic in f
	f()
}

// Phases of a timed call.
const (
	phaseHandler = "handler"
	phaseFinish  = "finish"
)

// noteCall records the call that began at start (loop clock): its wait
// and its time in the wait attribution, and a slow call in the log.
func (l *loop) noteCall(phase string, c *conn, req *http.Request, start int64, attribute bool) {
	end := l.clock()
	var rec *waitRec
	if attribute {
		rec = l.noteWait(c, start, end, req.Pattern)
	}
	d := time.Duration(end - start)
	if l.cfg.SlowRequest < 0 || d < l.cfg.SlowRequest {
		return
	}
	path := req.URL.Path
	if l.cfg.RedactPath != nil {
		path = l.cfg.RedactPath(path)
	}
	e := SlowRequest{Time: l.epoch.Add(time.Duration(start)), Duration: d, Phase: phase, Method: req.Method, Path: path, Conns: l.count.OpenConns}
	if rec != nil {
		e.HeadOfLine, e.CPUWait, e.Attributed = l.attributeSlow(rec)
	}
	l.slow.add(e)
	hol, cpu := any("unknown"), any("unknown")
	if e.Attributed {
		hol, cpu = e.HeadOfLine, e.CPUWait
	}
	l.cfg.Logger.Warn("gameserver: slow request", "phase", phase, "method", e.Method, "path", e.Path,
		"duration", d, "conns", e.Conns, "head_of_line", hol, "cpu_wait", cpu)
}
