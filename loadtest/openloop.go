package loadtest

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The open loop follows wrk2 (Gil Tene's fork of wrk): requests are sent on
// a schedule fixed before the run, not when the previous response is in, and
// each one's latency counts from when the schedule said to send it. A
// closed-loop client (ab, wrk) waits for the server, so while the server
// stalls it sends nothing and the requests it would have sent are never
// measured: coordinated omission. The parts are kept apart as in vegeta: the
// pacer says when each request is due, the worker (the attacker) sends it,
// phases and histograms (the metrics) record it, and the reporters (report.go,
// html.go) only read the Result.

// pacer is a worker's view of the run's open-loop schedule: request i of
// the run is due at start + i / Rate. Requests are claimed in order by
// whichever worker is free (as vegeta's workers take its pacer's ticks), so
// a request waits past its due time only while every connection is busy,
// and a stalled connection holds up only the request it is sending.
type pacer struct {
	start   time.Time
	rate    float64
	due     time.Time // when the current request was due
	claimed time.Time // when this worker, free again, claimed it
}

// pacerSleep bounds one sleep while waiting for a due time, so that a
// stopped run is noticed soon even at a low rate.
const pacerSleep = 100 * time.Millisecond

// claim notes that the worker, free, has just claimed request i.
func (w *worker) claim(i int64) {
	p := w.pace
	p.claimed = time.Now()
	p.due = p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
}

// waitDue sleeps until the claimed request is due; false when the run
// stops or its time limit passes first (the request is not sent).
func (w *worker) waitDue() bool {
	p := w.pace
	if w.run.expired(p.due) {
		return false
	}
	for {
		if w.run.stopping() {
			return false
		}
		d := time.Until(p.due)
		if d <= 0 {
			if late := w.run.t.cfg.lateWakeups; late > 0 {
				time.Sleep(late)
			}
			return true
		}
		time.Sleep(min(d, pacerSleep))
	}
}

// openFigures are what a worker records only in an open-loop run.
type openFigures struct {
	corrected   *phase
	clientLate  *phase // the client's own delay of each send (see lateness)
	late        int64
	maxLate     time.Duration
	lastCorrect int64 // the last request's corrected latency, for the timeline
}

// lateness splits how late a request was sent (sent - due) in two, as
// wrk2 counts it. queued is the part the server caused: the request was
// claimed after it was due because every connection was busy until then
// (each is claimed by the first worker to be free), and a user of the
// server would have waited it. client is the rest, the client's own
// delay: its timer waking late, its goroutine not scheduled at once on a
// busy machine; no user would have waited it, so it is measured and
// reported apart (OpenLoop.ClientLateness) and not counted in the
// corrected latency.
func (p *pacer) lateness(sent time.Time) (queued, client time.Duration) {
	queued = max(p.claimed.Sub(p.due), 0)
	client = max(sent.Sub(p.due)-queued, 0)
	return queued, client
}

// recordOpen records a finished request's corrected latency and lateness.
func (w *worker) recordOpen(s *stamps) {
	o := &w.open
	queued, client := w.pace.lateness(s.start)
	if queued > lateTolerance {
		o.late++
	}
	o.maxLate = max(o.maxLate, s.start.Sub(w.pace.due))
	o.clientLate.record(client.Microseconds())
	o.lastCorrect = (s.done.Sub(s.start) + queued).Microseconds()
	o.corrected.record(o.lastCorrect)
}

// Timeline histograms: two significant digits (1%), up to an hour, a few
// tens of kilobytes each, one per worker per second of the run.
const timelineDigits = 2

// timeline is a worker's per-second histograms, by the second in which a
// response ended: the reported latency (corrected under Rate, else Total)
// and, under Rate, the uncorrected one.
type timeline struct {
	start       time.Time
	latency     []*hdrhistogram.Histogram
	uncorrected []*hdrhistogram.Histogram
}

func newTimelineHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, timelineDigits)
}

// record adds one response that ended at done; uncorrected < 0 means none.
func (tl *timeline) record(done time.Time, latency, uncorrected int64) {
	sec := int(done.Sub(tl.start) / time.Second)
	if sec < 0 {
		return
	}
	for len(tl.latency) <= sec {
		tl.latency = append(tl.latency, newTimelineHist())
		if uncorrected >= 0 {
			tl.uncorrected = append(tl.uncorrected, newTimelineHist())
		}
	}
	_ = tl.latency[sec].RecordValue(min(max(latency, 0), histHighest))
	if uncorrected >= 0 {
		_ = tl.uncorrected[sec].RecordValue(min(max(uncorrected, 0), histHighest))
	}
}

// mergeTimelines adds up the workers' seconds into the Result's Timeline,
// and returns the seconds' histograms of the reported latency, stamped
// from start.
func mergeTimelines(workers []*worker, start time.Time) ([]Second, []*hdrhistogram.Histogram) {
	var lat, unc []*hdrhistogram.Histogram
	for _, w := range workers {
		if w.tl == nil {
			return nil, nil
		}
		for i, h := range w.tl.latency {
			if i == len(lat) {
				lat = append(lat, newTimelineHist())
			}
			lat[i].Merge(h)
		}
		for i, h := range w.tl.uncorrected {
			if i == len(unc) {
				unc = append(unc, newTimelineHist())
			}
			unc[i].Merge(h)
		}
	}
	out := make([]Second, len(lat))
	for i, h := range lat {
		s := Second{At: time.Duration(i) * time.Second, Requests: h.TotalCount()}
		if s.Requests > 0 {
			s.P50, s.P99, s.Max = usec(h.ValueAtPercentile(50)), usec(h.ValueAtPercentile(99)), usec(h.Max())
		}
		if i < len(unc) && unc[i].TotalCount() > 0 {
			u := unc[i]
			s.UncorrectedP50, s.UncorrectedP99, s.UncorrectedMax = usec(u.ValueAtPercentile(50)), usec(u.ValueAtPercentile(99)), usec(u.Max())
		}
		out[i] = s
		stamped(h, start.Add(s.At), start.Add(s.At+time.Second))
	}
	return out, lat
}

// distributionTicks is HdrHistogram's usual ticks per half distance for a
// percentile distribution (PercentilesPrint, wrk2's --latency output).
const distributionTicks = 5

// distribution is HdrHistogram's percentile distribution of p's values.
func distribution(p *phase) []Percentile {
	if p.count < 2 {
		return nil
	}
	brackets := p.hist.CumulativeDistributionWithTicks(distributionTicks)
	out := make([]Percentile, 0, len(brackets))
	for _, b := range brackets {
		v := min(max(b.ValueAt, p.min), p.max)
		out = append(out, Percentile{Percent: b.Quantile, Latency: usec(v)})
	}
	return out
}
