package loadtest

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// A virtual-user run as an Output: kind "users". Thresholds name steps.

func (r *UsersResult) kind() string { return "users" }

// writeText writes a virtual-user run as text: the schedule, a table of
// the steps (count, errors, rate, corrected p50 p90 p99 max, uncorrected
// p99, the load generator's own lateness p99), event delivery, each step's
// first error, why the run stopped early, and the loop's figures.
func (r *UsersResult) writeText(out io.Writer, _ *PrintOptions) error {
	fmt.Fprintf(out, "Virtual users:          %d arrived (%s), %d failed\n", r.Users, arrivalText(r.Arrival, r.Hold), r.Failed)
	fmt.Fprintf(out, "Time taken:             %.3f seconds\n", r.TimeTaken.Seconds())
	fmt.Fprintf(out, "Events received:        %d (%.1f/s)\n\n", r.Events, float64(r.Events)/max(r.TimeTaken.Seconds(), 1e-9))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(out, "Over the whole run (every window, any after a -stop-when threshold broke included):")
	fmt.Fprintln(w, "step\tcount\terrors\trate/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tuncorrected p99\tlate p99\t")
	row := func(s StepResult) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Count, s.Errors, s.Rate,
			formatMSDecimals(percentileIn(s.Percentiles, 50, s.Latency.Max)), formatMSDecimals(percentileIn(s.Percentiles, 90, s.Latency.Max)),
			formatMSDecimals(percentileIn(s.Percentiles, 99, s.Latency.Max)), formatMSDecimals(s.Latency.Max),
			formatMSDecimals(percentileIn(s.Uncorrected, 99, s.Latency.Max)), formatMSDecimals(s.LatenessP99))
	}
	for _, s := range r.Steps {
		row(s)
	}
	if r.Delivery.Count > 0 {
		row(r.Delivery)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nLatencies count from when a user began the step (waiting for a connection included);\n"+
		"uncorrected from when the request had its connection; late is the load generator's own delay.\n"+
		"%s: from the write that caused an event to its arrival at each stream.\n", DeliveryStep)
	for _, s := range append(append([]StepResult{}, r.Steps...), StepResult{Name: "scenario"}) {
		if e, ok := r.Errors[s.Name]; ok {
			fmt.Fprintf(out, "First error of %s: %s\n", s.Name, e)
		}
	}
	if r.Broke != "" {
		fmt.Fprintf(out, "%s\n", r.stopText())
	}
	writeServerText(out, r.Loop)
	if r.Client.Known {
		fmt.Fprintf(out, "Load generator: %s\n", r.clientText())
	}
	return nil
}

// stopText says where a StopWhen threshold broke and where the run
// stopped: the users that had arrived and were running at each.
func (r *UsersResult) stopText() string {
	b, e := r.Windows[r.BrokeAt], r.Windows[len(r.Windows)-1]
	return fmt.Sprintf("Broke at %.0f s (%d users running, %d arrived): %s; stopped at %.0f s with %d running, %d arrived",
		b.At.Seconds(), b.Active, b.Users, r.Broke, e.At.Seconds(), e.Active, e.Users)
}

// writeServerText writes the server's figures over the run: its loop's,
// or without a loop (net/http) its CPU alone.
func writeServerText(out io.Writer, l *LoopFigures) {
	switch {
	case l == nil:
	case l.Error != "":
		fmt.Fprintf(out, "Server loop: metrics unreadable: %s\n", l.Error)
	case l.HasLoop():
		fmt.Fprintf(out, "Server loop: utilization %.1f%%, lag p99 %s ms, longest turn %s ms, %d slow requests, CPU %s ms (%s a request)\n",
			100*l.Utilization, formatMSDecimals(l.LagP99), boundMS(l.LongestTurn, l.LongestTurnBound), l.SlowRequests,
			formatMSDecimals(l.CPU), formatCPU(l.CPUPerRequest(), l.CPU))
	default:
		fmt.Fprintf(out, "Server: no event loop figures (a server without one), CPU %s ms (%s a request)\n",
			formatMSDecimals(l.CPU), formatCPU(l.CPUPerRequest(), l.CPU))
	}
}

// clientText is the load generator's own CPU over the run in words: its
// share of its cores, per user-second (users running times seconds, from
// the windows) and per event received. Only for a known r.Client: the
// reports leave the line out otherwise.
func (r *UsersResult) clientText() string {
	c := r.Client
	s := fmt.Sprintf("CPU %s ms, %.0f%% of its %s", formatMSDecimals(c.CPU), 100*c.Share, c.CoresText())
	if us := r.UserSeconds; us > 0 {
		s += fmt.Sprintf(", %s a user-second", formatCPU(time.Duration(float64(c.CPU)/us), c.CPU))
	}
	if r.Events > 0 {
		s += fmt.Sprintf(", %s an event received", formatCPU(c.CPU/time.Duration(r.Events), c.CPU))
	}
	return s
}

func arrivalText(a Arrival, hold time.Duration) string {
	s := fmt.Sprintf("ramp %d to %d over %v", a.From, a.To, a.Over)
	if a.Rate > 0 {
		s = fmt.Sprintf("%g/s over %v", a.Rate, a.Over)
	}
	if hold > 0 {
		s += fmt.Sprintf(", held %v", hold)
	}
	return s
}

// JSON form of a virtual-user run.
type jsonUsers struct {
	Arrival   jsonArrival       `json:"arrival"`
	Hold      float64           `json:"hold_s"`
	Window    float64           `json:"window_s"`
	TimeTaken float64           `json:"time_taken_s"`
	Users     int               `json:"users"`
	Failed    int64             `json:"failed_users"`
	Events    int64             `json:"events"`
	Steps     []jsonStep        `json:"steps"`
	Delivery  jsonStep          `json:"delivery"`
	Errors    map[string]string `json:"first_errors,omitempty"`
	Windows   []jsonWindow      `json:"windows"`
	Broke     string            `json:"broke,omitempty"`
	BrokeAt   int               `json:"broke_at_window"`
	Loop      *jsonLoop         `json:"loop,omitempty"`
	Client    *jsonClientCPU    `json:"client,omitempty"`
}

// jsonClientCPU is ClientCPU, absent when unknown.
type jsonClientCPU struct {
	CPU   float64 `json:"cpu_ms"`
	Cores int     `json:"cores"`
}

func toJSONClientCPU(c ClientCPU) *jsonClientCPU {
	if !c.Known {
		return nil
	}
	return &jsonClientCPU{CPU: ms(c.CPU), Cores: c.Cores}
}

type jsonArrival struct {
	Rate float64 `json:"rate,omitempty"`
	From int     `json:"from"`
	To   int     `json:"to"`
	Over float64 `json:"over_s"`
}

type jsonStep struct {
	Name         string           `json:"name"`
	Count        int64            `json:"count"`
	Errors       int64            `json:"errors"`
	Rate         float64          `json:"rate"`
	Latency      jsonPhase        `json:"latency_ms"`
	Percentiles  jsonKeyed        `json:"percentiles_ms"`
	Uncorrected  jsonKeyed        `json:"uncorrected_percentiles_ms"`
	LatenessP99  float64          `json:"lateness_p99_ms"`
	LatenessMax  float64          `json:"lateness_max_ms"`
	Distribution []jsonPercentile `json:"distribution_ms"`
	StatusCodes  map[int]int64    `json:"status_codes"`
}

type jsonWindowStep struct {
	Step   string  `json:"step"`
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p99_9_ms"`
	Max    float64 `json:"max_ms"`
}

type jsonWindow struct {
	At                float64          `json:"at_s"`
	Length            float64          `json:"length_s"`
	Users             int              `json:"users"`
	Active            int              `json:"active"`
	Streams           int              `json:"streams"`
	Events            int64            `json:"events"`
	Steps             []jsonWindowStep `json:"steps"`
	Delivery          jsonWindowStep   `json:"delivery"`
	ServerRequests    float64          `json:"server_requests_per_second"`
	LongestTurnRecent float64          `json:"longest_turn_recent_ms"`
	Loop              *jsonLoop        `json:"loop,omitempty"`
	Client            *jsonClientCPU   `json:"client,omitempty"`
}

func toJSONStep(s StepResult) jsonStep {
	return jsonStep{Name: s.Name, Count: s.Count, Errors: s.Errors, Rate: s.Rate, Latency: toJSONPhase(s.Latency),
		Percentiles: jsonKeyed(s.Percentiles), Uncorrected: jsonKeyed(s.Uncorrected),
		LatenessP99: ms(s.LatenessP99), LatenessMax: ms(s.LatenessMax), Distribution: toJSONPercentiles(s.Distribution),
		StatusCodes: statusCodes(s.StatusCodes)}
}

func toJSONWindowStep(s WindowStep) jsonWindowStep {
	return jsonWindowStep{Step: s.Step, Count: s.Count, Errors: s.Errors, P50: ms(s.P50), P90: ms(s.P90), P99: ms(s.P99),
		P999: ms(s.P999), Max: ms(s.Max)}
}

func toJSONLoop(l *LoopFigures) *jsonLoop {
	if l == nil {
		return nil
	}
	return &jsonLoop{Utilization: l.Utilization, LagP99: ms(l.LagP99), LagMax: ms(l.LagMax), LagMaxBound: l.LagMaxBound,
		LongestTurn: ms(l.LongestTurn), LongestTurnBound: l.LongestTurnBound, SlowRequests: l.SlowRequests,
		WorkTime: ms(l.WorkTime), CPU: ms(l.CPU), Requests: l.Requests, Wait: toJSONLoopWait(l.Wait), Error: l.Error}
}

// writeResults writes a virtual-user run as one JSON object (times in
// milliseconds, durations in seconds where named _s); schema.json's
// "users".
func (r *UsersResult) writeResults(w io.Writer) error {
	j := jsonUsers{Arrival: jsonArrival{Rate: r.Arrival.Rate, From: r.Arrival.From, To: r.Arrival.To, Over: r.Arrival.Over.Seconds()},
		Hold: r.Hold.Seconds(), Window: r.Window.Seconds(), TimeTaken: r.TimeTaken.Seconds(), Users: r.Users, Failed: r.Failed,
		Events: r.Events, Steps: []jsonStep{}, Delivery: toJSONStep(r.Delivery), Errors: r.Errors, Windows: []jsonWindow{},
		Broke: r.Broke, BrokeAt: r.BrokeAt, Loop: toJSONLoop(r.Loop), Client: toJSONClientCPU(r.Client)}
	if r.Arrival.Rate > 0 {
		j.Arrival.From, j.Arrival.To = 0, r.Arrival.Users()
	}
	for _, s := range r.Steps {
		j.Steps = append(j.Steps, toJSONStep(s))
	}
	for _, win := range r.Windows {
		jw := jsonWindow{At: win.At.Seconds(), Length: win.Length.Seconds(), Users: win.Users, Active: win.Active, Streams: win.Streams,
			Events: win.Events, Steps: []jsonWindowStep{}, Delivery: toJSONWindowStep(win.Delivery), ServerRequests: win.ServerRequests,
			LongestTurnRecent: ms(win.LongestTurnRecent), Loop: toJSONLoop(win.Loop), Client: toJSONClientCPU(win.ClientCPU)}
		for _, s := range win.Steps {
			jw.Steps = append(jw.Steps, toJSONWindowStep(s))
		}
		j.Windows = append(j.Windows, jw)
	}
	return writeJSON(w, j)
}

// Settings records the run's settings for its Envelope
// (PrintOptions.Settings).
func (cfg UsersConfig) Settings() Settings {
	return Settings{URLs: []string{cfg.URL}, Concurrency: max(cfg.Arrival.Users(), 1), Timeout: cmp.Or(cfg.Timeout, 30*time.Second).Seconds(),
		KeepAlive: true, TimeLimit: (cfg.Arrival.Over + cfg.Hold).Seconds(), Rate: cfg.Arrival.Rate, MetricsURL: cfg.MetricsURL}
}

func (r *UsersResult) writeHTML(p *page) { p.users("Virtual users", r) }

// histograms are each step's and, when events were timed, delivery's.
func (r *UsersResult) histograms() []histogram {
	var out []histogram
	for _, s := range append(append([]StepResult{}, r.Steps...), r.Delivery) {
		if s.Count == 0 && s.Name == DeliveryStep {
			continue
		}
		out = append(out, histogram{name: s.Name, total: s.hist, intervals: r.intervals[s.Name]})
	}
	return out
}
