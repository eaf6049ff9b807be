package loadtest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stormJSON is a hol run's JSON whose load is a login storm of 30 logins
// in 3 s answered with statuses, the loop busy utilization of the time
// and its worker pool working workMS in all; the probe's p50 and p99 are
// 1 and 4 ms alone, 1.5 and 20 ms during the storm.
func stormJSON(statuses string, utilization, workMS float64) string {
	probe := func(p50, p99 float64) string {
		return fmt.Sprintf(`{"complete_requests": 300, "requests_per_second": 100, "time_taken_s": 3,
			"percentiles_ms": [{"percent": 50, "ms": %g}, {"percent": 99, "ms": %g}], "loop": {"utilization": 0.02}}`, p50, p99)
	}
	return fmt.Sprintf(`{"probe_rate": 100, "probe_alone": %s, "probe_under_load": %s,
		"load": {"document_path": "/login", "concurrency_level": 16, "complete_requests": 30, "time_taken_s": 3,
		"requests_per_second": 10, "non_2xx_responses": 30, "non_2xx_by_status": %s,
		"connection_times_ms": {"total": {"mean": 1500}},
		"loop": {"utilization": %g, "lag_p99_ms": 2, "longest_turn_ms": 3, "work_ms": %g}}}`,
		probe(1, 4), probe(1.5, 20), statuses, utilization, workMS)
}

func TestExplainStorm(t *testing.T) {
	dir := t.TempDir()
	explain := func(json string) (string, error) {
		path := filepath.Join(dir, "storm.json")
		require.NoError(t, os.WriteFile(path, []byte(json), 0o600))
		var b bytes.Buffer
		err := loadtest.Explain(&b, loadtest.ExplainStorm, []string{path})
		return b.String(), err
	}
	// Ensure the sentences are computed from the figures: 30 logins, 28
	// checked and 2 limited; 5% of 3 s of loop time over 30 logins is at
	// most 5 ms each, against the pool's 2400 ms / 30 = 80 ms.
	out, err := explain(stormJSON(`{"403": 28, "429": 2}`, 0.05, 2400))
	require.NoError(t, err)
	assert.Contains(t, out, "16 clients sent 30 logins with a wrong password in 3.0 s (10.0 a second, 1500 ms each on average): "+
		"28 were checked and refused (403), 2 stopped by the per-address limit (429).")
	assert.Contains(t, out, "the probe's p50 went from 1.00 to 1.50 ms and its p99 from 4.00 to 20.00 ms (1.5x and 5.0x)")
	assert.Contains(t, out, "at most 5.00 ms of loop time per login, while the worker pool worked 80 ms per login: the hashing ran there, off the loop")
	assert.Contains(t, out, "what the probe lost is CPU time shared with the hashing")

	// A loop busy half the time, 50 ms a login, and no pool: on the loop.
	out, err = explain(stormJSON(`{"403": 30}`, 0.5, 0))
	require.NoError(t, err)
	assert.Contains(t, out, "at most 50.00 ms of loop time per login, as long as a hash: the hashing seems to run on the loop")

	// Any other answer to a login fails the storm, after the sentences.
	out, err = explain(stormJSON(`{"403": 20, "503": 10}`, 0.05, 2400))
	require.ErrorIs(t, err, loadtest.ErrFailed)
	assert.Contains(t, err.Error(), "login storm: 10 non-2xx responses (403: 20, 503: 10)")
	assert.Contains(t, out, "16 clients sent 30 logins")
}
