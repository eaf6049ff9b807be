package loadtest

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildRequest(t *testing.T) {
	// Ensure the request is laid out as ab's: HTTP/1.0, Connection:
	// Keep-Alive with -k, the -H headers, then the defaults they did not
	// replace; no Accept-Encoding; Host without port 80.
	tg, err := prepare(Config{URL: "http://127.0.0.1/a?b=c", KeepAlive: true, Headers: []string{"Accept: text/html", "Cookie: s=1"}})
	require.NoError(t, err)
	assert.Equal(t, "GET /a?b=c HTTP/1.0\r\nConnection: Keep-Alive\r\nAccept: text/html\r\nCookie: s=1\r\n"+
		"Host: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3 (statesecrets loadtest)\r\n\r\n", string(tg.request))
	assert.Equal(t, 80, tg.port)

	// Ensure a body brings POST, Content-length and Content-type, and a
	// non-default port stays in Host.
	tg, err = prepare(Config{URL: "http://[::1]:8080/", Body: []byte("x=1"), Headers: []string{"host: example.test"}})
	require.NoError(t, err)
	assert.Equal(t, "POST / HTTP/1.0\r\nContent-length: 3\r\nContent-type: text/plain\r\nhost: example.test\r\n"+
		"User-Agent: ApacheBench/2.3 (statesecrets loadtest)\r\nAccept: */*\r\n\r\nx=1", string(tg.request))
	assert.EqualValues(t, len(tg.request), tg.sentPerRequest)
	assert.Equal(t, "[::1]:8080", hostField("::1", 8080, 80))
	assert.Equal(t, "[::1]", hostField("::1", 80, 80))
}

func TestCheckURL(t *testing.T) {
	// Ensure a URL the harness can load passes, and one it cannot is an
	// error naming it.
	for _, u := range []string{"http://127.0.0.1/", "https://example.test:8443/a?b", "http://[::1]:8080/x", "http://h"} {
		assert.NoError(t, CheckURL(u), u)
	}
	for _, tc := range []struct{ url, want string }{
		{"ftp://h/", `invalid URL "ftp://h/"`},
		{"127.0.0.1:8080/", `invalid URL "127.0.0.1:8080/"`},
		{"http:///path", `invalid URL "http:///path"`},
		{"http://h:0/", "invalid port"},
		{"http://h:65536/", "invalid port"},
		{"http://h:x/", `invalid URL`},
	} {
		err := CheckURL(tc.url)
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), tc.want, tc.url)
	}
}

func TestWithDefaults(t *testing.T) {
	// Ensure the zero fields take ab's defaults: one request at a time,
	// 1 request or 50000 with a time limit (no cap for an open loop),
	// a 30 s timeout, GET or POST with a body of text/plain.
	for _, tc := range []struct {
		cfg  Config
		want Config
	}{
		{Config{}, Config{Concurrency: 1, Requests: 1, Timeout: DefaultTimeout, Method: "GET"}},
		{Config{TimeLimit: time.Second}, Config{Concurrency: 1, Requests: timedRequests, TimeLimit: time.Second, Timeout: DefaultTimeout, Method: "GET"}},
		{Config{TimeLimit: time.Second, Rate: 5}, Config{Concurrency: 1, Requests: math.MaxInt, TimeLimit: time.Second, Rate: 5, Timeout: DefaultTimeout, Method: "GET"}},
		{Config{Requests: 7, Concurrency: 3, Timeout: time.Second, Body: []byte{}}, Config{Concurrency: 3, Requests: 7, Timeout: time.Second,
			Method: "POST", Body: []byte{}, ContentType: "text/plain"}},
		{Config{Method: "PUT", Body: []byte("x"), ContentType: "application/json"}, Config{Concurrency: 1, Requests: 1, Timeout: DefaultTimeout,
			Method: "PUT", Body: []byte("x"), ContentType: "application/json"}},
	} {
		assert.Equal(t, tc.want, withDefaults(tc.cfg))
	}
}

func TestPrepareErrors(t *testing.T) {
	// Ensure a Config that cannot run says why before anything is sent,
	// and a HEAD run expects no bodies.
	_, err := prepare(Config{})
	assert.ErrorIs(t, err, errNoURL)
	tg, err := prepare(Config{URL: "https://127.0.0.1/", Method: "head", InsecureSkipVerify: true})
	require.NoError(t, err)
	assert.True(t, tg.head)
	require.NotNil(t, tg.tls)
	assert.True(t, tg.tls.InsecureSkipVerify)
	assert.Equal(t, "127.0.0.1", tg.tls.ServerName)
	assert.Equal(t, 443, tg.port)
	assert.Equal(t, `"/"`, string(tg.stepJSON), "a run is named by its path")
}

func TestBuildRequestMethods(t *testing.T) {
	// Ensure the method given is sent as written, a HEAD's responses are
	// read without bodies, and a header's own line ending is not doubled.
	tg, err := prepare(Config{URL: "http://127.0.0.1/x", Method: "HEAD", Headers: []string{"X-A: 1\r\n"}})
	require.NoError(t, err)
	assert.True(t, tg.head)
	assert.Equal(t, "HEAD /x HTTP/1.0\r\nX-A: 1\r\nHost: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3 (statesecrets loadtest)\r\nAccept: */*\r\n\r\n",
		string(tg.request))
	assert.Zero(t, tg.sentPerRequest, "no body, nothing counted as sent")
}
