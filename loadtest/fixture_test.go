package loadtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Fixtures: real results, as make loadtest and make capacity wrote them
// (schema version 2, testdata/results/), read back into the package's
// types so that the golden tests render figures a real run produced. The
// reader is the test's own, on the documented JSON form, not the
// package's writer run backwards.

// fixtureEnvelope reads testdata/results/name's envelope.
func fixtureEnvelope(tb testing.TB, name string) (kind string, results json.RawMessage) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "results", name))
	require.NoError(tb, err)
	var env struct {
		Kind    string          `json:"kind"`
		Results json.RawMessage `json:"results"`
	}
	require.NoError(tb, json.Unmarshal(b, &env))
	return env.Kind, env.Results
}

// fixtureInto reads testdata/results/name's results into v, checking the kind.
func fixtureInto(tb testing.TB, name, kind string, v any) {
	tb.Helper()
	k, raw := fixtureEnvelope(tb, name)
	require.Equal(tb, kind, k, name)
	require.NoError(tb, json.Unmarshal(raw, v), name)
}

// msD is a JSON time in milliseconds as a Duration, to the microsecond
// the histograms keep.
func msD(v float64) time.Duration { return time.Duration(v*1000+0.5) * time.Microsecond }

func sD(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

type fxPhase struct{ Min, Mean, SD, Median, Max float64 }

func (p fxPhase) phase() Phase {
	return Phase{Min: msD(p.Min), Mean: time.Duration(p.Mean * float64(time.Millisecond)), SD: time.Duration(p.SD * float64(time.Millisecond)),
		Median: msD(p.Median), Max: msD(p.Max)}
}

type fxPercentile struct {
	Percent float64 `json:"percent"`
	MS      float64 `json:"ms"`
}

func fxPercentiles(ps []fxPercentile) []Percentile {
	var out []Percentile
	for _, p := range ps {
		out = append(out, Percentile{Percent: p.Percent, Latency: msD(p.MS)})
	}
	return out
}

type fxLoop struct {
	Utilization      float64 `json:"utilization"`
	LagP99           float64 `json:"lag_p99_ms"`
	LagMax           float64 `json:"lag_max_ms"`
	LagMaxBound      bool    `json:"lag_max_bound"`
	LongestTurn      float64 `json:"longest_turn_ms"`
	LongestTurnBound bool    `json:"longest_turn_bound"`
	SlowRequests     int64   `json:"slow_requests"`
	WorkTime         float64 `json:"work_ms"`
	CPU              float64 `json:"cpu_ms"`
	Error            string  `json:"error"`
}

func (l *fxLoop) figures() *LoopFigures {
	if l == nil {
		return nil
	}
	return &LoopFigures{Utilization: l.Utilization, LagP99: msD(l.LagP99), LagMax: msD(l.LagMax), LagMaxBound: l.LagMaxBound,
		LongestTurn: msD(l.LongestTurn), LongestTurnBound: l.LongestTurnBound, SlowRequests: l.SlowRequests,
		WorkTime: msD(l.WorkTime), CPU: msD(l.CPU), Error: l.Error}
}

// fxResult is schema version 2's result object.
type fxResult struct {
	ServerSoftware    string             `json:"server_software"`
	ServerHostname    string             `json:"server_hostname"`
	ServerPort        int                `json:"server_port"`
	TLSProtocol       string             `json:"tls_protocol"`
	DocumentPath      string             `json:"document_path"`
	DocumentLength    int64              `json:"document_length"`
	VariableLength    bool               `json:"variable_length"`
	ConcurrencyLevel  int                `json:"concurrency_level"`
	KeepAlive         bool               `json:"keep_alive"`
	TimeTaken         float64            `json:"time_taken_s"`
	CompleteRequests  int64              `json:"complete_requests"`
	FailedRequests    int64              `json:"failed_requests"`
	Failures          Failures           `json:"failures"`
	Non2xx            int64              `json:"non_2xx_responses"`
	Non2xxByStatus    map[int]int64      `json:"non_2xx_by_status"`
	KeepAliveRequests int64              `json:"keep_alive_requests"`
	TotalTransferred  int64              `json:"total_transferred_bytes"`
	TotalBodySent     int64              `json:"total_body_sent_bytes"`
	HTMLTransferred   int64              `json:"html_transferred_bytes"`
	ConnectionTimes   map[string]fxPhase `json:"connection_times_ms"`
	Percentiles       []fxPercentile     `json:"percentiles_ms"`
	Distribution      []fxPercentile     `json:"distribution_ms"`
	OpenLoop          *struct {
		TargetRate              float64        `json:"target_rate"`
		Corrected               fxPhase        `json:"corrected_ms"`
		Uncorrected             []fxPercentile `json:"uncorrected_percentiles_ms"`
		UncorrectedDistribution []fxPercentile `json:"uncorrected_distribution_ms"`
		Late                    int64          `json:"late_requests"`
		MaxLateness             float64        `json:"max_lateness_ms"`
		Unsent                  int64          `json:"unsent_requests"`
		ClientLateness          fxPhase        `json:"client_lateness_ms"`
		ClientLatenessP99       float64        `json:"client_lateness_p99_ms"`
	} `json:"open_loop"`
	Timeline []fxSecond `json:"timeline"`
	Loop     *fxLoop    `json:"loop"`
}

func (f *fxResult) result() *Result {
	ct := f.ConnectionTimes
	r := &Result{ServerSoftware: f.ServerSoftware, ServerHostname: f.ServerHostname, ServerPort: f.ServerPort,
		TLSProtocol: f.TLSProtocol, DocumentPath: f.DocumentPath, DocumentLength: f.DocumentLength,
		VariableLength: f.VariableLength, ConcurrencyLevel: f.ConcurrencyLevel, KeepAlive: f.KeepAlive,
		TimeTaken: sD(f.TimeTaken), CompleteRequests: f.CompleteRequests, FailedRequests: f.FailedRequests,
		Failures: f.Failures, Non2xx: f.Non2xx, KeepAliveRequests: f.KeepAliveRequests,
		TotalTransferred: f.TotalTransferred, TotalBodySent: f.TotalBodySent, HTMLTransferred: f.HTMLTransferred,
		Connect: ct["connect"].phase(), Processing: ct["processing"].phase(), Waiting: ct["waiting"].phase(),
		Total: ct["total"].phase(), Percentiles: fxPercentiles(f.Percentiles), Distribution: fxPercentiles(f.Distribution),
		Loop: f.Loop.figures()}
	fxStatuses(r, f.Non2xxByStatus)
	if o := f.OpenLoop; o != nil {
		r.OpenLoop = &OpenLoop{TargetRate: o.TargetRate, Corrected: o.Corrected.phase(), Uncorrected: fxPercentiles(o.Uncorrected),
			UncorrectedDistribution: fxPercentiles(o.UncorrectedDistribution), Late: o.Late, MaxLateness: msD(o.MaxLateness),
			Unsent: o.Unsent, ClientLateness: o.ClientLateness.phase(), ClientLatenessP99: msD(o.ClientLatenessP99)}
	}
	for _, s := range f.Timeline {
		r.Timeline = append(r.Timeline, Second{At: sD(s.At), Requests: s.Requests, P50: msD(s.P50), P99: msD(s.P99), Max: msD(s.Max),
			UncorrectedP50: msD(s.UP50), UncorrectedP99: msD(s.UP99), UncorrectedMax: msD(s.UMax)})
	}
	return r
}

type fxSecond struct {
	At       float64 `json:"at_s"`
	Requests int64   `json:"requests"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	UP50     float64 `json:"uncorrected_p50_ms"`
	UP99     float64 `json:"uncorrected_p99_ms"`
	UMax     float64 `json:"uncorrected_max_ms"`
}

// fxStatuses sets the responses by status: version 2 counted the non-2xx
// ones, the rest of the complete responses without a failure being 200s
// here.
func fxStatuses(r *Result, by map[int]int64) {
	r.StatusCodes = map[int]int64{}
	ok := r.CompleteRequests - r.FailedRequests
	for code, n := range by {
		r.StatusCodes[code] = n
		ok -= n
	}
	if ok > 0 {
		r.StatusCodes[200] += ok
	}
}

// fixtureGap reads a gap run's fixture.
func fixtureGap(tb testing.TB, name string) *Gap {
	var g struct{ Static, Dynamic fxResult }
	fixtureInto(tb, name, "gap", &g)
	return &Gap{Static: g.Static.result(), Dynamic: g.Dynamic.result()}
}

// fixtureHOL reads a head-of-line run's fixture.
func fixtureHOL(tb testing.TB, name string) *HOL {
	var h struct {
		ProbeRate float64  `json:"probe_rate"`
		Alone     fxResult `json:"probe_alone"`
		UnderLoad fxResult `json:"probe_under_load"`
		Load      fxResult `json:"load"`
	}
	fixtureInto(tb, name, "hol", &h)
	return &HOL{ProbeRate: h.ProbeRate, Alone: h.Alone.result(), UnderLoad: h.UnderLoad.result(), Load: h.Load.result()}
}

// fixtureSweeps reads a sweep run's fixture, its knees found anew.
func fixtureSweeps(tb testing.TB, name string) Sweeps {
	var sweeps []struct {
		URL   string `json:"url"`
		Steps []struct {
			Concurrency int      `json:"concurrency"`
			Result      fxResult `json:"result"`
		} `json:"steps"`
	}
	fixtureInto(tb, name, "sweep", &sweeps)
	var out Sweeps
	for _, s := range sweeps {
		sw := &Sweep{URL: s.URL}
		for _, st := range s.Steps {
			sw.Steps = append(sw.Steps, SweepStep{Concurrency: st.Concurrency, Result: st.Result.result()})
		}
		sw.Knee = findKnee(sw.Steps)
		out = append(out, sw)
	}
	return out
}

type fxStep struct {
	Name         string         `json:"name"`
	Count        int64          `json:"count"`
	Errors       int64          `json:"errors"`
	Rate         float64        `json:"rate"`
	Latency      fxPhase        `json:"latency_ms"`
	Percentiles  []fxPercentile `json:"percentiles_ms"`
	Uncorrected  []fxPercentile `json:"uncorrected_percentiles_ms"`
	LatenessP99  float64        `json:"lateness_p99_ms"`
	LatenessMax  float64        `json:"lateness_max_ms"`
	Distribution []fxPercentile `json:"distribution_ms"`
}

func (s fxStep) result() StepResult {
	return StepResult{Name: s.Name, Count: s.Count, Errors: s.Errors, Rate: s.Rate, Latency: s.Latency.phase(),
		Percentiles: fxPercentiles(s.Percentiles), Distribution: fxPercentiles(s.Distribution),
		Uncorrected: fxPercentiles(s.Uncorrected), LatenessP99: msD(s.LatenessP99), LatenessMax: msD(s.LatenessMax)}
}

type fxWindowStep struct {
	Step   string  `json:"step"`
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p99_9_ms"`
	Max    float64 `json:"max_ms"`
}

func (s fxWindowStep) step() WindowStep {
	return WindowStep{Step: s.Step, Count: s.Count, Errors: s.Errors, P50: msD(s.P50), P90: msD(s.P90), P99: msD(s.P99),
		P999: msD(s.P999), Max: msD(s.Max)}
}

type fxWindow struct {
	At                float64        `json:"at_s"`
	Length            float64        `json:"length_s"`
	Users             int            `json:"users"`
	Active            int            `json:"active"`
	Streams           int            `json:"streams"`
	Events            int64          `json:"events"`
	Steps             []fxWindowStep `json:"steps"`
	Delivery          fxWindowStep   `json:"delivery"`
	ServerRequests    float64        `json:"server_requests_per_second"`
	LongestTurnRecent float64        `json:"longest_turn_recent_ms"`
	Loop              *fxLoop        `json:"loop"`
}

// fixtureUsers reads a virtual-user run's fixture.
func fixtureUsers(tb testing.TB, name string) *UsersResult {
	var u struct {
		Arrival struct {
			Rate     float64 `json:"rate"`
			From, To int
			Over     float64 `json:"over_s"`
		} `json:"arrival"`
		Hold      float64           `json:"hold_s"`
		Window    float64           `json:"window_s"`
		TimeTaken float64           `json:"time_taken_s"`
		Users     int               `json:"users"`
		Failed    int64             `json:"failed_users"`
		Events    int64             `json:"events"`
		Steps     []fxStep          `json:"steps"`
		Delivery  fxStep            `json:"delivery"`
		Errors    map[string]string `json:"first_errors"`
		Windows   []fxWindow        `json:"windows"`
		Broke     string            `json:"broke"`
		BrokeAt   int               `json:"broke_at_window"`
		Loop      *fxLoop           `json:"loop"`
	}
	fixtureInto(tb, name, "users", &u)
	r := &UsersResult{Arrival: Arrival{Rate: u.Arrival.Rate, From: u.Arrival.From, To: u.Arrival.To, Over: sD(u.Arrival.Over)},
		Hold: sD(u.Hold), Window: sD(u.Window), TimeTaken: sD(u.TimeTaken), Users: u.Users, Failed: u.Failed, Events: u.Events,
		Delivery: u.Delivery.result(), Errors: u.Errors, Broke: u.Broke, BrokeAt: u.BrokeAt, Loop: u.Loop.figures()}
	for _, s := range u.Steps {
		r.Steps = append(r.Steps, s.result())
	}
	for _, w := range u.Windows {
		win := Window{At: sD(w.At), Length: sD(w.Length), Users: w.Users, Active: w.Active, Streams: w.Streams, Events: w.Events,
			Delivery: w.Delivery.step(), Loop: w.Loop.figures(), ServerRequests: w.ServerRequests, LongestTurnRecent: msD(w.LongestTurnRecent)}
		for _, s := range w.Steps {
			win.Steps = append(win.Steps, s.step())
		}
		r.Windows = append(r.Windows, win)
	}
	return r
}
