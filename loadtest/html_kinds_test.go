package loadtest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// page is out's HTML report parsed: its sections' headings, its tables'
// captions, its charts' titles, and the whole text.
type parsedPage struct {
	headings, captions, charts []string
	text                       string
}

func parsePage(t *testing.T, out Output, o PrintOptions) parsedPage {
	t.Helper()
	b := HTML(t, out, o)
	doc, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)
	var p parsedPage
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.Data == "h2" || n.Data == "h3":
				p.headings = append(p.headings, nodeText(n))
			case n.Data == "caption":
				p.captions = append(p.captions, nodeText(n))
			case n.Data == "title" && n.Parent.Data == "svg":
				p.charts = append(p.charts, nodeText(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	p.text = nodeText(doc)
	return p
}

func nodeText(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(nodeText(c))
	}
	return b.String()
}

func TestHTMLOfEachKind(t *testing.T) {
	// Ensure each kind's HTML section has its parts, from the fixtures'
	// real figures.
	gap := fixtureGap(t, "gap-keep-alive.json")
	for _, tc := range []struct {
		name                       string
		out                        Output
		headings, captions, charts []string
		text                       []string
	}{
		{"run", gap.Static, []string{"/"}, []string{"Figures of /", "The server's event loop during the run (from its metrics)"},
			[]string{"Percentile distribution: /"}, []string{"Requests per second16144.40", "Server CPU per request22.0 us", "<= 25.00 (a histogram bucket's upper bound"}},
		{"open", fixtureHOL(t, "hol.json").UnderLoad, []string{"/"}, []string{"Figures of /"},
			[]string{"Percentile distribution: /"}, []string{"open loop at 200.00 req/s (wrk2's model)", "(uncorrected ", "Sent late15 waited"}},
		{"gap", gap, []string{"static /", "dynamic /game?function=hq&tid=a1384c5..."}, nil,
			[]string{"Percentile distribution: static /", "Percentile distribution: dynamic /game?function=hq&tid=a1384c5..."}, nil},
		{"hol", fixtureHOL(t, "storm.json"), []string{"Head-of-line blocking: / behind /login"},
			[]string{"The probe alone and under load, with the load's own figures"},
			[]string{"Percentile distribution: the probe, alone and under load"}, []string{"load (8 clients)"}},
		{"sweep", fixtureSweeps(t, "sweep.json"), []string{"Concurrency sweep: /", "Server loop at concurrency 1"}, nil,
			[]string{"Throughput and latency: /"}, []string{"Little's law"}},
		{"users", fixtureUsers(t, "users.json"), []string{"Virtual users"}, []string{"Steps over the whole run (latency from when a user began the step; uncorrected from when its request had a connection)"},
			[]string{"Users over time: Virtual users", "p99 per window: Virtual users", "Rates: Virtual users",
				"Server loop utilization: Virtual users", "Server loop's longest turn: Virtual users"},
			[]string{"Broke at ", "page.p99<=50ms (page: 217.09 ms)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parsePage(t, tc.out, PrintOptions{Title: "t"})
			for _, h := range tc.headings {
				assert.Contains(t, p.headings, h)
			}
			for _, c := range tc.captions {
				assert.Contains(t, p.captions, c)
			}
			for _, c := range tc.charts {
				assert.Contains(t, p.charts, c)
			}
			for _, s := range tc.text {
				assert.Contains(t, p.text, s)
			}
		})
	}
}

func TestHTMLThresholdsEscaped(t *testing.T) {
	// Ensure the thresholds' table heads the page, a failed check marked,
	// what it quotes escaped.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	b := string(HTML(t, res, PrintOptions{Title: "a <b> & c", Command: "loadtest -threshold 'p99<1ms' <url>",
		Thresholds: mustThresholds(t, "p99<1ms", "errors==0")}))
	assert.Contains(t, b, "<title>a &lt;b&gt; &amp; c</title>")
	assert.Contains(t, b, "<code>loadtest -threshold &#39;p99&lt;1ms&#39; &lt;url&gt;</code>")
	assert.Contains(t, b, `<td><code>p99&lt;1ms</code></td><td>4.82 ms</td><td class="failed">FAILED</td>`)
	assert.Contains(t, b, `<td><code>errors==0</code></td><td>0</td><td class="ok">ok</td>`)
	assert.Less(t, strings.Index(b, "<caption>Thresholds</caption>"), strings.Index(b, "<h2>"), "the checks come first")
}

func TestHTMLWithoutLoop(t *testing.T) {
	// Ensure a run without the server's figures has no loop table, and
	// one whose metrics could not be read says so.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	res.Loop = nil
	assert.NotContains(t, string(HTML(t, res, PrintOptions{})), "event loop during the run")
	res.Loop = &LoopFigures{Error: "connection refused"}
	assert.Contains(t, string(HTML(t, res, PrintOptions{})), "The server's metrics could not be read: connection refused")
}

func TestNiceTicks(t *testing.T) {
	// Ensure an axis's ticks are round numbers covering the range.
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 9.3, []string{"0", "2", "4", "6", "8", "10"}},
		{0, 95, []string{"0", "20", "40", "60", "80", "100"}},
		{0, 0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
	} {
		var got []string
		for _, tk := range niceTicks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		assert.Equal(t, tc.want, got, "%v to %v", tc.lo, tc.hi)
	}
}

func TestCurvePoints(t *testing.T) {
	// Ensure a percentile curve's x is log10(1/(1-q)): 90% at 1, 99% at
	// 2, and 100% at the resolution of the requests.
	pts := curvePoints([]Percentile{{50, ms2(1)}, {90, ms2(2)}, {99, ms2(3)}, {100, ms2(4)}}, 1000)
	require.Len(t, pts, 4)
	assert.InDelta(t, 0.301, pts[0].X, 0.001)
	assert.InDelta(t, 1, pts[1].X, 1e-9)
	assert.InDelta(t, 2, pts[2].X, 1e-9)
	assert.InDelta(t, 3, pts[3].X, 1e-9)
	assert.Equal(t, 4.0, pts[3].Y)
}

func TestHTMLSweepKnee(t *testing.T) {
	// Ensure a sweep's chart marks its knee and names it, and says "none"
	// for a sweep without one.
	s := fixtureSweeps(t, "sweep.json")[0]
	s.Knee = 1
	page := string(HTML(t, Sweeps{s}, PrintOptions{}))
	assert.Contains(t, page, "Knee: at concurrency 8 (the last concurrency before a step that adds less than 10% throughput")
	assert.Contains(t, page, "knee (c=8)")
	s.Knee = -1
	page = string(HTML(t, Sweeps{s}, PrintOptions{}))
	assert.Contains(t, page, "Knee: none (the last concurrency")
	assert.NotContains(t, page, "knee (c=")
}

func TestHTMLLoopWait(t *testing.T) {
	// Ensure the loop's account of why requests waited is a table a
	// route (escaped), its p99s "n/a" under 100 requests (too few to
	// estimate), captioned with the share of the time the loop's thread
	// waited for a CPU, "unknown" without its thread's figures; and no
	// table when the server gave no account.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	loop := *res.Loop
	loop.Wait = &LoopWait{LoopCPU: 900 * time.Millisecond, LoopCPUWait: 100 * time.Millisecond, Routes: []RouteWait{
		{Route: "GET /<few>", Requests: 40, HeadOfLine: WaitSummary{P50: 300 * time.Microsecond, P99: 2 * time.Millisecond, Max: 25 * time.Millisecond}},
		{Route: "GET /game", Requests: 200, HeadOfLine: WaitSummary{P50: 400 * time.Microsecond, P99: 3 * time.Millisecond, Max: 5 * time.Millisecond},
			CPUWait: WaitSummary{P99: 100 * time.Microsecond}, Handler: WaitSummary{P99: 250 * time.Microsecond}},
	}}
	res.Loop = &loop
	b := string(HTML(t, res, PrintOptions{}))
	assert.Contains(t, b, "the loop waited for a CPU 10.0% of the time it wanted to run</caption>")
	assert.Contains(t, b, "<tr><td>GET /&lt;few&gt;</td><td>40</td><td>0.30</td><td>n/a (40 requests)</td><td>25.00</td>"+
		"<td>n/a (40 requests)</td><td>n/a (40 requests)</td></tr>")
	assert.Contains(t, b, "<tr><td>GET /game</td><td>200</td><td>0.40</td><td>3.00</td><td>5.00</td><td>0.10</td><td>0.25</td></tr>")
	assert.Less(t, strings.Index(b, "GET /&lt;few&gt;"), strings.Index(b, "GET /game"), "the routes in their order")

	loop.Wait.LoopCPU, loop.Wait.LoopCPUWait = 0, 0
	assert.Contains(t, string(HTML(t, res, PrintOptions{})), "the loop waited for a CPU unknown of the time it wanted to run")
	loop.Wait = nil
	b = string(HTML(t, res, PrintOptions{}))
	assert.Contains(t, b, "The server's event loop during the run")
	assert.NotContains(t, b, "Why requests waited")
}
