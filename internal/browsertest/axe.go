package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Violation is one axe-core rule a page breaks, as axe.run reports it
// (https://github.com/dequelabs/axe-core/blob/develop/doc/API.md, "Results
// Object"): the rule's id ("heading-order", "color-contrast"...), its
// impact, what it asks for, and the elements that break it.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []string `json:"target"` // CSS selectors of the element
		Summary string   `json:"failureSummary"`
	} `json:"nodes"`
}

// String lists the rule and each element that breaks it, for a test's
// failure message.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    %s: %s", strings.Join(n.Target, " "), strings.ReplaceAll(n.Summary, "\n", " "))
	}
	return b.String()
}

// axeScript is where npm puts axe-core: `npm ci --prefix
// internal/browsertest` (package.json and package-lock.json beside this
// file pin the version; .ci/run and make test run it).
func axeScript(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "where is browsertest?")
	path := filepath.Join(filepath.Dir(file), "node_modules", "axe-core", "axe.min.js")
	src, err := os.ReadFile(path)
	require.NoError(t, err, "axe-core is needed: npm ci --prefix internal/browsertest (.ci/run and make test do)")
	return string(src)
}

// Axe runs axe-core's rules on the page open in the tab ctx and returns
// the rules it breaks: every rule axe runs by default (WCAG 2.0 to 2.2 A
// and AA, and its best practices, such as heading-order), none of the
// experimental ones. The script is injected through the DevTools
// protocol, which the page's Content-Security-Policy does not govern.
func Axe(t *testing.T, ctx context.Context) []Violation {
	t.Helper()
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe === "object"`))
	require.NoError(t, err)
	if !loaded {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](axeScript(t)))
		require.NoError(t, err, "inject axe-core")
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]Violation](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "axe.run")
	return found
}
