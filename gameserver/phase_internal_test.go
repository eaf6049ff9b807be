package gameserver

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seen is every phase change the package's tests made, on either back end.
var seen struct {
	sync.Mutex
	moves map[[2]phase]int
}

func init() {
	// Every test of the package checks the table: a move it lacks is a
	// bug, made loud.
	badTransition = func(_ *loop, c *conn, from, to phase) {
		panic(fmt.Sprintf("gameserver: phase change %v -> %v (conn %s) is not in the transitions table", from, to, c.remote))
	}
	seen.moves = map[[2]phase]int{}
	sawTransition = func(from, to phase) {
		seen.Lock()
		seen.moves[[2]phase{from, to}]++
		seen.Unlock()
	}
}

func TestPhaseString(t *testing.T) {
	assert.Equal(t, "streaming", phaseStreaming.String())
	assert.Equal(t, "closed", phaseClosed.String())
	assert.Equal(t, "phase(9)", phase(9).String())
}

func TestTransitionsTable(t *testing.T) {
	// Ensure the code makes every move in the transitions table (the
	// package's init makes any move outside it panic, in every test): a
	// request, a deferred response finished, a stream closed and one
	// whose client goes away, a deferred response whose client goes away,
	// a refused request lingering, and a kept-alive connection its client
	// closes.
	var (
		mu      sync.Mutex
		stream  *EventStream
		streams int // streams begun
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/defer":
			d, _ := Defer(w)
			d.Finish(func(w http.ResponseWriter) { io.WriteString(w, "finished") })
		case "/hold":
			Defer(w) // never finished: its client goes away
		case "/stream":
			Stream(w, r, func(s *EventStream) {
				mu.Lock()
				stream = s
				streams++
				mu.Unlock()
			})
		case "/close":
			mu.Lock()
			stream.Close()
			mu.Unlock()
			io.WriteString(w, "ok")
		default:
			io.WriteString(w, "ok")
		}
	})
	s, addr, _ := startLoop(t, Config{Handler: handler})

	c, br := dialLoop(t, addr)
	_, body := get(t, c, br, "/")
	assert.Equal(t, "ok", body)
	_, body = get(t, c, br, "/defer")
	assert.Equal(t, "finished", body)
	c.Close() // open -> closed

	sc, sbr := dialLoop(t, addr)
	_, err := io.WriteString(sc, "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(sbr, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	c2, br2 := dialLoop(t, addr)
	_, body = get(t, c2, br2, "/close") // streaming -> open
	assert.Equal(t, "ok", body)
	_, err = io.WriteString(sc, "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	// Wait for the second stream itself: Streams is 1 already while the
	// first one's close is under way, and closing then is open -> closed.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return streams == 2 && s.Stats().Streams == 1
	}, waitLimit, time.Millisecond)
	sc.Close() // streaming -> closed

	hc, _ := dialLoop(t, addr)
	_, err = io.WriteString(hc, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.Stats().Deferred == 1 }, waitLimit, time.Millisecond)
	hc.Close() // deferred -> closed

	bc, bbr := dialLoop(t, addr)
	_, err = io.WriteString(bc, "BAD\r\n\r\nGET / HTTP/1.1\r\n") // input left unread behind the refusal
	require.NoError(t, err)
	resp, err = http.ReadResponse(bbr, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	bc.Close() // lingering -> closed

	require.Eventually(t, func() bool {
		st := s.Stats()
		return st.OpenConns == 1 && st.Streams == 0 && st.Deferred == 0
	}, waitLimit, time.Millisecond, "only the /close connection is left")
	seen.Lock()
	defer seen.Unlock()
	for _, m := range transitions {
		assert.Positive(t, seen.moves[[2]phase{m.from, m.to}], "%v -> %v (%s) never made", m.from, m.to, m.why)
	}
}
