package main

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// slotListener caps the metrics listener's connections at max, as
// netutil.LimitListener does, except that a connection accepted at the cap
// takes the slot of the one waiting longest without a request under way
// (new and silent, or idle between requests), which is closed. Only when
// every slot serves a request does it wait for one to finish. Without the
// eviction, 300 connections opened and left silent held all 16 slots, and
// a scrape waited in the listen backlog until the read timeout (10 s) freed
// one; now it is served at once and the silent ones go first.
//
// A closed connection may be one whose request was on its way: its client
// sees the connection reset, and a scraper tries again at its next
// interval. A local process churning ~10,000 silent connections a second
// evicts scrapers' fresh connections as well and fails about half of the
// scrapes while it lasts: the port is for loopback only. Set the
// http.Server's ConnState to the listener's connState.
type slotListener struct {
	net.Listener
	max  int
	pace *pacer // new connections a second

	mu    sync.Mutex
	freed *sync.Cond             // signaled when a slot frees or a connection turns idle
	conns map[net.Conn]slotState // the connections holding slots
	seq   uint64                 // counts state changes, to order them
}

// slotState is what slotListener knows of a connection.
type slotState struct {
	waiting bool   // no request under way: new, or idle between requests
	since   uint64 // slotListener.seq when it began waiting
}

// newSlotListener returns l capped at max connections (max > 0), taking
// at most rate new ones a second (0: no limit).
func newSlotListener(l net.Listener, max int, rate float64) *slotListener {
	s := &slotListener{Listener: l, max: max, conns: make(map[net.Conn]slotState), pace: &pacer{rate: rate, burst: float64(max)}}
	s.freed = sync.NewCond(&s.mu)
	return s
}

// Accept accepts a connection and gives it a slot, closing the connection
// waiting longest if all are taken, or waiting while every slot serves a
// request. It first waits, if need be, for the pace of new connections:
// those past it wait in the kernel's listen backlog, costing the process
// nothing.
func (s *slotListener) Accept() (net.Conn, error) {
	s.pace.wait()
	c, err := s.Listener.Accept()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.conns) >= s.max {
		if victim := s.longestWaiting(); victim != nil {
			delete(s.conns, victim)
			victim.Close() // its server goroutine reports StateClosed, a no-op by then
			break
		}
		s.freed.Wait()
	}
	s.seq++
	s.conns[c] = slotState{waiting: true, since: s.seq}
	return c, nil
}

// longestWaiting returns the connection that has waited longest without
// a request under way, or nil if every one serves a request. s.mu is held.
func (s *slotListener) longestWaiting() net.Conn {
	var victim net.Conn
	var since uint64
	for c, st := range s.conns {
		if st.waiting && (victim == nil || st.since < since) {
			victim, since = c, st.since
		}
	}
	return victim
}

// connState is the http.Server's ConnState hook: it tracks which
// connections serve a request and frees the slots of closed ones.
func (s *slotListener) connState(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return // closed by Accept, or not this listener's
	}
	switch state {
	case http.StateActive:
		s.conns[c] = slotState{}
		return
	case http.StateIdle:
		s.seq++
		s.conns[c] = slotState{waiting: true, since: s.seq}
	case http.StateHijacked, http.StateClosed:
		delete(s.conns, c)
	}
	s.freed.Signal()
}

// pacer is a token bucket: rate events a second, up to burst at once.
// The metrics listener paces its new connections with one, and its
// scrapes with another: a process churning connections to the metrics
// port, or scraping in a loop, would otherwise have the server accept,
// parse and answer tens of thousands a second on the CPUs the game's loop
// runs on. It is safe from any goroutine.
type pacer struct {
	rate, burst float64

	mu     sync.Mutex
	tokens float64
	at     time.Time // when tokens was counted
}

// wait takes a token, sleeping until there is one; callers that wait
// together take turns, one token each. A zero rate never waits.
func (p *pacer) wait() {
	if p.rate <= 0 {
		return
	}
	p.mu.Lock()
	now := time.Now()
	if p.at.IsZero() {
		p.tokens = p.burst
	} else {
		p.tokens = min(p.tokens+now.Sub(p.at).Seconds()*p.rate, p.burst)
	}
	p.at = now
	p.tokens-- // may go below 0: a debt the next callers wait out too
	short := -p.tokens
	p.mu.Unlock()
	if short > 0 {
		time.Sleep(time.Duration(short / p.rate * float64(time.Second)))
	}
}
