package loadtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/report")

// golden compares got with testdata/report/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "report", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(got))
}

func ms2(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// seedStatic is the seed's static run as a Result (its figures, not a run
// of ours), with the sd and medians it printed.
func seedStatic() *Result {
	return &Result{
		ServerSoftware: "State-Secrets-server/0.1", ServerHostname: "marian", ServerPort: 8080,
		DocumentPath: "/", DocumentLength: 2752, ConcurrencyLevel: 12,
		TimeTaken: 15477 * time.Millisecond, CompleteRequests: 1000,
		TotalTransferred: 2935000, HTMLTransferred: 2752000,
		Connect:    Phase{Min: 0, Mean: ms2(1.2), SD: ms2(6.7), Median: 0, Max: ms2(85)},
		Processing: Phase{Min: ms2(61), Mean: ms2(183.3), SD: ms2(29.6), Median: ms2(197), Max: ms2(330)},
		Waiting:    Phase{Min: ms2(7), Mean: ms2(183), SD: ms2(30.1), Median: ms2(196), Max: ms2(330)},
		Total:      Phase{Min: ms2(61), Mean: ms2(184.4), SD: ms2(27.3), Median: ms2(197), Max: ms2(330)},
		Percentiles: []Percentile{
			{50, ms2(197)}, {66, ms2(199)}, {75, ms2(200)}, {80, ms2(201)}, {90, ms2(203)},
			{95, ms2(232)}, {98, ms2(235)}, {99, ms2(245)}, {99.9, ms2(300)}, {99.99, ms2(330)}, {100, ms2(330)},
		},
	}
}

func TestWriteReport(t *testing.T) {
	t.Run("Seed", func(t *testing.T) {
		// Ensure the seed's figures render in ab 2.3's layout.
		var b bytes.Buffer
		require.NoError(t, writeReport(&b, seedStatic()))
		golden(t, "seed.txt", b.Bytes())
	})
	t.Run("FailuresKeepAlive", func(t *testing.T) {
		// Ensure the optional lines appear as ab's: failure breakdown,
		// Non-2xx, Keep-Alive requests, body sent, variable length, and the
		// sanity warnings.
		res := seedStatic()
		res.KeepAlive, res.KeepAliveRequests = true, 990
		res.VariableLength = true
		res.FailedRequests, res.Failures = 10, Failures{Connect: 1, Receive: 2, Length: 3, Exceptions: 4}
		res.Non2xx = 7
		res.TotalBodySent = 150000
		res.Connect.Mean = ms2(20)
		var b bytes.Buffer
		require.NoError(t, writeReport(&b, res))
		golden(t, "failures_keepalive.txt", b.Bytes())
	})
}

func TestWriteJSON(t *testing.T) {
	// Ensure the JSON holds the figures, the derived rates and times in ms.
	var b bytes.Buffer
	require.NoError(t, seedStatic().writeResults(&b))
	var got map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.InDelta(t, 64.61, got["requests_per_second"], 0.005)
	assert.EqualValues(t, 1000, got["complete_requests"])
	assert.EqualValues(t, 2752, got["document_length"])
	total := got["connection_times_ms"].(map[string]any)["total"].(map[string]any)
	assert.InDelta(t, 184.4, total["mean"], 1e-9)
	assert.InDelta(t, 330, total["max"], 1e-9)
	assert.Len(t, got["percentiles_ms"], 11)
	assert.InDelta(t, 245, got["percentiles_ms"].(map[string]any)["p99"], 1e-9, "keyed by row")
	assert.InDelta(t, 300, got["percentiles_ms"].(map[string]any)["p99.9"], 1e-9)
	assert.InDelta(t, 330, got["percentiles_ms"].(map[string]any)["p100"], 1e-9)
}

// seed2002 is the seed's run of the Perl server, as cmd/loadtest/lesson
// has it.
var seed2002 = Reference{
	Label:            "State Secrets 2002 (ab -n 1000 -c 12)",
	Static:           ReferenceFigures{RequestsPerSecond: 64.61, Mean: 184, P50: 197, P99: 245, Max: 330},
	Dynamic:          ReferenceFigures{RequestsPerSecond: 28.45, Mean: 420, P50: 427, P99: 468, Max: 499},
	Concurrency:      12,
	Requests:         1000,
	StaticDocLength:  2752,
	DynamicDocLength: 3019,
}

func TestWriteComparison(t *testing.T) {
	// Ensure the gap table sets our two pages beside the seed's, with both
	// gaps: the seed's 64.61/28.45 = 2.27.
	static, dynamic := seedStatic(), seedStatic()
	dynamic.DocumentPath = "/game?function=hq&tid=ff46fa784a60d86029abca19d204ed17"
	dynamic.TimeTaken = 35151 * time.Millisecond
	g := &Gap{Static: static, Dynamic: dynamic, Reference: &seed2002}
	assert.InDelta(t, 35.151/15.477, g.Ratio(), 1e-9)
	assert.InDelta(t, 2.27, seed2002.Ratio(), 0.005)
	var b bytes.Buffer
	require.NoError(t, g.writeComparison(&b))
	golden(t, "gap.txt", b.Bytes())

	b.Reset()
	require.NoError(t, g.writeResults(&b))
	var got struct {
		Gap       float64        `json:"gap"`
		Static    map[string]any `json:"static"`
		Reference map[string]any `json:"reference"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.InDelta(t, g.Ratio(), got.Gap, 1e-9)
	assert.Equal(t, "/", got.Static["document_path"])
	assert.InDelta(t, 28.45, got.Reference["dynamic_requests_per_second"], 1e-9)
}
