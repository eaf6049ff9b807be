package loadtest

import (
	"testing"

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
