package gameserver_test

import (
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
)

func TestAb(t *testing.T) {
	t.Parallel()
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
			args := append(append([]string{}, tc.args...), "-n", "5000", "-c", "12", "http://"+addr+"/")
			report := testkit.RunAB(t, time.Minute, args...)
			assert.Equal(t, "5000", testkit.ABField(report, "Complete requests"), report)
			assert.Equal(t, "0", testkit.ABField(report, "Failed requests"), report)
			assert.Contains(t, []string{"", "0"}, testkit.ABField(report, "Non-2xx responses"), report)
			assert.Equal(t, "20", testkit.ABField(report, "Document Length"), report)
			assert.NotEmpty(t, testkit.ABField(report, "Server Software"), report)
			if len(tc.args) > 0 {
				assert.Equal(t, "5000", testkit.ABField(report, "Keep-Alive requests"), report)
			}
			// Stats are published at the end of each loop turn: ab may
			// have read the last response before that turn ended.
			eventually(t, func() bool { return s.Stats().Requests == 5000 }, "Requests, want 5000")
		})
	}
}
