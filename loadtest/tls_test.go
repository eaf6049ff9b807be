package loadtest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

func TestTLS(t *testing.T) {
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Error(w, "not over TLS", http.StatusBadRequest)
			return
		}
		writePage(w)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes of ErrVerify
	s.StartTLS()
	t.Cleanup(s.Close)
	t.Run("Insecure", func(t *testing.T) {
		// Ensure an https URL is loaded over TLS, each connection with its
		// handshake, kept alive with -k, and the report names the protocol
		// as ab's SSL/TLS Protocol line.
		res := mustRun(t, loadtest.Config{URL: s.URL + "/", Requests: 40, Concurrency: 2, KeepAlive: true, InsecureSkipVerify: true})
		assert.EqualValues(t, 40, res.CompleteRequests)
		assert.Zero(t, res.FailedRequests+res.Non2xx)
		assert.EqualValues(t, 2, conns.Load(), "two kept-alive connections")
		assert.Regexp(t, `^TLS 1\.3,TLS_`, res.TLSProtocol)
		var b bytes.Buffer
		b.WriteString(loadtest.Text(t, res))
		assert.Regexp(t, `Server Port: +\d+\nSSL/TLS Protocol: +TLS 1\.3,`, b.String())

		// Ensure without -k every request has a connection and handshake of its own.
		res = mustRun(t, loadtest.Config{URL: s.URL + "/", Requests: 5, InsecureSkipVerify: true})
		assert.EqualValues(t, 5, res.CompleteRequests)
		assert.Zero(t, res.FailedRequests)
		assert.Positive(t, res.Connect.Max, "the handshake is in the Connect time")
	})
	t.Run("ErrVerify", func(t *testing.T) {
		// Ensure a certificate that does not verify aborts the run at once,
		// saying how to skip the check.
		res, err := loadtest.Run(context.Background(), loadtest.Config{URL: s.URL + "/", Requests: 5, Timeout: 5 * time.Second})
		var abort *loadtest.AbortError
		require.True(t, errors.As(err, &abort), "%v", err)
		assert.Contains(t, abort.Message(), "SSL handshake failed")
		assert.Contains(t, abort.Message(), "-insecure")
		assert.Zero(t, res.CompleteRequests)
	})
}
