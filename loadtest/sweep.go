package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// sweepDefaultTime is each step's measured time when cfg.TimeLimit is 0.
const sweepDefaultTime = 2 * time.Second

// Sweep defaults and the knee rule.
const (
	// SweepDefaultWarmup is each step's warm-up when the command gives none.
	SweepDefaultWarmup = 500 * time.Millisecond
	// KneeRateGrowth and KneeP99Growth define the knee: the last step
	// before the first one that adds less than 10% throughput while its
	// p99 grows by more than 50%.
	KneeRateGrowth = 0.10
	KneeP99Growth  = 0.50
)

// littleTolerance is how far rate x mean latency may be from
// SweepStep.LittleExpected before a row's Little's law check is marked
// off.
const littleTolerance = 0.10

// Sweep is a concurrency sweep of one URL: a closed-loop run at each
// concurrency in turn.
type Sweep struct {
	URL   string
	Steps []SweepStep
	// Knee is the index in Steps of the knee (see KneeRateGrowth), -1 when
	// the sweep has none.
	Knee int
}

// SweepStep is one concurrency of a sweep.
type SweepStep struct {
	Concurrency int
	Result      *Result
}

// Little is Little's law's L, the requests in the system on average:
// throughput (requests per second) x mean latency (ab's Total mean, in
// seconds). In a closed loop L should equal the concurrency; when it is
// lower the workers spent time outside requests (the client was the
// bottleneck) or requests failed.
func (s SweepStep) Little() float64 {
	return s.Result.RequestsPerSecond() * s.Result.Total.Mean.Seconds()
}

// LittleExpected is the L that Little's law predicts for a closed loop of
// the step's concurrency c measured this way: c x (1 - mean / (2 x time
// taken)). Requests in flight when the time limit ends are not counted (as
// ab's), and each worker's is on average half a mean latency old, so the
// completed requests cover that much less of each worker's time.
func (s SweepStep) LittleExpected() float64 {
	r := s.Result
	if r.TimeTaken <= 0 {
		return float64(s.Concurrency)
	}
	return float64(s.Concurrency) * max(0, 1-r.Total.Mean.Seconds()/(2*r.TimeTaken.Seconds()))
}

// LittleHolds reports whether Little is within littleTolerance of
// LittleExpected.
func (s SweepStep) LittleHolds() bool {
	return math.Abs(s.Little()/s.LittleExpected()-1) <= littleTolerance
}

// findKnee returns the index of the knee of steps (in increasing
// concurrency): the last step before the first step whose requests per
// second grew by less than KneeRateGrowth while its p99 grew by more than
// KneeP99Growth; -1 when there is none.
func findKnee(steps []SweepStep) int {
	for i := 1; i < len(steps); i++ {
		prev, cur := steps[i-1].Result, steps[i].Result
		r0, r1 := prev.RequestsPerSecond(), cur.RequestsPerSecond()
		p0, p1 := percentileOf(prev, 99), percentileOf(cur, 99)
		if r0 > 0 && r1 < r0*(1+KneeRateGrowth) && float64(p1) > float64(p0)*(1+KneeP99Growth) {
			return i - 1
		}
	}
	return -1
}

// RunSweep runs url at each concurrency of levels in turn, each with cfg's
// warm-up and for cfg.TimeLimit (0 means 2 seconds); without
// cfg.Requests a step is not capped at 50000 requests. cfg's URL,
// Concurrency and Rate are ignored. It stops at the first error.
func RunSweep(ctx context.Context, cfg Config, url string, levels []int) (*Sweep, error) {
	if cfg.TimeLimit <= 0 && cfg.Requests <= 0 {
		cfg.TimeLimit = sweepDefaultTime
	}
	if cfg.Requests <= 0 {
		cfg.Requests = math.MaxInt
	}
	cfg.URL, cfg.Rate = url, 0
	s := &Sweep{URL: url}
	for _, c := range levels {
		step := cfg
		step.Concurrency, step.step = c, fmt.Sprintf("%s -c %d", requestURI(url), c)
		res, err := Run(ctx, step)
		if err != nil {
			return nil, fmt.Errorf("loadtest: sweep: %s at -c %d: %w", url, c, err)
		}
		s.Steps = append(s.Steps, SweepStep{Concurrency: c, Result: res})
	}
	s.Knee = findKnee(s.Steps)
	return s, nil
}

// writeText writes the sweep's table: per concurrency, requests per
// second, mean, p50 and p99 in ms, errors (failed plus non-2xx), Little's
// L with its check, and the knee marked; then a line naming the knee.
func (s *Sweep) writeText(out io.Writer) error {
	if len(s.Steps) == 0 {
		return nil
	}
	first := s.Steps[0].Result
	mode := "no keep-alive"
	if first.KeepAlive {
		mode = "keep-alive"
	}
	fmt.Fprintf(out, "\nSweep: %s, %s, closed loop, %.1f s a step\n", shorten(first.DocumentPath), mode, first.TimeTaken.Seconds())
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "c\treq/s\tmean ms\tp50 ms\tp99 ms\terrors\trate x mean\tLittle\t\t")
	for i, st := range s.Steps {
		r := st.Result
		check := "ok"
		if !st.LittleHolds() {
			check = "off"
		}
		knee := ""
		if i == s.Knee {
			knee = "<- knee"
		}
		fmt.Fprintf(w, "%d\t%.2f\t%s\t%s\t%s\t%d\t%.2f\t%s\t%s\t\n", st.Concurrency, r.RequestsPerSecond(),
			formatMSDecimals(r.Total.Mean), formatMSDecimals(percentileOf(r, 50)), formatMSDecimals(percentileOf(r, 99)),
			errorCount(r), st.Little(), check, knee)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if s.Knee >= 0 {
		next := s.Steps[s.Knee+1]
		fmt.Fprintf(out, "Knee at concurrency %d: going to %d adds %+.0f%% throughput while p99 grows %+.0f%%.\n",
			s.Steps[s.Knee].Concurrency, next.Concurrency,
			100*(next.Result.RequestsPerSecond()/s.Steps[s.Knee].Result.RequestsPerSecond()-1),
			100*(float64(percentileOf(next.Result, 99))/float64(percentileOf(s.Steps[s.Knee].Result, 99))-1))
	} else {
		fmt.Fprintf(out, "No knee in this sweep (no step adds less than %.0f%% throughput while p99 grows more than %.0f%%).\n",
			100*KneeRateGrowth, 100*KneeP99Growth)
	}
	var off []string
	var loops []namedResult
	for _, st := range s.Steps {
		if !st.LittleHolds() {
			off = append(off, fmt.Sprint(st.Concurrency))
		}
		if st.Result.Loop != nil {
			loops = append(loops, namedResult{Label: fmt.Sprintf("-c %d", st.Concurrency), Result: st.Result})
		}
	}
	if len(off) > 0 {
		fmt.Fprintf(out, "Little's law is off by more than %.0f%% at -c %s: the workers spent time outside requests "+
			"(the client was the bottleneck) or requests failed.\n", 100*littleTolerance, strings.Join(off, ", "))
	}
	if len(loops) > 0 {
		fmt.Fprintf(out, "Server loop (from its metrics)\n")
		return writeLoopTable(out, loops)
	}
	return nil
}

// Sweeps are the sweeps of one command, one a URL, as an Output: kind
// "sweep". Thresholds apply to every step.
type Sweeps []*Sweep

func (ss Sweeps) kind() string { return "sweep" }

func (ss Sweeps) writeText(w io.Writer, _ *PrintOptions) error {
	var err error
	for _, s := range ss {
		err = errors.Join(err, s.writeText(w))
	}
	return err
}

// writeResults writes the sweeps as a JSON array: each URL's steps with
// their results, Little's L and the knee's concurrency (0 for none).
func (ss Sweeps) writeResults(w io.Writer) error {
	type step struct {
		Concurrency int        `json:"concurrency"`
		Little      float64    `json:"little_l"`
		LittleHolds bool       `json:"little_holds"`
		Result      jsonResult `json:"result"`
	}
	type sweep struct {
		URL   string `json:"url"`
		Knee  int    `json:"knee_concurrency"`
		Steps []step `json:"steps"`
	}
	out := []sweep{}
	for _, s := range ss {
		j := sweep{URL: s.URL}
		if s.Knee >= 0 {
			j.Knee = s.Steps[s.Knee].Concurrency
		}
		for _, st := range s.Steps {
			j.Steps = append(j.Steps, step{st.Concurrency, st.Little(), st.LittleHolds(), toJSON(st.Result)})
		}
		out = append(out, j)
	}
	return writeJSON(w, out)
}

func (ss Sweeps) check(ts []Threshold) []ThresholdCheck {
	var runs []namedResult
	for _, s := range ss {
		for _, st := range s.Steps {
			runs = append(runs, namedResult{fmt.Sprintf("%s -c %d", st.Result.DocumentPath, st.Concurrency), st.Result})
		}
	}
	return checkRuns(ts, runs)
}

func (ss Sweeps) writeHTML(p *page) {
	for _, s := range ss {
		p.sweep(s)
	}
}

// histograms are each step's, named "c8" (with several URLs "2-c8", the
// URL's place first).
func (ss Sweeps) histograms() []histogram {
	var out []histogram
	for i, s := range ss {
		for _, st := range s.Steps {
			name := fmt.Sprintf("c%d", st.Concurrency)
			if len(ss) > 1 {
				name = fmt.Sprintf("%d-%s", i+1, name)
			}
			out = append(out, st.Result.histogram(name))
		}
	}
	return out
}

// requestURI is rawURL's path and query, as a run names itself.
func requestURI(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.RequestURI()
	}
	return rawURL
}
