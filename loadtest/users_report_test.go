package loadtest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usersOf is a small virtual-user result with a failing step, delivery,
// an early stop and the loop's figures.
func usersOf() *UsersResult {
	step := func(name string, n, errs int64, p50, p99 float64) StepResult {
		return StepResult{Name: name, Count: n, Errors: errs, Rate: float64(n) / 10, Latency: Phase{Max: ms2(2 * p99)},
			Percentiles: []Percentile{{50, ms2(p50)}, {90, ms2(p99 / 2)}, {99, ms2(p99)}}, Uncorrected: []Percentile{{99, ms2(p99 / 3)}},
			LatenessP99: ms2(0.5), StatusCodes: map[int]int64{200: n - errs, 500: errs}}
	}
	return &UsersResult{Arrival: Arrival{From: 0, To: 100, Over: 30 * time.Second}, Hold: 5 * time.Second, Window: 5 * time.Second,
		TimeTaken: 10 * time.Second, Users: 60, Failed: 2, Events: 1234,
		Steps:    []StepResult{step("order", 50, 5, 12, 80), step("page", 300, 0, 4, 30)},
		Delivery: StepResult{Name: DeliveryStep, Count: 900, Percentiles: []Percentile{{50, ms2(100)}, {90, ms2(200)}, {99, ms2(400)}}},
		Errors:   map[string]string{"order": "order: status 500", "scenario": "gave up"},
		Windows: []Window{{At: 5 * time.Second, Length: 5 * time.Second, Users: 30, Active: 30, UserSeconds: 75},
			{At: 10 * time.Second, Length: 5 * time.Second, Users: 60, Active: 58, UserSeconds: 220}},
		UserSeconds: 295,
		Client:      ClientCPU{CPU: 2500 * time.Millisecond, Cores: 1, Known: true, Share: 0.25},
		Broke:       "order.errors==0 (order: 5)", BrokeAt: 1,
		Loop: &LoopFigures{Utilization: 0.42, LagP99: ms2(3), LongestTurn: ms2(9), LongestTurnBound: true, SlowRequests: 2, CPU: 1500 * time.Millisecond,
			Requests: 1000}}
}

func TestUsersText(t *testing.T) {
	// Ensure a virtual-user run's text gives the schedule, a row a step
	// and delivery's, the first errors (the scenario's last), the stop
	// and the loop's figures.
	text := Text(t, usersOf())
	for _, want := range []string{
		"Virtual users:          60 arrived (ramp 0 to 100 over 30s, held 5s), 2 failed\n",
		"Time taken:             10.000 seconds\n",
		"Events received:        1234 (123.4/s)\n",
		"First error of order: order: status 500\nFirst error of scenario: gave up\n",
		"Broke at 10 s (58 users running, 60 arrived): order.errors==0 (order: 5); stopped at 10 s with 58 running, 60 arrived\n",
		"Server loop: utilization 42.0%, lag p99 3.00 ms, longest turn <= 9.00 ms, 2 slow requests, CPU 1500.00 ms (1.50 ms a request)\n",
		// 2.5 s over 10 s of one core; over (0+30)/2*5 + (30+58)/2*5 = 295 user-seconds; over 1234 events.
		"Load generator: CPU 2500.00 ms, 25% of its 1 core, 8.47 ms a user-second, 2.03 ms an event received\n",
	} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `(?m)^ +order +50 +5 +5\.00 +12\.00 +40\.00 +80\.00 +160\.00 +26\.67 +0\.50$`, text)
	assert.Regexp(t, `(?m)^ +delivery +900 +0 `, text)
	r := usersOf()
	r.Delivery.Count, r.Loop = 0, &LoopFigures{Error: "refused"}
	text = Text(t, r)
	assert.NotRegexp(t, `(?m)^ +delivery +0`, text, "no delivery row without events timed")
	assert.Contains(t, text, "Server loop: metrics unreadable: refused")

	// A server without a loop (net/http) shows its CPU, no loop figures;
	// an unknown count of requests gives no CPU per request, not zero.
	r.Loop = &LoopFigures{CPU: 900 * time.Millisecond}
	r.Client.Known = false
	text = Text(t, r)
	assert.Contains(t, text, "Server: no event loop figures (a server without one), CPU 900.00 ms (- a request)\n")
	assert.NotContains(t, text, "utilization")
	assert.NotContains(t, text, "Load generator:")
}

func TestUsersJSON(t *testing.T) {
	// Ensure a virtual-user run's JSON has its schedule (a rate's as the
	// users it brings), keyed percentiles and statuses per step, its
	// windows and where it broke.
	r := usersOf()
	r.Arrival = Arrival{Rate: 2, Over: 30 * time.Second}
	var b strings.Builder
	require.NoError(t, r.writeResults(&b))
	var j struct {
		Arrival struct {
			Rate     float64 `json:"rate"`
			From, To int
		} `json:"arrival"`
		Steps []struct {
			Name        string             `json:"name"`
			Percentiles map[string]float64 `json:"percentiles_ms"`
			StatusCodes map[string]int64   `json:"status_codes"`
		} `json:"steps"`
		Windows []struct {
			At float64 `json:"at_s"`
		} `json:"windows"`
		Broke   string `json:"broke"`
		BrokeAt int    `json:"broke_at_window"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.String()), &j))
	assert.Equal(t, 2.0, j.Arrival.Rate)
	assert.Equal(t, 60, j.Arrival.To, "a rate's users, 2/s over 30 s")
	require.Len(t, j.Steps, 2)
	assert.Equal(t, map[string]float64{"p50": 12, "p90": 40, "p99": 80}, j.Steps[0].Percentiles)
	assert.Equal(t, map[string]int64{"200": 45, "500": 5}, j.Steps[0].StatusCodes)
	assert.Len(t, j.Windows, 2)
	assert.Equal(t, 1, j.BrokeAt)
	assert.Equal(t, "order.errors==0 (order: 5)", j.Broke)
}

func TestResultJSON(t *testing.T) {
	// Ensure a run's JSON carries ab's derived rates, the open loop's
	// figures and the timeline in milliseconds.
	res := seedStatic()
	res.OpenLoop = &OpenLoop{TargetRate: 100, Late: 3, Unsent: 2, MaxLateness: ms2(7), Uncorrected: []Percentile{{99, ms2(9)}}}
	res.Timeline = []Second{{At: time.Second, Requests: 64, P50: ms2(190), P99: ms2(240), Max: ms2(250), UncorrectedP99: ms2(200)}}
	var b strings.Builder
	require.NoError(t, res.writeResults(&b))
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.String()), &j))
	assert.InDelta(t, 64.61, j["requests_per_second"], 0.005)
	assert.InDelta(t, 185.7, j["time_per_request_ms"], 0.05)
	assert.InDelta(t, 15.477, j["time_per_request_across_ms"], 0.001)
	o := j["open_loop"].(map[string]any)
	assert.Equal(t, true, o["fell_short"])
	assert.EqualValues(t, 2, o["unsent_requests"])
	assert.Equal(t, map[string]any{"p99": 9.0}, o["uncorrected_percentiles_ms"])
	tl := j["timeline"].([]any)[0].(map[string]any)
	assert.Equal(t, 1.0, tl["at_s"])
	assert.Equal(t, 240.0, tl["p99_ms"])
	assert.Equal(t, 200.0, tl["uncorrected_p99_ms"])
	assert.Equal(t, map[string]any{}, j["status_codes"], "an empty object, never null")
}

func TestUsersHTMLWithoutWindows(t *testing.T) {
	// Ensure a run that ended before its first window has its steps'
	// table and no chart over time.
	r := usersOf()
	r.Windows, r.Broke, r.Loop = nil, "", nil
	page := string(HTML(t, r, PrintOptions{}))
	assert.Contains(t, page, "<caption>Steps over the whole run (latency from when a user began the step")
	assert.NotContains(t, page, "<svg")
}

func TestHistogramNames(t *testing.T) {
	// Ensure each kind names its series as the .hgrm files and the log's
	// tags use them (TestHGRMParsesBack and the log's tests check a real
	// run's contents).
	want := map[string][]string{
		"run": {""}, "gap": {"static", "dynamic"}, "hol": {"probe-alone", "probe-under-load", "load"},
		"sweep": {"1-c1", "1-c8", "1-c64", "2-c1", "2-c8", "2-c64"}, "users": {"events", "order", "page", "delivery"},
	}
	for _, kc := range everyKind(t) {
		var names []string
		for _, h := range kc.out.histograms() { // the fixtures, read from JSON, have no histograms: only names here
			names = append(names, h.name)
		}
		assert.Equal(t, want[kc.kind], names, kc.kind)
	}
}

func TestCauseReplaced(t *testing.T) {
	// Ensure a later Cause of the same key replaces the earlier: events
	// after it count from it.
	c := newCauseMap(time.Minute)
	at := time.Now()
	c.put("k", at)
	c.put("k", at.Add(time.Second))
	d, ok := c.delay([]byte("k"), at.Add(1500*time.Millisecond))
	require.True(t, ok)
	assert.Equal(t, 500*time.Millisecond, d)
	_, ok = c.delay([]byte("k"), at.Add(500*time.Millisecond))
	assert.False(t, ok, "before the write now known")
	assert.Nil(t, (&Response{Body: []byte(`<a href="/x">`)}).Links("/", 0), "none asked, none given")
}

func TestClientCPUSince(t *testing.T) {
	// Ensure the load generator's CPU over a span carries its share of
	// the cores (what the text's "25% of its 1 core" and make capacity's
	// verdict read), none where the span, the cores or a reading is
	// unknown, and never a negative CPU.
	then, now := ClientCPU{CPU: time.Second, Cores: 2, Known: true}, ClientCPU{CPU: 4 * time.Second, Cores: 2, Known: true}
	c := now.since(then, 3*time.Second)
	assert.Equal(t, ClientCPU{CPU: 3 * time.Second, Cores: 2, Known: true, Share: 0.5}, c)
	assert.Equal(t, "2 cores", c.CoresText())
	assert.Equal(t, "1 core", ClientCPU{Cores: 1}.CoresText())
	assert.Zero(t, now.since(then, 0).Share, "no span")
	unknown := now.since(ClientCPU{CPU: time.Second, Cores: 2}, 3*time.Second)
	assert.False(t, unknown.Known)
	assert.Zero(t, unknown.Share)
	assert.Zero(t, ClientCPU{CPU: time.Second, Known: true}.since(ClientCPU{Known: true}, time.Second).Share, "no cores")
	assert.Equal(t, time.Duration(0), then.since(now, time.Second).CPU)
}

func TestUsersHTMLCPU(t *testing.T) {
	// Ensure the page gives the load generator's CPU over the run, and
	// its CPU chart's table, per window, the server's cores busy and CPU
	// a request and the load generator's cores busy and CPU an event,
	// "-" where a side is unknown; a run with neither has no CPU chart.
	r := usersOf()
	r.Windows[0].ClientCPU = ClientCPU{CPU: 1500 * time.Millisecond, Cores: 2, Known: true, Share: 0.15} // 0.30 cores over 5 s
	r.Windows[0].Events = 300                                                                            // 5.00 ms an event
	r.Windows[1].Loop = &LoopFigures{CPU: 2 * time.Second, Requests: 400}                                // 0.40 cores, 5.00 ms a request
	p := parsePage(t, r, PrintOptions{})
	assert.Contains(t, p.text, "Load generator: CPU 2500.00 ms, 25% of its 1 core, 8.47 ms a user-second, 2.03 ms an event received.")
	assert.Contains(t, p.charts, "CPU, server and load generator: Virtual users")
	b := string(HTML(t, r, PrintOptions{}))
	assert.Contains(t, b, "<tr><td>5.0</td><td>30</td><td>-</td><td>-</td><td>0.30</td><td>5.00 ms</td></tr>")
	assert.Contains(t, b, "<tr><td>10.0</td><td>58</td><td>0.40</td><td>5.00 ms</td><td>-</td><td>-</td></tr>")

	r.Windows[0].ClientCPU, r.Windows[1].Loop, r.Client.Known = ClientCPU{}, nil, false
	p = parsePage(t, r, PrintOptions{})
	assert.NotContains(t, p.charts, "CPU, server and load generator: Virtual users")
	assert.NotContains(t, p.text, "Load generator:")
}
