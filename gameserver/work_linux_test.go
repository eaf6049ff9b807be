//go:build linux && !gameserver_portable

package gameserver_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
)

// On the epoll back end the loop writes a stopping server's last answers
// itself before it closes; the portable one hands writes to goroutines
// that the stop overtakes, so there a deferred response still waiting at
// the deadline is only closed.
func TestGoShutdownDeadlineAnswers503(t *testing.T) {
	// Ensure work still queued or running when Shutdown's context ends is
	// answered 503 before its connection closes, not left unanswered.
	addr, s := startServer(t, gameserver.Config{Handler: workMux(300 * time.Millisecond), Workers: 1})
	var cls []*client
	for i := range 4 {
		cl := dial(t, addr)
		cl.writeAll(fmt.Sprintf("GET /slow?id=%d HTTP/1.1\r\nHost: t\r\n\r\n", i))
		cls = append(cls, cl)
	}
	eventually(t, func() bool { w := s.Stats().Work; return w.Running == 1 && w.Queued == 3 }, "one running, three queued")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	for i, cl := range cls {
		resp, _ := cl.readResponse(http.MethodGet)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "request %d", i)
	}
}
