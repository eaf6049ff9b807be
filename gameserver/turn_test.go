package gameserver_test

import (
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlushOnlyQueues(t *testing.T) {
	t.Parallel()
	// Ensure a handler's Flush only queues output: nothing reaches the
	// client while the handler still runs, and the loop writes it all
	// when the turn ends.
	release := make(chan struct{})
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "early ")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "late")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err := cl.br.ReadByte()
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "bytes arrived while the handler ran")
	close(release)
	resp, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	assert.Equal(t, "early late", body)
}

func TestPipelinedBehindStream(t *testing.T) {
	t.Parallel()
	// Ensure requests pipelined behind an event stream wait while it is
	// open and are answered, in order, once it is closed.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	cl := dial(t, addr)
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\nGET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	cl.readHead()
	assert.Equal(t, chunk(welcome), cl.readN(len(chunk(welcome))))
	require.NoError(t, s.Post(func() {
		h.broadcast("data: x\n\n")
		h.closeAll()
	}))
	assert.Equal(t, chunk("data: x\n\n")+"0\r\n\r\n", cl.readN(len(chunk("data: x\n\n"))+5))
	_, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, "plain /one", body)
	_, body = cl.readResponse(http.MethodGet)
	assert.Equal(t, "plain /two", body)
}
