package handlers

import (
	"container/list"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// The limit on POST /login and POST /register per client (see clientKey).
// Each of them runs one bcrypt hash on the loop (about 70 ms of CPU at
// bcrypt.DefaultCost) before any account is needed, so without a limit one
// client looping logins stalls every player. A client may make AuthBurst
// attempts at once, then one more per AuthRefill: at most 6 bcrypt hashes a
// minute, about 1% of the loop, per client.
const (
	AuthBurst  = 5
	AuthRefill = 10 * time.Second

	// maxAuthClients bounds the clients the limiter remembers (about 100
	// bytes each), so a flood from many addresses cannot grow it for ever.
	maxAuthClients = 10_000
)

// limiter is a token bucket per client, without goroutines or timers: each
// bucket is kept as the time it is full again (the GCRA form of a token
// bucket), refilled lazily when the client comes back. A bucket full by now
// is the same as no bucket, so those are what the limiter forgets first.
//
// It remembers at most max clients, in the order they last took a token
// (the least recent first), so that whatever the number of addresses a
// storm comes from, a new one costs the same few steps: the buckets full
// by now at the front are forgotten, and at max the least recently used
// one, as nginx's limit_req forgets the least recently used state when its
// zone is full. (Finding the bucket nearest to full took a pass over every
// client: 0.44 ms a new address with 10,000 remembered,
// BenchmarkLimiter_NewAddress.)
//
// It has no lock: like the rest of the handlers' state it is used by one
// handler at a time (on the loop, or under gameserver.Serial's lock).
type limiter struct {
	burst   int
	refill  time.Duration
	max     int
	buckets map[string]*list.Element // by client key; each a *bucket in order
	order   list.List                // the buckets, least recently taken from first
}

// bucket is one client's: when it is full again.
type bucket struct {
	key  string
	full time.Time
}

// checkAuthLimit takes a token for r's client from the login and register
// limit. Over the limit it sets Retry-After (RFC 6585 section 4; RFC 9110
// section 10.2.3: whole seconds, rounded up) and returns a 429 error saying
// how long to wait.
func (s *Server) checkAuthLimit(w http.ResponseWriter, r *http.Request) error {
	wait := s.takeAuthToken(r.Context(), clientKey(r, s.trustProxy))
	if wait <= 0 {
		return nil
	}
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return &statusError{http.StatusTooManyRequests, fmt.Sprintf(
		"Too many attempts from your address: wait %d %s and try again. Nothing was checked.", secs, unit)}
}

func newLimiter(burst int, refill time.Duration, max int) *limiter {
	return &limiter{burst: burst, refill: refill, max: max, buckets: map[string]*list.Element{}}
}

// allow takes one token from key's bucket at now. It returns 0 when there was
// one, else how long until there is (always > 0), taking nothing.
func (l *limiter) allow(key string, now time.Time) time.Duration {
	e, ok := l.buckets[key]
	full := now
	if ok && e.Value.(*bucket).full.After(now) {
		full = e.Value.(*bucket).full
	}
	// Taking a token pushes "full again" one refill later; the bucket holds
	// burst tokens, so that may be at most burst refills from now.
	next := full.Add(l.refill)
	if over := next.Sub(now) - time.Duration(l.burst)*l.refill; over > 0 {
		return over
	}
	if ok {
		e.Value.(*bucket).full = next
		l.order.MoveToBack(e)
		return 0
	}
	l.makeRoom(now)
	l.buckets[key] = l.order.PushBack(&bucket{key: key, full: next})
	return 0
}

// makeRoom forgets, from the least recently used, the buckets full by now,
// up to the first that is not, and at max the least recently used one
// whatever it owes. Each bucket is forgotten once, so a new client costs
// a constant time on average, however many clients there are.
func (l *limiter) makeRoom(now time.Time) {
	for e := l.order.Front(); e != nil; e = l.order.Front() {
		b := e.Value.(*bucket)
		if b.full.After(now) && len(l.buckets) < l.max {
			return
		}
		l.order.Remove(e)
		delete(l.buckets, b.key)
	}
}

// clientKey names the client r counts against: the IP address of
// r.RemoteAddr, or, with trustProxy, the last address in X-Forwarded-For
// (the one the proxy in front of us appended; earlier ones are whatever the
// client sent). An IPv6 client is keyed by its /64, the block one subscriber
// usually holds, so it cannot dodge the limit by changing addresses within
// it. A RemoteAddr that is no IP (a Unix socket) is used as it is.
func clientKey(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if addr, ok := ForwardedFor(r); ok {
			return addrKey(addr)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	return addrKey(addr)
}

func addrKey(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}
