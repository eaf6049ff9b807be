package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// What the loop does per login of a storm, by how many addresses the storm
// comes from, for the per-address structures each login touches: the
// attempt limit (limiter) and the fair queue's memory of addresses
// (hashQueue.clients). A cost per op that grows with clients is work that
// grows with the storm. Each op is a login from an address not seen
// before, with clients addresses already remembered, each owing tokens
// (the limit's worst case: none can be forgotten as full).

func BenchmarkLimiter_NewAddress(b *testing.B) {
	for _, n := range []int{200, maxAuthClients} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			l := newLimiter(AuthBurst, AuthRefill, maxAuthClients)
			now := time.Unix(1e9, 0)
			for i := range n {
				l.allow(fmt.Sprint("old", i), now)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				now = now.Add(time.Microsecond) // everyone still owes a token
				l.allow(fmt.Sprint("new", i), now)
			}
		})
	}
}

func BenchmarkHashQueue_NewAddress(b *testing.B) {
	for _, n := range []int{200, maxHashClients} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			q := newHashQueue()
			r := httptest.NewRequest(http.MethodPost, "/login", nil)
			for i := range n {
				q.arrive(fmt.Sprint("old", i), r)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				q.arrive(fmt.Sprint("new", i), r)
			}
		})
	}
}
