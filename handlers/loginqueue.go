package handlers

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// The fair queue in front of the worker pool for password hashes (login
// and register), per client address (clientKey: the IP, with -trust-proxy
// the last X-Forwarded-For address, an IPv6 client's /64).
//
// The pool's own queue is first come, first served: a storm from many
// addresses filled it with a thousand hashes, and a player's login waited
// behind all of them (9 s in TestLoginFairness, 15 to 19 s at the default
// cost). Here at most a few hashes are in the pool at once (GOMAXPROCS:
// one per worker and one waiting, so a worker never idles between two);
// the rest wait in this queue, which hands the pool the next one by
// address, round-robin: the address whose last turn is the oldest goes
// first, one hash per turn. Among addresses that have had no turn (or none
// the queue still remembers), the one whose previous attempt is the oldest
// goes first, and one with no previous attempt before all: a storm's
// addresses keep coming back, a player's comes once. So a storm gets one
// turn per address per round, and a player who has not tried to log in
// for a round goes next, waiting only for the hashes in progress.
//
// Bounds: an address may have AuthBurst hashes waiting (the per-address
// limit lets no more through at once anyway); more are refused with 429
// and Retry-After. At most MaxHashQueue wait in all (about 1.1 s of
// hashing at bcrypt.DefaultCost on one worker); when it is full, the
// newest job of the address that ranks last (the newcomer itself, if it
// does) is answered 503 with Retry-After. A waiting hash also ends at the
// server's DeferTimeout (503). In the first round of a storm from fresh
// addresses, before each has tried twice, a player's first login may thus
// wait for up to MaxHashQueue hashes; after it, for those in progress.
//
// A login form submitted before counts as an attempt before, whatever the
// address: an attempt's previous one is the later of its address's and
// its form token's (the ss_form cookie, csrf.go). A browser gets a token
// of its own with the form; a storm that sends one token from every
// address (as scripts/login-storm.sh's does) is thus a client coming
// back from its second request on, even in its first round, and a
// player's fresh form ranks before it and is not the one displaced. A
// storm that makes up a token per request is as fresh as a player again.
//
// Under net/http (-engine nethttp, tests' recorders) there is no queue:
// responses cannot be deferred there, and each hash runs at once (its
// SerialHandler bounds how many run together, in no fixed order).
const (
	MaxHashQueue = 16

	// maxHashClients bounds the addresses whose last turn and attempt the
	// queue remembers (about 60 bytes each), and the form tokens whose
	// last attempt it remembers (as many, about 80 bytes each); past it
	// those idle the longest are forgotten, which only moves them earlier,
	// where their old turns had put them anyway.
	maxHashClients = 10_000
)

// hashQueue is the fair queue (see above). Its methods are safe from any
// goroutine: the loop enters jobs, and the end of a job's response (on
// the engine's goroutine for context.AfterFunc) starts the next.
type hashQueue struct {
	mu      sync.Mutex
	slots   int // jobs in the pool at once
	running int // jobs started whose response has not ended
	waiting []*hashJob
	clients map[string]*hashClient
	forms   map[string]uint64 // a form token's last attempt, in clock ticks
	clock   uint64            // counts arrivals and turns: the queue's time
	mean    time.Duration     // the moving mean of a job's length, for Retry-After
}

// hashClient is what the queue remembers of an address, in clock ticks:
// its last turn and its last attempt (0: none).
type hashClient struct {
	turn, seen uint64
}

// hashJob is one hash waiting for its turn.
type hashJob struct {
	key     string
	arrived uint64 // the clock when it came
	prev    uint64 // its client's attempt before it (0: none)
	r       *http.Request
	d       *gameserver.Deferred
	start   func(http.ResponseWriter, *http.Request)
	began   time.Time
}

func newHashQueue() *hashQueue {
	return &hashQueue{slots: runtime.GOMAXPROCS(0), clients: map[string]*hashClient{}, forms: map[string]uint64{},
		mean: 70 * time.Millisecond}
}

// enter runs start(w, r) when it is the turn of r's client, key: at once
// if the pool has room and nothing waits, else later on the loop, with
// the response deferred meanwhile. start hands its hash to the pool
// (gameserver.Go) or answers at once; the turn lasts until the response
// ends. Over the bounds (see above) enter sets Retry-After and calls
// refuse with a 429 or 503 error instead, and start never runs.
func (q *hashQueue) enter(w http.ResponseWriter, r *http.Request, key string, start func(http.ResponseWriter, *http.Request), refuse func(http.ResponseWriter, *http.Request, error)) {
	q.mu.Lock()
	job := q.arrive(key, r)
	if q.running < q.slots && len(q.waiting) == 0 {
		q.begin(job)
		q.mu.Unlock()
		start(w, r)
		return
	}
	if n := q.waitingFrom(key); n >= AuthBurst {
		wait := q.retryAfter()
		q.mu.Unlock()
		refuse(w, r, retryAfter(w, wait, http.StatusTooManyRequests, fmt.Sprintf(
			"Your address has %d logins or registrations waiting to be checked already: wait for them, then try again. Nothing was checked.", n)))
		return
	}
	d, ok := gameserver.Defer(w)
	if !ok { // net/http: no deferred responses, so no queue
		q.mu.Unlock()
		start(w, r)
		return
	}
	job.d, job.start = d, start
	displaced := q.admit(job)
	wait := q.retryAfter()
	q.dispatch()
	q.mu.Unlock()
	if displaced != nil {
		displaced.d.Finish(func(w http.ResponseWriter) {
			refuse(w, displaced.r, retryAfter(w, wait, http.StatusServiceUnavailable,
				"The server is checking too many logins at once: try again in a moment. Nothing was checked."))
		})
	}
}

// arrive notes an attempt of key's client, with r's form token, and
// returns its job: its previous attempt is the later of the client's and
// the token's.
func (q *hashQueue) arrive(key string, r *http.Request) *hashJob {
	c := q.client(key)
	job := &hashJob{key: key, arrived: q.clock, prev: c.seen, r: r}
	c.seen = q.clock
	if ck, err := r.Cookie(formCookie); err == nil && ck.Value != "" {
		last, ok := q.forms[ck.Value]
		job.prev = max(job.prev, last)
		if !ok && len(q.forms) >= maxHashClients {
			q.forgetForms()
		}
		q.forms[ck.Value] = q.clock
	}
	return job
}

// forgetForms drops the form tokens last used in the older half of the
// clock's last maxHashClients ticks, as forget does the clients.
func (q *hashQueue) forgetForms() {
	cut := q.clock - maxHashClients/2
	for k, seen := range q.forms {
		if seen < cut {
			delete(q.forms, k)
		}
	}
}

// retryAfter sets w's Retry-After to wait, in whole seconds rounded up, at
// least 1 (RFC 9110 section 10.2.3), and returns the error of status.
func retryAfter(w http.ResponseWriter, wait time.Duration, status int, msg string) error {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
	return &statusError{status, msg}
}

// admit adds job to the waiting jobs, within MaxHashQueue, and returns
// the job it displaced, if any: job itself when it ranks last.
func (q *hashQueue) admit(job *hashJob) (displaced *hashJob) {
	q.waiting = append(q.waiting, job)
	if len(q.waiting) <= MaxHashQueue {
		return nil
	}
	q.dropGone()
	if len(q.waiting) <= MaxHashQueue {
		return nil
	}
	i := q.lastRanked()
	displaced = q.waiting[i]
	q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
	return displaced
}

// dropGone removes the waiting jobs whose client went away (or whose
// DeferTimeout passed): their responses have ended.
func (q *hashQueue) dropGone() {
	kept := q.waiting[:0]
	for _, j := range q.waiting {
		if j.r.Context().Err() == nil {
			kept = append(kept, j)
		}
	}
	clear(q.waiting[len(kept):])
	q.waiting = kept
}

// waitingFrom counts the jobs of key that wait.
func (q *hashQueue) waitingFrom(key string) int {
	n := 0
	for _, j := range q.waiting {
		if j.key == key {
			n++
		}
	}
	return n
}

// before reports whether job a ranks before b: its client's last turn is
// older (none is oldest); as old, its client's attempt before it is older
// (none is oldest); then the job that came first.
func (q *hashQueue) before(a, b *hashJob) bool {
	if ta, tb := q.clients[a.key].turn, q.clients[b.key].turn; ta != tb {
		return ta < tb
	}
	if a.prev != b.prev {
		return a.prev < b.prev
	}
	return a.arrived < b.arrived
}

// lastRanked is the index of the waiting job that would be served last:
// of the client that ranks last, its newest job.
func (q *hashQueue) lastRanked() int {
	last := 0
	for i, j := range q.waiting {
		if !q.before(j, q.waiting[last]) {
			last = i
		}
	}
	return last
}

// firstRanked is the index of the waiting job to start next: of the
// client that ranks first, its oldest job.
func (q *hashQueue) firstRanked() int {
	first := 0
	for i, j := range q.waiting {
		if q.before(j, q.waiting[first]) {
			first = i
		}
	}
	return first
}

// dispatch starts waiting jobs while the pool has room. Each runs its
// start on the loop through its Deferred's Finish, which defers the
// response again when start calls gameserver.Go.
func (q *hashQueue) dispatch() {
	for q.running < q.slots {
		job := q.next()
		if job == nil {
			return
		}
		q.begin(job)
		job.d.Finish(func(w http.ResponseWriter) { job.start(w, job.r) })
	}
}

// next takes the first-ranked waiting job whose response has not ended
// (the client went away, DeferTimeout passed) out of the queue; nil if
// none waits.
func (q *hashQueue) next() *hashJob {
	for len(q.waiting) > 0 {
		i := q.firstRanked()
		job := q.waiting[i]
		q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
		if job.r.Context().Err() == nil {
			return job
		}
	}
	return nil
}

// begin counts job as running, from now until its response ends, and
// gives its client this turn.
func (q *hashQueue) begin(job *hashJob) {
	q.running++
	q.client(job.key).turn = q.clock
	job.began = time.Now()
	if job.r.Context().Done() == nil {
		q.running-- // a request that never ends (a test's recorder): no turn to wait for
		return
	}
	context.AfterFunc(job.r.Context(), func() { q.end(job) })
}

// end is job's response ending: its turn is over, the next may start.
func (q *hashQueue) end(job *hashJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	q.mean += (time.Since(job.began) - q.mean) / 8
	q.dispatch()
}

// client returns key's record, made if need be, and moves the clock on.
func (q *hashQueue) client(key string) *hashClient {
	q.clock++
	c := q.clients[key]
	if c == nil {
		if len(q.clients) >= maxHashClients {
			q.forget()
		}
		c = &hashClient{}
		q.clients[key] = c
	}
	return c
}

// forget drops the clients of no job waiting that were last active in the
// older half of the clock's last maxHashClients ticks: each tick touches
// one client, so at most half the map is left.
func (q *hashQueue) forget() {
	cut := q.clock - maxHashClients/2
	for k, c := range q.clients {
		if max(c.turn, c.seen) < cut && q.waitingFrom(k) == 0 {
			delete(q.clients, k)
		}
	}
}

// retryAfter estimates how long the waiting jobs take to run.
func (q *hashQueue) retryAfter() time.Duration {
	return time.Duration(len(q.waiting)+q.running) * q.mean / time.Duration(max(q.slots-1, 1))
}
