package gameserver_test

import (
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abField returns the first word after "name:" in ab's report, or "" if
// the line is missing.
func abField(report, name string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:\s+(\S+)`).FindStringSubmatch(report)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestAb(t *testing.T) {
	t.Parallel()
	ab, err := exec.LookPath("ab")
	require.NoError(t, err, "ab not found: install apache2-utils (.ci/run does)")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"Close", nil},
		{"KeepAlive", []string{"-k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure ApacheBench, as the load test's reference client,
			// completes 5000 requests at -c 12 with no failures and no
			// non-2xx answers, and with -k keeps every connection alive.
			addr, s := startServer(t, gameserver.Config{Handler: textHandler("hello from the loop\n")})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := append(append([]string{}, tc.args...), "-n", "5000", "-c", "12", "http://"+addr+"/")
			out, err := exec.CommandContext(ctx, ab, args...).CombinedOutput()
			report := string(out)
			require.NoError(t, err, "ab %v:\n%s", args, report)
			assert.Equal(t, "5000", abField(report, "Complete requests"), report)
			assert.Equal(t, "0", abField(report, "Failed requests"), report)
			assert.Contains(t, []string{"", "0"}, abField(report, "Non-2xx responses"), report)
			assert.Equal(t, "20", abField(report, "Document Length"), report)
			assert.NotEmpty(t, abField(report, "Server Software"), report)
			if len(tc.args) > 0 {
				assert.Equal(t, "5000", abField(report, "Keep-Alive requests"), report)
			}
			// Stats are published at the end of each loop turn: ab may
			// have read the last response before that turn ended.
			eventually(t, func() bool { return s.Stats().Requests == 5000 }, "Requests, want 5000")
		})
	}
}
