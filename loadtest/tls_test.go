package loadtest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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

func TestTLSHandshakeCutCountsAsConnect(t *testing.T) {
	// Ensure a handshake the server cuts (not a certificate that does not
	// verify) counts as a failed connect, as ab counts it, and past ten
	// aborts the run with ab's message.
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {}) // closes at once
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: strings.Replace(url, "http://", "https://", 1),
		Requests: 3, Timeout: 5 * time.Second, InsecureSkipVerify: true})
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_socket_connect()", abort.Op)
	assert.EqualValues(t, 11, res.Failures.Connect)
	assert.Zero(t, res.CompleteRequests)
}

func TestTLSUsers(t *testing.T) {
	// Ensure virtual users speak TLS to an https server, through
	// net/http's pool and on their raw streams, verifying its certificate.
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/events" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: hi\n\n")
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	// The test server's certificate is its own: the users' pool and
	// streams do not know it, so the steps fail on the certificate, not
	// on the scheme.
	res, err := loadtest.RunUsers(context.Background(), loadtest.UsersConfig{URL: s.URL, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: pageOnly})
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Step("page").Errors)
	assert.Contains(t, res.Errors["page"], "certificate")
	res, err = loadtest.RunUsers(context.Background(), loadtest.UsersConfig{URL: s.URL, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			_, err := u.Stream(ctx, "events", "/events", loadtest.StreamOptions{})
			return err
		}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Step("events").Errors)
	assert.Contains(t, res.Errors["events"], "certificate")
}
