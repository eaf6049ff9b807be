package loadtest

import (
	"fmt"
	"slices"
	"time"
)

// users renders a virtual-user run: its steps' table, and over its
// windows the users and streams, each step's p99, the rates, and the
// server loop's utilization and longest turn.
func (p *page) users(label string, r *UsersResult) {
	p.printf("<section>\n<h2>%s</h2>\n", esc(label))
	p.printf("<p>%d virtual users (%s), %d failed, in %.1f s; %d events received.", r.Users, esc(arrivalText(r.Arrival, r.Hold)),
		r.Failed, r.TimeTaken.Seconds(), r.Events)
	if r.Broke != "" {
		p.printf(" <strong class=\"failed\">%s.</strong>", esc(r.stopText()))
	}
	if r.Client.Known {
		p.printf(" Load generator: %s.", esc(r.clientText()))
	}
	p.printf("</p>\n")
	steps := append(append([]StepResult{}, r.Steps...), r.Delivery)
	p.usersSteps(steps)
	if r.Loop != nil {
		p.loop(r.Loop, r.Loop.CPUPerRequest())
	}
	if len(r.Windows) > 0 {
		p.usersActive(label, r.Windows)
		p.usersP99(label, r.Windows, steps)
		p.usersRates(label, r.Windows)
		p.usersCPU(label, r.Windows)
	}
	if slices.ContainsFunc(r.Windows, func(w Window) bool { return w.Loop.HasLoop() }) {
		p.usersLoop(label, r.Windows)
	}
	p.printf("</section>\n")
}

// usersSteps is the steps' table.
func (p *page) usersSteps(steps []StepResult) {
	p.printf("<table>\n<caption>Steps over the whole run (latency from when a user began the step; uncorrected from when its request had a connection)</caption>\n<thead><tr>")
	for _, c := range []string{"step", "count", "errors", "rate/s", "p50 ms", "p99 ms", "max ms", "uncorrected p99 ms", "late p99 ms"} {
		p.printf("<th scope=\"col\">%s</th>", c)
	}
	p.printf("</tr></thead>\n<tbody>\n")
	for _, s := range steps {
		p.printf("<tr><td>%s</td><td>%d</td><td>%d</td><td>%.2f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			esc(s.Name), s.Count, s.Errors, s.Rate, formatMSDecimals(percentileIn(s.Percentiles, 50, s.Latency.Max)),
			formatMSDecimals(percentileIn(s.Percentiles, 99, s.Latency.Max)), formatMSDecimals(s.Latency.Max),
			formatMSDecimals(percentileIn(s.Uncorrected, 99, s.Latency.Max)), formatMSDecimals(s.LatenessP99))
	}
	p.printf("</tbody>\n</table>\n")
}

// windowX is a window's place on a chart's time axis.
func windowX(w Window) float64 { return w.At.Seconds() }

// usersActive charts the users running and the streams open.
func (p *page) usersActive(label string, windows []Window) {
	x := windowX
	var active, streams []point
	for _, w := range windows {
		active = append(active, point{X: x(w), Y: float64(w.Active)})
		streams = append(streams, point{X: x(w), Y: float64(w.Streams)})
	}
	p.figure(&chart{Title: "Users over time: " + label, Unit: "users",
		Desc:   "Virtual users running and event streams open at the end of each window.",
		XLabel: "time since the start of the run (s)", YLabel: "users, streams",
		Series: []series{{Name: "users", Points: active}, {Name: "streams open", Points: streams}}},
		[]string{"at s", "users arrived", "users running", "streams open", "events"}, func(row func(...string)) {
			for _, w := range windows {
				row(fmt.Sprintf("%.1f", w.At.Seconds()), fmt.Sprint(w.Users), fmt.Sprint(w.Active), fmt.Sprint(w.Streams), fmt.Sprint(w.Events))
			}
		})
}

// usersP99 charts each step's p99 per window.
func (p *page) usersP99(label string, windows []Window, steps []StepResult) {
	var p99s []series
	names := make([]string, 0, len(steps))
	for _, s := range steps {
		names = append(names, s.Name)
		var pts []point
		for _, w := range windows {
			if ws := w.Step(s.Name); ws.Count > 0 {
				pts = append(pts, point{X: windowX(w), Y: ms(ws.P99)})
			}
		}
		p99s = append(p99s, series{Name: s.Name + " p99", Points: pts})
	}
	p.figure(&chart{Title: "p99 per window: " + label,
		Desc:   "Each step's 99th percentile latency in each window, and event delivery's, in milliseconds.",
		XLabel: "time since the start of the run (s)", YLabel: "p99 (ms)", Series: p99s},
		append([]string{"at s", "users"}, names...), func(row func(...string)) {
			for _, w := range windows {
				cells := []string{fmt.Sprintf("%.1f", w.At.Seconds()), fmt.Sprint(w.Active)}
				for _, n := range names {
					cells = append(cells, formatMSDecimals(w.Step(n).P99))
				}
				row(cells...)
			}
		})
}

// usersRates charts the steps and events per second.
func (p *page) usersRates(label string, windows []Window) {
	x := windowX
	var reqs, events []point
	for _, w := range windows {
		sec := max(w.Length.Seconds(), 1e-9)
		var n int64
		for _, s := range w.Steps {
			n += s.Count
		}
		reqs = append(reqs, point{X: x(w), Y: float64(n) / sec})
		events = append(events, point{X: x(w), Y: float64(w.Events) / sec})
	}
	p.figure(&chart{Title: "Rates: " + label, Unit: "/s",
		Desc:   "Steps ended per second and events received per second (every stream's), in each window.",
		XLabel: "time since the start of the run (s)", YLabel: "per second",
		Series: []series{{Name: "steps/s", Points: reqs}, {Name: "events/s", Points: events}}},
		[]string{"at s", "steps/s", "events/s", "server requests/s"}, func(row func(...string)) {
			for i, w := range windows {
				row(fmt.Sprintf("%.1f", w.At.Seconds()), fmt.Sprintf("%.1f", reqs[i].Y), fmt.Sprintf("%.1f", events[i].Y), fmt.Sprintf("%.1f", w.ServerRequests))
			}
		})
}

// usersLoop charts the server loop's utilization and longest turn per
// window.
func (p *page) usersLoop(label string, windows []Window) {
	x := windowX
	var util, turn []point
	for _, w := range windows {
		if w.Loop != nil && w.Loop.Error == "" {
			util = append(util, point{X: x(w), Y: 100 * w.Loop.Utilization})
			turn = append(turn, point{X: x(w), Y: ms(w.LongestTurnRecent)})
		}
	}
	p.figure(&chart{Title: "Server loop utilization: " + label, Unit: "%",
		Desc:   "The server loop's busy share of each window (from its metrics), in percent.",
		XLabel: "time since the start of the run (s)", YLabel: "utilization (%)",
		Series: []series{{Name: "loop utilization", Points: util}}},
		[]string{"at s", "utilization %", "longest turn (last 10-20 s) ms"}, func(row func(...string)) {
			for i := range util {
				row(fmt.Sprintf("%.1f", util[i].X), fmt.Sprintf("%.1f", util[i].Y), fmt.Sprintf("%.2f", turn[i].Y))
			}
		})
	p.figure(&chart{Title: "Server loop's longest turn: " + label,
		Desc:   "The loop's longest turn in the last 10 to 20 seconds, at the end of each window, in milliseconds: every client waited that long.",
		XLabel: "time since the start of the run (s)", YLabel: "longest turn (ms)",
		Series: []series{{Name: "longest turn", Points: turn}}},
		[]string{"at s", "longest turn ms"}, func(row func(...string)) {
			for _, pt := range turn {
				row(fmt.Sprintf("%.1f", pt.X), fmt.Sprintf("%.2f", pt.Y))
			}
		})
}

// usersCPU charts the server's CPU and the load generator's per window,
// each as cores busy (1: one core the whole window), when either is known.
func (p *page) usersCPU(label string, windows []Window) {
	var server, client []point
	for _, w := range windows {
		sec := max(w.Length.Seconds(), 1e-9)
		if w.Loop != nil && w.Loop.Error == "" && w.Loop.CPU > 0 {
			server = append(server, point{X: windowX(w), Y: w.Loop.CPU.Seconds() / sec})
		}
		if w.ClientCPU.Known {
			client = append(client, point{X: windowX(w), Y: w.ClientCPU.CPU.Seconds() / sec})
		}
	}
	if len(server) == 0 && len(client) == 0 {
		return
	}
	p.figure(&chart{Title: "CPU, server and load generator: " + label, Unit: "cores",
		Desc:   "The server process's CPU (process_cpu_seconds_total) and the load generator's own (getrusage), in cores busy over each window: near the cores one may use, that side was the limit.",
		XLabel: "time since the start of the run (s)", YLabel: "cores busy",
		Series: []series{{Name: "server", Points: server}, {Name: "load generator", Points: client}}},
		[]string{"at s", "users", "server cores", "server CPU/request", "load generator cores", "load generator CPU/event"}, func(row func(...string)) {
			for _, w := range windows {
				sec := max(w.Length.Seconds(), 1e-9)
				sc, sr, cc, ce := "-", "-", "-", "-"
				if w.Loop != nil && w.Loop.Error == "" && w.Loop.CPU > 0 {
					sc, sr = fmt.Sprintf("%.2f", w.Loop.CPU.Seconds()/sec), formatCPU(w.Loop.CPUPerRequest(), w.Loop.CPU)
				}
				if w.ClientCPU.Known {
					cc = fmt.Sprintf("%.2f", w.ClientCPU.CPU.Seconds()/sec)
					if w.Events > 0 {
						ce = formatCPU(w.ClientCPU.CPU/time.Duration(w.Events), w.ClientCPU.CPU)
					}
				}
				row(fmt.Sprintf("%.1f", w.At.Seconds()), fmt.Sprint(w.Active), sc, sr, cc, ce)
			}
		})
}
