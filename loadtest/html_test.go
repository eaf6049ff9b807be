package loadtest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/statesecrets/server/internal/browsertest"
	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// mustReport measures a small open-loop run, a head-of-line scenario and a
// sweep against a server that runs one handler at a time, and renders
// them as one HTML report.
func mustReport(t *testing.T) []byte {
	t.Helper()
	url := MustServeSerial(t, 2*time.Millisecond)
	ctx := context.Background()
	open, err := loadtest.Run(ctx, loadtest.Config{URL: url + "/slow", Rate: 200, Concurrency: 4, KeepAlive: true,
		TimeLimit: 1200 * time.Millisecond, Timeline: true})
	require.NoError(t, err)
	h, err := loadtest.RunHOL(ctx, loadtest.Config{Concurrency: 2, KeepAlive: true, TimeLimit: 300 * time.Millisecond, Timeline: true},
		100, url+"/", url+"/slow")
	require.NoError(t, err)
	s, err := loadtest.RunSweep(ctx, loadtest.Config{KeepAlive: true, TimeLimit: 200 * time.Millisecond}, url+"/slow", []int{1, 2, 4})
	require.NoError(t, err)
	s.Knee = 1 // the report marks the sweep's knee, found or not on a noisy machine (TestSweepKnee finds them)
	threshold, err := loadtest.ParseThreshold("p99<1us")
	require.NoError(t, err)
	return loadtest.HTML(t, loadtest.Several{open, h, loadtest.Sweeps{s}}, loadtest.PrintOptions{Title: "loadtest <report> & test",
		Command: "loadtest -rate 200 " + url, Thresholds: []loadtest.Threshold{threshold}})
}

// walk calls f on every element node under n.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

func TestHTMLReport(t *testing.T) {
	page := mustReport(t)
	// Ensure the report is HTML that parses, self-contained (no script,
	// link, image or URL to fetch), with its charts as inline SVG, each
	// titled, described, with labelled axes and a data table.
	assert.True(t, bytes.HasPrefix(page, []byte("<!DOCTYPE html>")))
	doc, err := html.Parse(bytes.NewReader(page))
	require.NoError(t, err)
	var svgs, tables, details []*html.Node
	var title string
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "svg":
			svgs = append(svgs, n)
		case "table":
			tables = append(tables, n)
		case "details":
			details = append(details, n)
		case "script", "link", "img", "iframe", "object", "embed":
			t.Errorf("the report has a <%s>", n.Data)
		case "title":
			if n.Parent.Data == "head" {
				title = textOf(n)
			}
		}
		for _, a := range n.Attr {
			if a.Key == "src" || (a.Key == "href" && !strings.HasPrefix(a.Val, "#")) {
				t.Errorf("the report refers to %s=%q", a.Key, a.Val)
			}
		}
	})
	assert.Equal(t, "loadtest <report> & test", title, "the title is escaped and read back")
	// Run: timeline + percentiles; HOL: percentiles + two timelines; sweep: one.
	assert.Len(t, svgs, 6)
	assert.Len(t, details, len(svgs), "one data table per chart")
	assert.GreaterOrEqual(t, len(tables), len(svgs)+3, "the charts' tables, the figures, the thresholds")
	for _, svg := range svgs {
		assertChartAccessible(t, svg)
	}
	s := string(page)
	assert.Contains(t, s, "percentile (log scale)")
	assert.Contains(t, s, "99.9%")
	assert.Contains(t, s, "throughput (requests per second)")
	assert.Contains(t, s, "knee (c=")
	assert.Contains(t, s, "time since the start of the run (s)")
	assert.Contains(t, s, "uncorrected")
	assert.Contains(t, s, `<td class="failed">FAILED</td>`, "the failed threshold is marked")
}

// assertChartAccessible checks that an SVG chart is an image with its
// title and description, its y axis labelled.
func assertChartAccessible(t *testing.T, svg *html.Node) {
	t.Helper()
	var titled, described bool
	var texts []string
	walk(svg, func(n *html.Node) {
		switch n.Data {
		case "title":
			titled = titled || n.Parent == svg
		case "desc":
			described = true
		case "text":
			texts = append(texts, textOf(n))
		}
	})
	assert.Equal(t, "img", attr(svg, "role"))
	assert.NotEmpty(t, attr(svg, "aria-labelledby"))
	assert.True(t, titled && described, "an SVG has its title and desc")
	assert.Contains(t, texts, "latency (ms)", "the y axis is labelled")
}

// newBrowser starts headless Chromium for the report.
func newBrowser(t *testing.T) context.Context { return browsertest.New(t, 1000, 900, time.Minute) }

func TestHTMLReportInBrowser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	require.NoError(t, os.WriteFile(path, mustReport(t), 0o644))
	ctx := newBrowser(t)
	// Ensure a browser renders the report's charts (each SVG has a size on
	// the page) and save a screenshot of it.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.CSS("svg"))))
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`[...document.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 300 && s.getBoundingClientRect().height > 200).length`))
	require.NoError(t, err)
	assert.Equal(t, 6, drawn, "every chart is drawn")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	require.NoError(t, err)
	out := filepath.Join(t.ArtifactDir(), "report.png")
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
}
