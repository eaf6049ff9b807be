package loadtest

import (
	"time"
)

// merge sums the workers' counts and times into a Result.
func merge(t *target, start time.Time, workers []*worker) *Result {
	res := &Result{
		ServerHostname:   t.host,
		ServerPort:       t.port,
		DocumentPath:     t.path,
		VariableLength:   t.cfg.VariableLength,
		ConcurrencyLevel: t.cfg.Concurrency,
		KeepAlive:        t.cfg.KeepAlive,
	}
	var times [4]*phase
	for i := range times {
		times[i] = newPhase()
	}
	var last, serverAt time.Time
	for _, w := range workers {
		addCounts(res, &w.counts)
		for i, p := range w.times[:4] {
			times[i].merge(p)
		}
		// Requests on reused connections: Connect 0, Processing = Total.
		times[0].merge(zeros(w.reused))
		times[1].merge(w.times[4])
		times[3].merge(w.times[4])
		if w.last.After(last) {
			last = w.last
		}
		if !w.serverAt.IsZero() && (serverAt.IsZero() || w.serverAt.Before(serverAt)) {
			res.ServerSoftware, serverAt = w.server, w.serverAt
		}
		if res.TLSProtocol == "" {
			res.TLSProtocol = w.tlsInfo
		}
	}
	if len(workers) > 0 {
		res.DocumentLength = max(workers[0].run.docLen.Load(), 0)
	}
	if !last.IsZero() {
		res.TimeTaken = last.Sub(start)
	}
	res.Connect, res.Processing = times[0].figures(), times[1].figures()
	res.Waiting, res.Total = times[2].figures(), times[3].figures()
	reported := times[3]
	if t.cfg.Rate > 0 {
		reported = mergeOpen(res, t.cfg.Rate, times[3], workers)
	}
	res.Percentiles = percentileTable(reported)
	res.Distribution = distribution(reported)
	res.hist = reported.hist
	if t.cfg.Timeline {
		res.Timeline, res.intervals = mergeTimelines(workers, start)
	}
	return res
}

// mergeOpen sums the workers' open-loop figures into res.OpenLoop and
// returns the corrected latencies, which the percentile table then reads.
func mergeOpen(res *Result, rate float64, total *phase, workers []*worker) *phase {
	corrected, client := newPhase(), newPhase()
	o := &OpenLoop{TargetRate: rate}
	for _, w := range workers {
		corrected.merge(w.open.corrected)
		client.merge(w.open.clientLate)
		o.Late += w.open.late
		o.MaxLateness = max(o.MaxLateness, w.open.maxLate)
	}
	o.Corrected, o.ClientLateness = corrected.figures(), client.figures()
	if client.count > 0 {
		o.ClientLatenessP99 = usec(client.percentile(9900))
	}
	o.Uncorrected = percentileTable(total)
	o.UncorrectedDistribution = distribution(total)
	res.OpenLoop = o
	return corrected
}

// zeros is a phase of n values of 0.
func zeros(n int64) *phase {
	p := newPhase()
	if n > 0 {
		p.count, p.min = n, 0
		_ = p.hist.RecordValues(0, n)
	}
	return p
}

func addCounts(res *Result, c *counts) {
	c.flushStatus()
	res.CompleteRequests += c.complete
	res.KeepAliveRequests += c.keepAlive
	res.Non2xx += c.non2xx
	for code, n := range c.statuses {
		if res.StatusCodes == nil {
			res.StatusCodes = map[int]int64{}
		}
		res.StatusCodes[code] += n
	}
	res.Failures.Connect += c.failures.Connect
	res.Failures.Receive += c.failures.Receive
	res.Failures.Length += c.failures.Length
	res.Failures.Exceptions += c.failures.Exceptions
	res.FailedRequests = res.Failures.Connect + res.Failures.Receive + res.Failures.Length + res.Failures.Exceptions
	res.TotalTransferred += c.read
	res.HTMLTransferred += c.body
	res.TotalBodySent += c.sent
}

// percentileTable reads the percentile rows from the Total phase, as ab
// does from its array sorted by total time. ab prints none for fewer than
// two requests.
func percentileTable(total *phase) []Percentile {
	if total.count < 2 {
		return nil
	}
	out := make([]Percentile, len(percentiles))
	for i, pm := range percentiles {
		out[i] = Percentile{Percent: float64(pm) / 100, Latency: usec(total.percentile(pm))}
	}
	return out
}
