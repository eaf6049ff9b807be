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

// timed runs f, a call on the loop serving req (phase "handler" or
// "finish"), and logs it as a slow request if it held the loop for
// Config.SlowRequest or longer. req may be nil (a refused request): then
// nothing is measured.
func (l *loop) timed(phase string, req *http.Request, f func()) {
	if l.cfg.SlowRequest < 0 || req == nil {
		f()
		return
	}
	start := l.clock()                  // monotonic only: cheaper than time.Now, twice per request
	defer l.noteSlow(phase, req, start) // also after a panic in f
	f()
}

// noteSlow logs the call that began at start (loop clock) if it was slow.
func (l *loop) noteSlow(phase string, req *http.Request, start int64) {
	d := time.Duration(l.clock() - start)
	if d < l.cfg.SlowRequest {
		return
	}
	path := req.URL.Path
	if l.cfg.RedactPath != nil {
		path = l.cfg.RedactPath(path)
	}
	e := SlowRequest{Time: l.epoch.Add(time.Duration(start)), Duration: d, Phase: phase, Method: req.Method, Path: path, Conns: l.count.OpenConns}
	l.slow.add(e)
	l.cfg.Logger.Warn("gameserver: slow request", "phase", phase, "method", e.Method, "path", e.Path,
		"duration", d, "conns", e.Conns)
}
