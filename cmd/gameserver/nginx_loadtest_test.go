package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadtestBehindNginxTLS measures the shipped nginx site over TLS with
// the project's own load generator, as a host would check a deployment:
// cmd/loadtest built as a user builds it, an https:// URL, -insecure for
// the test's self-signed certificate (and a clear refusal without it).
func TestLoadtestBehindNginxTLS(t *testing.T) {
	dir := t.TempDir()
	p := startProgram(t, "-db", filepath.Join(dir, "ss.db"), "-trust-proxy")
	certFile, keyFile, _ := selfSigned(t, dir, "game.test")
	httpsPort, _, _ := startNginx(t, strings.TrimPrefix(p.base, "http://"), certFile, keyFile)
	bin := goBuild(t, dir, "github.com/statesecrets/server/cmd/loadtest")
	target := fmt.Sprintf("https://127.0.0.1:%d/", httpsPort)

	// Ensure keep-alive requests over TLS through nginx all succeed, and
	// the report names the protocol.
	out, err := exec.Command(bin, "-insecure", "-k", "-n", "200", "-c", "4", target).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Complete requests:      200\n")
	assert.Contains(t, string(out), "Failed requests:        0\n")
	assert.NotContains(t, string(out), "Non-2xx")
	assert.Regexp(t, `SSL/TLS Protocol: +TLS 1\.[23],`, string(out))

	// Ensure the JSON envelope records the https target and the skipped check.
	out, err = exec.Command(bin, "-json", "-insecure", "-n", "20", target).Output()
	require.NoError(t, err)
	var env struct {
		Settings struct {
			URLs     []string `json:"urls"`
			Insecure bool     `json:"insecure_skip_verify"`
		} `json:"settings"`
		Results struct {
			Complete int    `json:"complete_requests"`
			TLS      string `json:"tls_protocol"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(out, &env), "%s", out)
	assert.Equal(t, []string{target}, env.Settings.URLs)
	assert.True(t, env.Settings.Insecure)
	assert.Equal(t, 20, env.Results.Complete)
	assert.NotEmpty(t, env.Results.TLS)

	// Ensure without -insecure the self-signed certificate is refused at once, saying why.
	out, err = exec.Command(bin, "-n", "5", target).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "SSL handshake failed")
	assert.Contains(t, string(out), "-insecure")
}
