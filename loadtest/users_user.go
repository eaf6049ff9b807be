package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"
)

// User is one virtual user: its session (cookie jar), its seeded Rand, and
// the steps it takes. Its methods are for its scenario's goroutine only.
type User struct {
	ID   int        // arrival order, from 0
	Rand *rand.Rand // seeded by UsersConfig.Seed and ID
	Jar  http.CookieJar

	run    *usersRun
	due    time.Time    // when the next step is due: arrival, or the last step's end plus think time
	body   *[]byte      // the last response's body, from bodyPool until the next request or sleep
	bind   *net.TCPAddr // the local address it connects from, nil: any
	logBuf []byte       // its request log line
}

// bindKey carries a user's local address to the pool's dialer.
type bindKey struct{}

// dial connects from the local address ctx carries (bindKey), if any.
func (r *usersRun) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d := r.dialer
	if a, ok := ctx.Value(bindKey{}).(*net.TCPAddr); ok && a != nil {
		d.LocalAddr = a
	}
	return d.DialContext(ctx, network, address)
}

// Response is a step's response after redirects: valid until the user's
// next request, Sleep or Think (Body's buffer then goes back to a pool
// the users share).
type Response struct {
	Status int
	Header http.Header
	URL    *url.URL // of the last request, after redirects
	Body   []byte
	Start  time.Time // when the step began: a write's time for User.Cause
}

// ErrStatus is a step's error for a response that is not 2xx or 3xx.
type ErrStatus struct {
	Step   string
	Status int
}

func (e *ErrStatus) Error() string { return fmt.Sprintf("%s: status %d", e.Step, e.Status) }

// Get requests path (resolved against UsersConfig.URL) as step, following
// redirects, and reads the whole body. A status of 400 or more is an
// error (*ErrStatus) counted against the step, as are network errors.
func (u *User) Get(ctx context.Context, step, path string) (*Response, error) {
	return u.do(ctx, step, http.MethodGet, path, nil)
}

// PostForm posts form to path as application/x-www-form-urlencoded, as
// Get does otherwise (a 303 after it is followed with a GET).
func (u *User) PostForm(ctx context.Context, step, path string, form url.Values) (*Response, error) {
	return u.do(ctx, step, http.MethodPost, path, form)
}

func (u *User) do(ctx context.Context, step, method, path string, form url.Values) (*Response, error) {
	r := u.run
	st := r.step(step)
	e := stepEnd{start: u.begin(st)}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	req, err := u.newRequest(ctx, method, path, form, &e.sent)
	var res *Response
	if err == nil {
		res, err = u.send(req, step, e.start)
	}
	e.done = time.Now()
	if e.sent.IsZero() {
		e.sent = e.start
	}
	if res != nil {
		e.status, e.bytes = res.Status, int64(len(res.Body))
	}
	u.end(st, e, err)
	if err != nil && r.ctx.Err() == nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%s: no response in %v: %w", step, r.cfg.Timeout, err)
		}
		r.noteErr(step, err)
	}
	return res, err
}

// newRequest makes the request of a step, which sets *sent when it has
// its connection, with the user's local address.
func (u *User) newRequest(ctx context.Context, method, path string, form url.Values, sent *time.Time) (*http.Request, error) {
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		if sent.IsZero() {
			*sent = time.Now()
		}
	}})
	if u.bind != nil {
		ctx = context.WithValue(ctx, bindKey{}, u.bind)
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u.run.resolve(path), body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req, nil
}

// send sends req, following redirects with the user's cookies, and reads
// the whole body; a status of 400 or more is an *ErrStatus beside the
// Response.
func (u *User) send(req *http.Request, step string, start time.Time) (*Response, error) {
	client := http.Client{Transport: u.run.transport, Jar: u.Jar}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	u.releaseBody()
	u.body = bodyPool.Get().(*[]byte)
	*u.body, err = readAllInto((*u.body)[:0], resp.Body)
	resp.Body.Close()
	res := &Response{Status: resp.StatusCode, Header: resp.Header, URL: resp.Request.URL, Body: *u.body, Start: start}
	if err == nil && resp.StatusCode >= 400 {
		err = &ErrStatus{Step: step, Status: resp.StatusCode}
	}
	return res, err
}

// bodyPool holds the buffers the users read responses into. A user holds
// one from a request until its next request or sleep, not through its
// think time, so thousands of users share as many buffers as are read at
// once, each grown once to the largest page, instead of each user
// growing its own (the growing and the garbage it left were a tenth of
// the players' CPU, and their buffers most of their memory).
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// releaseBody gives the last response's buffer back to bodyPool.
func (u *User) releaseBody() {
	if u.body != nil {
		bodyPool.Put(u.body)
		u.body = nil
	}
}

// readAllInto appends r's bytes to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// begin starts a step: it is due at u.due (its lateness, the load
// generator's own delay, is recorded apart) and starts now.
func (u *User) begin(st *stepStats) time.Time {
	now := time.Now()
	st.late(now.Sub(u.due))
	return now
}

// stepEnd is how one step went: when it began, had its connection and
// ended, its response's status and body bytes (0 without one).
type stepEnd struct {
	start, sent, done time.Time
	status            int
	bytes             int64
}

// end records a step and makes the user's next step due at its end. A
// step cut by the run's end is not the server's error: it is not counted.
func (u *User) end(st *stepStats, e stepEnd, err error) {
	failed := err != nil && u.run.ctx.Err() == nil
	if err == nil || failed {
		st.record(e.done.Sub(e.start), e.done.Sub(e.sent), e.status, failed)
		if l := u.run.log; l != nil {
			u.logBuf = appendRequestLine(u.logBuf[:0], e.start, e.done.Sub(e.start), e.status, e.bytes, st.json, err)
			l.write(u.logBuf)
		}
	}
	u.due = e.done
}

// Think sleeps an exponentially distributed time of the given mean, drawn
// from u.Rand (so a seed repeats it), and makes the next step due after
// it. It returns ctx's error if ctx ends first.
func (u *User) Think(ctx context.Context, mean time.Duration) error {
	return u.Sleep(ctx, u.ThinkTime(mean))
}

// ThinkTime draws a think time from u.Rand: exponentially distributed
// with the given mean, as Locust's and k6's random waits; Think sleeps it.
func (u *User) ThinkTime(mean time.Duration) time.Duration {
	return time.Duration(u.Rand.ExpFloat64() * float64(mean))
}

// Sleep sleeps d after the user's last step (or arrival) ended, and makes
// the next step due then.
func (u *User) Sleep(ctx context.Context, d time.Duration) error {
	u.releaseBody()
	u.due = u.due.Add(d)
	t := time.NewTimer(time.Until(u.due))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cause notes that a write the user made at `at` (Response.Start) causes
// events that StreamOptions.Key names key, on any user's stream: each
// such event that arrives after at, within UsersConfig.Timeout, counts its
// delivery time (arrival less at) in UsersResult.Delivery. A later Cause
// of the same key replaces it.
//
// The Cause may come after some of its events have arrived (a write's
// events can reach other streams before its response reaches the
// writer): an event whose key has no Cause yet is kept for
// UsersConfig.Timeout and counted when the Cause comes, if it arrived
// after at.
func (u *User) Cause(key string, at time.Time) {
	for _, arrived := range u.run.causes.put(key, at) {
		u.run.delivery.record(arrived.Sub(at), arrived.Sub(at), 0, false)
	}
}

// Error counts err against step without a latency (something that is no
// request failed: a stream the server cut, say); it is in Errors, not in
// Count.
func (u *User) Error(step string, err error) {
	r := u.run
	if r.ctx.Err() != nil {
		return
	}
	r.step(step).fail()
	r.noteErr(step, err)
}

// FormValue is the value of the first form control named name in the
// body (an <input name="NAME" value="..."> in any attribute order, HTML
// entities decoded), "" when there is none. Pages are scanned, not
// parsed: attribute values must be double-quoted.
func (r *Response) FormValue(name string) string {
	b := r.Body
	needle := []byte(` name="` + name + `"`)
	for {
		i := bytes.Index(b, needle)
		if i < 0 {
			return ""
		}
		lt := bytes.LastIndexByte(b[:i], '<')
		gt := bytes.IndexByte(b[i:], '>')
		if lt < 0 || gt < 0 {
			return ""
		}
		if v, ok := attr(b[lt:i+gt], "value"); ok {
			return v
		}
		b = b[i+gt:]
	}
}

// Link is the first link (href) in the body that starts with prefix, its
// entities decoded (&amp;), "" when there is none.
func (r *Response) Link(prefix string) string {
	if l := r.Links(prefix, 1); len(l) > 0 {
		return l[0]
	}
	return ""
}

// Links are up to n links (href) in the body that start with prefix, in
// page order; n < 0: all.
func (r *Response) Links(prefix string, n int) []string {
	var out []string
	b := r.Body
	needle := []byte(` href="` + html.EscapeString(prefix))
	for n != 0 {
		i := bytes.Index(b, needle)
		if i < 0 {
			break
		}
		b = b[i+len(` href="`):]
		end := bytes.IndexByte(b, '"')
		if end < 0 {
			break
		}
		out = append(out, html.UnescapeString(string(b[:end])))
		b = b[end:]
		n--
	}
	return out
}

// attr is the double-quoted value of attribute name in tag.
func attr(tag []byte, name string) (string, bool) {
	i := bytes.Index(tag, []byte(" "+name+`="`))
	if i < 0 {
		return "", false
	}
	v := tag[i+len(name)+3:]
	end := bytes.IndexByte(v, '"')
	if end < 0 {
		return "", false
	}
	return html.UnescapeString(string(v[:end])), true
}
