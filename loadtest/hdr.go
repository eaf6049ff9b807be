package loadtest

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HdrHistogram's own formats, which its tools (HistogramLogProcessor,
// the plotters), wrk2's readers and vegeta's hdrplot read: the percentile
// distribution (.hgrm, PercentilesPrint's text) and the interval log.

// histogram is one latency series of an Output, in microseconds: the
// whole run's histogram, and the run's intervals in time order (each
// stamped with its start and end, milliseconds since the epoch) when it
// kept them.
type histogram struct {
	name      string
	total     *hdrhistogram.Histogram
	intervals []*hdrhistogram.Histogram
}

// histogram is r's reported latency (corrected under Config.Rate) as a
// series named name.
func (r *Result) histogram(name string) histogram {
	return histogram{name: name, total: r.hist, intervals: r.intervals}
}

// hgrmScale turns the histograms' microseconds into the milliseconds a
// .hgrm holds, as wrk2's.
const hgrmScale = 1000

// writeHGRMFiles writes each series' percentile distribution (five ticks
// per half distance, values in ms) to path; with several series, each to
// path with "-NAME" before its extension (f.hgrm: f-static.hgrm,
// f-dynamic.hgrm).
func writeHGRMFiles(path string, hs []histogram) error {
	for _, h := range hs {
		p := path
		if len(hs) > 1 {
			ext := filepath.Ext(path)
			p = strings.TrimSuffix(path, ext) + "-" + tagOf(h.name) + ext
		}
		err := writeFile(p, func(w io.Writer) error {
			total := h.total
			if total == nil {
				total = newHist()
			}
			_, err := total.PercentilesPrint(w, distributionTicks, hgrmScale)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// writeHLog writes every series' intervals as an HdrHistogram interval log
// (format 1.3), in time order, each tagged with its series' name when
// there are several, times from start (or the first interval's, when
// earlier or start is zero; now without either); values are microseconds, so the log's
// Interval_Max column, which assumes nanoseconds, reads in seconds.
func writeHLog(w io.Writer, hs []histogram, start time.Time) error {
	all := intervalsOf(hs)
	base := start.UnixMilli()
	switch {
	case len(all) > 0 && (start.IsZero() || all[0].StartTimeMs() < base):
		base = all[0].StartTimeMs()
	case start.IsZero():
		base = time.Now().UnixMilli() // no time known: the log's, rather than year 1's
	}
	lw := hdrhistogram.NewHistogramLogWriter(w)
	for _, err := range []error{lw.OutputLogFormatVersion(),
		lw.OutputComment("[loadtest: latencies in microseconds, one interval a second or a window]"),
		lw.OutputStartTime(base), lw.OutputBaseTime(base), lw.OutputLegend()} {
		if err != nil {
			return err
		}
	}
	lw.SetBaseTime(base)
	for _, iv := range all {
		if err := lw.OutputIntervalHistogram(iv); err != nil {
			return err
		}
	}
	return nil
}

// intervalsOf is every series' intervals in time order, tagged with
// their series' names when there are several.
func intervalsOf(hs []histogram) []*hdrhistogram.Histogram {
	var all []*hdrhistogram.Histogram
	for _, h := range hs {
		for _, iv := range h.intervals {
			if len(hs) > 1 {
				iv.SetTag(tagOf(h.name))
			}
			all = append(all, iv)
		}
	}
	slices.SortStableFunc(all, func(a, b *hdrhistogram.Histogram) int { return cmp.Compare(a.StartTimeMs(), b.StartTimeMs()) })
	return all
}

// tagOf is name as a log tag or file name part: no comma, space or
// slash; "all" for none.
func tagOf(name string) string {
	if name == "" {
		return "all"
	}
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(", \t\r\n/", r) {
			return '-'
		}
		return r
	}, name)
}

// newHist is an empty histogram of the package's geometry.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowest, histHighest, histDigits) }

// stamped is h with its interval's start and end.
func stamped(h *hdrhistogram.Histogram, from, to time.Time) *hdrhistogram.Histogram {
	h.SetStartTimeMs(from.UnixMilli())
	h.SetEndTimeMs(to.UnixMilli())
	return h
}
