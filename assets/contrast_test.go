package assets_test

import (
	"io/fs"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/assets"
)

// The focus ring's contrast, computed from the stylesheet's own values:
// WCAG 2.2 asks a focus indicator to contrast 3:1 with what is around it
// (SC 1.4.11 Non-text Contrast, 2.4.13 Focus Appearance). axe-core does
// not check it. The gold accent on the cream paper was 1.8:1.

// stylesheet is style.css's top-level rules (outside @media), by
// selector: each selector of a rule's list gets its declarations, later
// ones overriding earlier ones, as the cascade does for equal specificity.
type stylesheet map[string]map[string]string

var comment = regexp.MustCompile(`(?s)/\*.*?\*/`)

func parseCSS(t *testing.T, src string) stylesheet {
	t.Helper()
	src = comment.ReplaceAllString(src, "")
	css := stylesheet{}
	depth, start := 0, 0
	var selectors string
	for i, c := range src {
		switch c {
		case '{':
			if depth == 0 {
				selectors, start = strings.TrimSpace(src[start:i]), i+1
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				if !strings.HasPrefix(selectors, "@") {
					css.add(selectors, src[start:i])
				}
				start = i + 1
			}
		}
	}
	require.Zero(t, depth, "unbalanced braces in style.css")
	return css
}

func (css stylesheet) add(selectors, block string) {
	for _, sel := range strings.Split(selectors, ",") {
		sel = strings.Join(strings.Fields(sel), " ")
		if css[sel] == nil {
			css[sel] = map[string]string{}
		}
		for _, decl := range strings.Split(block, ";") {
			if prop, value, ok := strings.Cut(decl, ":"); ok {
				css[sel][strings.TrimSpace(prop)] = strings.TrimSpace(value)
			}
		}
	}
}

// get returns a declaration's value; the test fails without one.
func (css stylesheet) get(t *testing.T, selector, prop string) string {
	t.Helper()
	v, ok := css[selector][prop]
	require.True(t, ok, "style.css has no %s { %s }", selector, prop)
	return v
}

var varRef = regexp.MustCompile(`var\((--[\w-]+)\)`)

// color resolves value, which holds one colour (a #rrggbb or a var() of
// one, among other words: "3px solid var(--faction)"), with the custom
// properties of :root and then of the body class side ("" for none).
func (css stylesheet) color(t *testing.T, side, value string) string {
	t.Helper()
	vars := map[string]string{}
	for _, sel := range []string{":root", "body." + side} {
		for k, v := range css[sel] {
			if strings.HasPrefix(k, "--") {
				vars[k] = v
			}
		}
	}
	for range 10 {
		m := varRef.FindStringSubmatch(value)
		if m == nil {
			break
		}
		v, ok := vars[m[1]]
		require.True(t, ok, "no %s in :root or body.%s", m[1], side)
		value = strings.Replace(value, m[0], v, 1)
	}
	hex := regexp.MustCompile(`#[0-9a-fA-F]{6}\b`).FindString(value)
	require.NotEmpty(t, hex, "no #rrggbb colour in %q", value)
	return hex
}

// luminance is the relative luminance of #rrggbb (WCAG 2.2, "relative
// luminance": sRGB linearised, weighted 0.2126, 0.7152, 0.0722).
func luminance(hex string) float64 {
	var l float64
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(n) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += w * c
	}
	return l
}

// contrast is the WCAG contrast ratio of two colours, 1 to 21.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

func TestContrast(t *testing.T) {
	// Ensure the ratio is WCAG's, on figures it publishes: black on white
	// is 21:1, #767676 on white just passes 4.5:1.
	assert.InDelta(t, 21, contrast("#000000", "#ffffff"), 1e-9)
	assert.InDelta(t, 4.54, contrast("#767676", "#ffffff"), 0.01)
	assert.Equal(t, contrast("#d7ab2f", "#f3ead3"), contrast("#f3ead3", "#d7ab2f"))
}

func TestFocusRingContrast(t *testing.T) {
	// Ensure the focus ring contrasts at least 3:1 with the surfaces it is
	// drawn on, for every side's colours (and the logged-out pages'): on
	// the paper, the cards and the flash, and on the masthead, whose ring
	// has a colour of its own.
	src, err := fs.ReadFile(assets.Static, "style.css")
	require.NoError(t, err)
	css := parseCSS(t, string(src))
	ring := css.get(t, "a:focus-visible", "outline")
	for _, sel := range []string{"button:focus-visible", "input:focus-visible", "select:focus-visible", "textarea:focus-visible"} {
		assert.Equal(t, ring, css.get(t, sel, "outline"), "%s has the same ring", sel)
	}
	require.Regexp(t, `^(3|[4-9])px solid `, ring, "a solid ring at least 3 px wide (SC 2.4.13's minimum area)")
	mastRing := css.get(t, ".masthead :focus-visible", "outline-color")
	assert.Equal(t, mastRing, css.get(t, ".skip:focus-visible", "outline-color"), "the skip link shows over the masthead")

	for _, side := range []string{"", "fbi", "mib"} {
		onPaper := css.color(t, side, ring)
		for _, surface := range []struct{ selector, prop string }{
			{"main", "background"}, {".card", "background"}, {".flash", "background"}, {".stats div", "background"},
		} {
			bg := css.color(t, side, css.get(t, surface.selector, surface.prop))
			c := contrast(onPaper, bg)
			assert.GreaterOrEqual(t, c, 3.0, "body.%s: the ring %s on %s's %s: %.2f:1", side, onPaper, surface.selector, bg, c)
		}
		onMast := css.color(t, side, mastRing)
		bg := css.color(t, side, css.get(t, ".masthead", "background"))
		c := contrast(onMast, bg)
		assert.GreaterOrEqual(t, c, 3.0, "body.%s: the ring %s on the masthead's %s: %.2f:1", side, onMast, bg, c)
		t.Logf("body.%s: on the paper %.1f:1, on the masthead %.1f:1", side,
			contrast(onPaper, css.color(t, side, css.get(t, "main", "background"))), c)
	}
}
