package loadtest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// MustServeRaw listens on 127.0.0.1:0 and runs handle on each connection,
// for servers net/http will not imitate (resets, wrong lengths, canned
// bytes). It returns the URL; the server stops with the test.
func MustServeRaw(tb testing.TB, handle func(c net.Conn, r *bufio.Reader)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	var wg sync.WaitGroup
	tb.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				handle(c, bufio.NewReader(c))
			})
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// WithoutRawIO makes a run use net.Conn's Write and Read instead of the
// raw-socket path, so tests can check both.
func WithoutRawIO(c Config) Config {
	c.noRawIO = true
	return c
}

// WithLateWakeups makes an open-loop run send each request d after it is
// due, as a client whose timer wakes late would.
func WithLateWakeups(c Config, d time.Duration) Config {
	c.lateWakeups = d
	return c
}

// FindKnee is findKnee, for the sweep's tests.
var FindKnee = findKnee

// Check checks ts on out, as Print does.
func Check(out Output, ts []Threshold) []ThresholdCheck { return out.check(ts) }

// Text is out's text report, as Print prints it without options.
func Text(tb testing.TB, out Output) string {
	tb.Helper()
	var b strings.Builder
	require.NoError(tb, out.writeText(&b, &PrintOptions{}))
	return b.String()
}

// HTML is the HTML report Print writes for out, checks included.
func HTML(tb testing.TB, out Output, o PrintOptions) []byte {
	tb.Helper()
	o.defaults()
	var b bytes.Buffer
	require.NoError(tb, writeHTML(&b, out, &o, out.check(o.Thresholds)))
	return b.Bytes()
}

// Several is several outputs as one, for one HTML page of them all.
type Several []Output

func (s Several) kind() string { return "several" }

func (s Several) writeText(w io.Writer, o *PrintOptions) error {
	var err error
	for _, out := range s {
		err = errors.Join(err, out.writeText(w, o))
	}
	return err
}

func (s Several) writeResults(w io.Writer) error { return errors.New("several: no JSON") }

func (s Several) check(ts []Threshold) []ThresholdCheck {
	var out []ThresholdCheck
	for _, o := range s {
		out = append(out, o.check(ts)...)
	}
	return out
}

func (s Several) writeHTML(p *page) {
	for _, o := range s {
		o.writeHTML(p)
	}
}

func (s Several) histograms() []histogram { return nil }

// PercentileOf is percentileOf, for the scenarios' tests.
var PercentileOf = percentileOf

// MustServeHTTP serves h on 127.0.0.1:0 until the test ends and returns
// its URL.
func MustServeHTTP(tb testing.TB, h http.HandlerFunc) string {
	tb.Helper()
	s := httptest.NewServer(h)
	tb.Cleanup(s.Close)
	return s.URL
}

// CPUWaitShareForTest is LoopWait.cpuWaitShare, for the external tests.
func (w *LoopWait) CPUWaitShareForTest() (float64, bool) { return w.cpuWaitShare() }
