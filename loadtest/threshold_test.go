package loadtest

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseThreshold(t *testing.T) {
	// Ensure every form of METRIC OP VALUE parses to its parts, units
	// turned into the metric's (ms, req/s, a count or a percentage), and
	// a step before a dot is kept apart from a percentile's decimals.
	for _, tc := range []struct {
		expr string
		want Threshold
	}{
		{"p99<20ms", Threshold{Metric: "p99", Op: "<", Value: 20}},
		{"p99.9 <= 1.5s", Threshold{Metric: "p99.9", Op: "<=", Value: 1500}},
		{"P50>=250us", Threshold{Metric: "p50", Op: ">=", Value: 0.25}},
		{"p99.99==3", Threshold{Metric: "p99.99", Op: "==", Value: 3}},
		{"max<1s", Threshold{Metric: "max", Op: "<", Value: 1000}},
		{"rate>1000", Threshold{Metric: "rate", Op: ">", Value: 1000}},
		{"rate>=12.5/s", Threshold{Metric: "rate", Op: ">=", Value: 12.5}},
		{"errors==0", Threshold{Metric: "errors", Op: "==", Value: 0}},
		{"errors<1%", Threshold{Metric: "errors", Op: "<", Value: 1, Percent: true}},
		{"page.p99<50ms", Threshold{Step: "page", Metric: "p99", Op: "<", Value: 50}},
		{"hq.p99.9<50ms", Threshold{Step: "hq", Metric: "p99.9", Op: "<", Value: 50}},
		{"delivery.p99<1s", Threshold{Step: "delivery", Metric: "p99", Op: "<", Value: 1000}},
		{"order.errors<=2%", Threshold{Step: "order", Metric: "errors", Op: "<=", Value: 2, Percent: true}},
	} {
		got, err := ParseThreshold(tc.expr)
		require.NoError(t, err, tc.expr)
		tc.want.Expr = tc.expr
		assert.Equal(t, tc.want, got, tc.expr)
	}
}

func TestParseThresholdErrors(t *testing.T) {
	// Ensure a bad threshold's error names what is wrong.
	for _, tc := range []struct{ expr, want string }{
		{"p99~20ms", "want METRIC OP VALUE"},
		{"p99", "want METRIC OP VALUE"},
		{"p42<1ms", `unknown metric "p42"`},
		{"p100<1ms", `unknown metric "p100"`},
		{"latency<1ms", `unknown metric "latency"`},
		{"p99<soon", `bad value "soon" for p99`},
		{"p99<-1ms", `bad value "-1ms" for p99`},
		{"rate>fast", `bad value "fast" for rate`},
		{"errors<x%", `bad value "x%" for errors`},
		{"page.p42<1ms", `unknown metric "p42"`},
	} {
		_, err := ParseThreshold(tc.expr)
		require.Error(t, err, tc.expr)
		assert.Contains(t, err.Error(), tc.want, tc.expr)
		assert.Contains(t, err.Error(), `threshold "`+tc.expr+`"`, "the error quotes the threshold")
	}
}

func TestThresholdMeasure(t *testing.T) {
	// Ensure each metric reads its figure of a run: a percentage row
	// (corrected under Rate), the longest request, ab's rate, and errors
	// (failed plus non-2xx) as a count or a share of complete requests.
	res := seedStatic()
	res.FailedRequests, res.Non2xx = 10, 15
	for _, tc := range []struct {
		expr string
		want float64
	}{
		{"p50<1", 197}, {"p99<1", 245}, {"p99.9<1", 300}, {"max<1", 330},
		{"rate>1", 1000 / 15.477}, {"errors==0", 25}, {"errors<1%", 2.5},
	} {
		th := mustThresholds(t, tc.expr)[0]
		assert.InDelta(t, tc.want, th.measure(res), 1e-9, tc.expr)
	}
	res.OpenLoop = &OpenLoop{Corrected: Phase{Max: ms2(900)}}
	assert.InDelta(t, 900, mustThresholds(t, "max<1")[0].measure(res), 1e-9, "under Rate the corrected maximum")
	res.CompleteRequests = 0
	assert.Zero(t, mustThresholds(t, "errors<1%")[0].measure(res), "no share of nothing")
}

func TestThresholdHolds(t *testing.T) {
	// Ensure each operator compares as written.
	for _, tc := range []struct {
		op   string
		got  float64
		want bool
	}{
		{"<", 1, true}, {"<", 2, false}, {"<=", 2, true}, {"<=", 3, false},
		{">", 3, true}, {">", 2, false}, {">=", 2, true}, {">=", 1, false},
		{"==", 2, true}, {"==", 2.5, false},
	} {
		assert.Equal(t, tc.want, Threshold{Op: tc.op, Value: 2}.holds(tc.got), "%v %s 2", tc.got, tc.op)
	}
}

func TestUnitValue(t *testing.T) {
	// Ensure a measured value prints in its threshold's unit.
	for _, tc := range []struct {
		expr string
		v    float64
		want string
	}{
		{"p99<1ms", 12.345, "12.35 ms"}, {"rate>1", 99.5, "99.50 req/s"}, {"errors==0", 3, "3"},
		{"errors<1%", 0.25, "0.250%"}, {"page.p99<1s", math.NaN(), "no step page"},
	} {
		assert.Equal(t, tc.want, mustThresholds(t, tc.expr)[0].unitValue(tc.v), tc.expr)
	}
}

func TestWriteThresholds(t *testing.T) {
	// Ensure the table marks each failed check, ends with how many failed
	// or that all held, and prints nothing for no checks.
	ts := mustThresholds(t, "p99<1ms", "errors==0")
	var b bytes.Buffer
	require.NoError(t, writeThresholds(&b, []ThresholdCheck{{ts[0], "/", 2, false}, {ts[1], "/", 0, true}}))
	assert.Equal(t, "\nThresholds\nrun  threshold  measured  result\n/    p99<1ms    2.00 ms   FAILED\n/    errors==0  0         ok\n"+
		"1 of 2 thresholds FAILED\n", b.String())
	b.Reset()
	require.NoError(t, writeThresholds(&b, []ThresholdCheck{{ts[1], "/", 0, true}}))
	assert.Contains(t, b.String(), "all 1 thresholds held")
	b.Reset()
	require.NoError(t, writeThresholds(&b, nil))
	assert.Empty(t, b.String())
}

func TestStepThresholdMeasures(t *testing.T) {
	// Ensure a step's figures are measured over the run (a percentile row,
	// or the maximum for fewer than two values) and per window, where
	// only p50, p90, p99 and p99.9 are kept and another percentile reads
	// the next kept one above it.
	step := StepResult{Count: 200, Errors: 4, Rate: 20, Latency: Phase{Max: ms2(90)},
		Percentiles: []Percentile{{50, ms2(10)}, {99, ms2(80)}}}
	for _, tc := range []struct {
		expr string
		want float64
	}{{"p50<1", 10}, {"p99<1", 80}, {"p95<1", 90}, {"max<1", 90}, {"rate>1", 20}, {"errors==0", 4}, {"errors<1%", 2}} {
		assert.InDelta(t, tc.want, mustThresholds(t, tc.expr)[0].measureStep(step), 1e-9, tc.expr)
	}
	win := &Window{Length: 2 * time.Second}
	ws := WindowStep{Count: 50, Errors: 5, P50: ms2(1), P90: ms2(2), P99: ms2(3), P999: ms2(4), Max: ms2(5)}
	for _, tc := range []struct {
		expr string
		want float64
	}{{"p50<1", 1}, {"p66<1", 2}, {"p90<1", 2}, {"p95<1", 3}, {"p99<1", 3}, {"p99.9<1", 4}, {"p99.99<1", 5}, {"max<1", 5},
		{"rate>1", 25}, {"errors==0", 5}, {"errors<1%", 10}} {
		assert.InDelta(t, tc.want, mustThresholds(t, tc.expr)[0].measureWindow(ws, win), 1e-9, tc.expr)
	}
	assert.Zero(t, mustThresholds(t, "errors<1%")[0].errorsOf(0, 0))
}

func TestCheckWindow(t *testing.T) {
	// Ensure a window fails at the first threshold a step breaks, naming
	// the step and its figure, and holds when none does.
	win := &Window{Length: time.Second, Steps: []WindowStep{{Step: "hq", Count: 10, P99: ms2(80)}, {Step: "page", Count: 10, P99: ms2(20)}},
		Delivery: WindowStep{Step: DeliveryStep, Count: 3, P99: ms2(1500)}}
	assert.Equal(t, "p99<50ms (hq: 80.00 ms)", checkWindow(mustThresholds(t, "p99<50ms"), win))
	assert.Equal(t, "", checkWindow(mustThresholds(t, "page.p99<50ms", "errors==0"), win))
	assert.Equal(t, "delivery.p99<1s (delivery: 1500.00 ms)", checkWindow(mustThresholds(t, "page.p99<50ms", "delivery.p99<1s"), win))
	assert.Equal(t, "", checkWindow(mustThresholds(t, "missing.p99<1ms"), win), "a step that ended nothing in the window holds")
}
