package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/internal/version"
	"github.com/statesecrets/server/loadtest"
)

// mustSchema compiles loadtest/schema.json, the documented JSON form.
func mustSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(filepath.Join("..", "..", "loadtest", "schema.json"))
	require.NoError(t, err)
	return s
}

func TestJSONSchema(t *testing.T) {
	schema := mustSchema(t)
	url := MustServe(t)
	tlsServer := httptest.NewTLSServer(newPages())
	t.Cleanup(tlsServer.Close)
	dir := t.TempDir()
	for _, tc := range []struct {
		kind string
		args []string
	}{
		{"run", []string{"-n", "10", "-c", "2", url + "/"}},
		{"run", []string{"-rate", "200", "-t", "0.2", "-c", "2", "-k", "-metrics", url + "/", "-html", filepath.Join(dir, "r.html"), url + "/"}},
		{"run", []string{"-n", "4", "-insecure", tlsServer.URL + "/"}},
		{"gap", []string{"gap", "-n", "20", "-c", "2", "-warmup", "0.05", url + "/", url + "/game?tid=x"}},
		{"hol", []string{"hol", "-t", "0.2", "-warmup", "0.05", "-c", "2", "-load-rate", "100", "-H", "Cookie: secret=1", url + "/", url + "/game?tid=x"}},
		{"sweep", []string{"sweep", "-k", "-t", "0.1", "-warmup", "0.05", "-c", "1,2", url + "/", url + "/game"}},
	} {
		t.Run(strings.Join(tc.args[:min(3, len(tc.args))], " "), func(t *testing.T) {
			// Ensure every subcommand's -json is the versioned envelope of
			// its kind, valid against the documented schema, its
			// credentials redacted.
			start := time.Now().UTC().Add(-time.Second)
			args := append([]string{"-json"}, tc.args...)
			if tc.kind != "run" { // after the subcommand's name
				args = append([]string{tc.args[0], "-json"}, tc.args[1:]...)
			}
			code, stdout, stderr := runCLI(args...)
			require.Equal(t, 0, code, stderr)
			var doc any
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			require.NoError(t, schema.Validate(doc), stdout)
			var env struct {
				Kind      string    `json:"kind"`
				Version   string    `json:"version"`
				StartedAt time.Time `json:"started_at"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &env))
			assert.Equal(t, tc.kind, env.Kind)
			assert.Regexp(t, `go1\.`, env.Version)
			assert.WithinRange(t, env.StartedAt, start, time.Now().UTC())
			assert.NotContains(t, stdout, "secret=1", "a Cookie header's value is a credential")
		})
	}
}

func TestJSONSchemaUsers(t *testing.T) {
	schema := mustSchema(t)
	url := MustServe(t)
	// Ensure a virtual-user run's envelope (loadtest.RunUsers, written
	// by cmd/players) is valid against the schema too.
	cfg := loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 20, Over: 200 * time.Millisecond},
		Window: 50 * time.Millisecond, Scenario: func(ctx context.Context, u *loadtest.User) error {
			if _, err := u.Get(ctx, "front", "/"); err != nil {
				return err
			}
			if err := u.Sleep(ctx, 120*time.Millisecond); err != nil {
				return err
			}
			_, err := u.Get(ctx, "game", "/game?tid=x")
			return err
		}}
	res, err := loadtest.RunUsers(t.Context(), cfg)
	require.NoError(t, err)
	require.NotEmpty(t, res.Windows)
	var b bytes.Buffer
	require.Equal(t, 0, loadtest.Print(res, loadtest.PrintOptions{JSON: true, Stdout: &b, StartedAt: res.StartedAt,
		Settings: cfg.Settings()}))
	var doc any
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	require.NoError(t, schema.Validate(doc), b.String())
	assert.Contains(t, b.String(), `"name": "front"`)
}

func TestJSONSchemaRefuses(t *testing.T) {
	schema := mustSchema(t)
	// Ensure the schema refuses what it should: a missing envelope field, a wrong kind's results,
	// version 2's percentage lists.
	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"kind": "hol", "schema_version": 3, "started_at": "2026-12-01T10:00:00Z",
		"version": "x", "settings": {"urls": ["http://h/"], "concurrency": 1, "timeout_s": 30, "keep_alive": false},
		"results": {"static": {}, "dynamic": {}, "gap": 1}}`), &doc))
	assert.Error(t, schema.Validate(doc))
	require.NoError(t, json.Unmarshal([]byte(`{"kind": "run", "schema_version": 3}`), &doc))
	assert.Error(t, schema.Validate(doc))
	require.NoError(t, json.Unmarshal([]byte(`{"kind": "run", "schema_version": 2, "started_at": "2026-12-01T10:00:00Z",
		"version": "x", "settings": {"urls": ["http://h/"], "concurrency": 1, "timeout_s": 30, "keep_alive": false}, "results": {}}`), &doc))
	assert.Error(t, schema.Validate(doc), "version 2 is not this schema's")
}

func TestVersion(t *testing.T) {
	// Ensure -version prints the program's version and runs nothing.
	code, stdout, _ := runCLI("-version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "loadtest "+version.Get().String()+"\n", stdout, "internal/version's line, as every binary's")
	code, stdout, _ = runCLI("hol", "-version")
	assert.Equal(t, 0, code)
	assert.True(t, bytes.HasPrefix([]byte(stdout), []byte("loadtest ")))
}

func TestExplainReadsBothForms(t *testing.T) {
	// Ensure explain reads a file of schema version 1 (the bare results)
	// beside one in the envelope.
	url := MustServe(t)
	dir := t.TempDir()
	cur := filepath.Join(dir, "hol-2.json")
	code, _, stderr := runCLI("hol", "-k", "-t", "0.2", "-warmup", "0.05", "-c", "2", "-json-out", cur, url+"/", url+"/game?tid=x")
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(cur)
	require.NoError(t, err)
	var env struct {
		Results json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	old := filepath.Join(dir, "hol-1.json")
	require.NoError(t, os.WriteFile(old, env.Results, 0o600))
	code, stdout, stderr := runCLI("explain", "hol", "both="+old+","+cur)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^both +.* 2$`, stdout, "two repeats read")
}
