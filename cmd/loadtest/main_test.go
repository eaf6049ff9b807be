package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustServe starts a server answering "/" with a short page and "/game"
// with a longer one, and returns its URL.
func MustServe(tb testing.TB) string {
	tb.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "front page") })
	mux.HandleFunc("/game", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "headquarters of "+r.URL.Query().Get("tid")+string(b))
	})
	s := httptest.NewServer(mux)
	tb.Cleanup(s.Close)
	return s.URL
}

// runCLI runs the program with args and returns its exit status and output.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // in the message: the flag's name
	}{
		{[]string{"-n", "x", "http://127.0.0.1/"}, "-n"},
		{[]string{"-n", "0", "http://127.0.0.1/"}, "-n"},
		{[]string{"-c", "0", "http://127.0.0.1/"}, "-c"},
		{[]string{"-n", "5", "-c", "10", "http://127.0.0.1/"}, "-c"},
		{[]string{"-t", "soon", "http://127.0.0.1/"}, "-t"},
		{[]string{"-s", "0", "http://127.0.0.1/"}, "-s"},
		{[]string{"-H", "NoColon", "http://127.0.0.1/"}, "-H"},
		{[]string{"-p", "/nonexistent/body", "http://127.0.0.1/"}, "-p"},
		{[]string{"-bogus", "http://127.0.0.1/"}, "-bogus"},
		{[]string{"-rate", "-5", "http://127.0.0.1/"}, "-rate"},
		{[]string{"-rate", "fast", "http://127.0.0.1/"}, "-rate"},
		{[]string{"-n", "1"}, "URL"},
		{[]string{"gap", "http://127.0.0.1/"}, "URL"},
		{[]string{"ftp://x/"}, `invalid URL "ftp://x/"`},
		{[]string{"127.0.0.1:8080/"}, `invalid URL "127.0.0.1:8080/"`},
		{[]string{"http://127.0.0.1:99999/"}, "invalid port"},
		{[]string{"gap", "http://127.0.0.1/", "https://127.0.0.1/"}, `invalid URL "https://127.0.0.1/"`},
	} {
		// Ensure a bad flag exits 2 with a message naming it.
		code, _, stderr := runCLI(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
	}
}

func TestReport(t *testing.T) {
	url := MustServe(t)
	// Ensure a run prints ab's report, with flags before and after the URL
	// as ab accepts them.
	code, stdout, stderr := runCLI("-n", "20", url+"/?x=1", "-c", "2", "-k")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Document Path:          /?x=1\n")
	assert.Contains(t, stdout, "Document Length:        10 bytes\n")
	assert.Contains(t, stdout, "Concurrency Level:      2\n")
	assert.Contains(t, stdout, "Complete requests:      20\n")
	assert.Contains(t, stdout, "Failed requests:        0\n")
	assert.Contains(t, stdout, "Keep-Alive requests:    20\n")
	assert.Contains(t, stdout, " 100%")
	assert.NotContains(t, stderr, "Completed", "no progress when stderr is not a terminal")
}

func TestJSONAndPost(t *testing.T) {
	url := MustServe(t)
	body := filepath.Join(t.TempDir(), "body")
	require.NoError(t, os.WriteFile(body, []byte("+posted"), 0o644))
	// Ensure -json prints the result as JSON and -p posts the file.
	code, stdout, stderr := runCLI("-json", "-n", "4", "-p", body, "-T", "text/x-test", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.EqualValues(t, 4, res["complete_requests"])
	assert.EqualValues(t, len("headquarters of abc+posted"), res["document_length"])
	assert.Positive(t, res["total_body_sent_bytes"])
}

func TestGap(t *testing.T) {
	url := MustServe(t)
	// Ensure gap prints both reports and the comparison table with the
	// seed's reference row.
	code, stdout, stderr := runCLI("gap", "-c", "2", "-n", "30", "-warmup", "0.05", url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 2, bytes.Count([]byte(stdout), []byte("Server Software:")))
	assert.Contains(t, stdout, "Gap: static vs dynamic, concurrency 2, no keep-alive, 30 + 30 requests")
	assert.Contains(t, stdout, "State Secrets 2002 (ab -n 1000 -c 12)")
	assert.Contains(t, stdout, "2.27x")

	// Ensure gap -json gives both results and the gap.
	code, stdout, stderr = runCLI("gap", "-json", "-k", "-c", "2", "-t", "0.2", "-warmup", "0.05", url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	var g struct {
		Gap     float64        `json:"gap"`
		Static  map[string]any `json:"static"`
		Dynamic map[string]any `json:"dynamic"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &g))
	assert.Positive(t, g.Gap)
	assert.Equal(t, true, g.Static["keep_alive"])
	assert.Equal(t, "/game?tid=abc", g.Dynamic["document_path"])
}

func TestAbort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	// Ensure an aborted run exits 1 with ab's message and no report.
	code, stdout, stderr := runCLI("-n", "50", "http://"+addr+"/")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "Test aborted after 10 failures")
	assert.Contains(t, stderr, "apr_socket_connect(): Connection refused (111)")
	assert.NotContains(t, stdout, "Server Software")
}
