// Package browsertest starts headless Chromium for the project's browser
// tests (chromedp), with the flags it needs as root on an offline machine.
package browsertest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// New starts Debian's Chromium, headless, in a fresh profile under
// t.TempDir(), with a window of width x height pixels, and returns a
// context for its first tab; everything stops when the test ends, or
// after timeout. It fails the test if Chromium is not installed
// (apt-get install -y chromium; .ci/run does).
func New(t *testing.T, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	require.NoError(t, err, "Chromium is needed: apt-get install -y chromium (.ci/run does)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// The machine is offline: without these Chromium keeps trying to reach Google.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return ctx
}
