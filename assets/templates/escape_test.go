package templates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/assets/templates"
	"github.com/statesecrets/server/game"
)

// hostile is text a player controls (a post, an echoed name) trying to
// break out of every context it lands in.
const hostile = `"><script>alert(1)</script><a href='javascript:alert(2)'>&`

func render(t *testing.T, v *templates.View, p templates.Page) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, p.Render(v).Render(t.Context(), &b))
	return b.String()
}

func TestEscaping(t *testing.T) {
	player := &game.Player{ID: 1, Name: "mulder", Faction: game.FBI}
	v := &templates.View{Title: hostile, Function: "board", Player: player, CSRF: hostile, Flash: templates.Flash{Text: hostile}}
	t.Run("Text", func(t *testing.T) {
		// Ensure user text is escaped in text, in attribute values and in the title.
		page := render(t, v, templates.Board{Page: game.Page[game.Post]{Number: 1, Total: 1, Rows: []game.Post{{ID: 1, Author: "krycek", Faction: game.MIB, Body: hostile, At: time.Unix(0, 0)}}}})
		assert.NotContains(t, page, "<script>alert")
		assert.Contains(t, page, `<p class="body">&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=&#39;javascript:alert(2)&#39;&gt;&amp;</p>`)
		assert.Contains(t, page, `name="csrf" value="&#34;&gt;&lt;script&gt;`)
		assert.Contains(t, page, `<p class="flash" role="status">&#34;&gt;&lt;script&gt;`)
		assert.Contains(t, page, `href="/game?function=profile&amp;name=krycek"`)
	})
	t.Run("KeptPost", func(t *testing.T) {
		// Ensure a refused post's text, offered again in the form, cannot
		// end the textarea, and the refusal is escaped too.
		refused := *v
		refused.Flash = templates.Flash{Text: hostile, Error: true, Body: "</textarea>" + hostile}
		page := render(t, &refused, templates.Board{Page: game.Page[game.Post]{Number: 1}})
		assert.NotContains(t, page, "<script>alert")
		assert.Contains(t, page, `aria-describedby="body-hint">&lt;/textarea&gt;&#34;&gt;&lt;script&gt;`)
		assert.Contains(t, page, `<p class="flash error" role="alert">&#34;&gt;&lt;script&gt;`)
	})
	t.Run("Attribute", func(t *testing.T) {
		// Ensure a typed-back name cannot end the value attribute it is echoed in.
		page := render(t, &templates.View{Function: "login"}, templates.Login{Name: hostile, Error: hostile})
		assert.Contains(t, page, `name="name" value="&#34;&gt;&lt;script&gt;`)
		assert.Contains(t, page, `role="alert">&#34;&gt;&lt;script&gt;`)
		assert.NotContains(t, page, "<script>alert")
	})
	t.Run("URL", func(t *testing.T) {
		// Ensure a javascript: URL in a link is replaced, as html/template does.
		page := render(t, v, templates.Error{Status: 400, Title: "Request denied", Message: hostile, Back: "javascript:alert(3)", BackLabel: "Back"})
		assert.NotContains(t, page, "javascript:alert(3)")
		assert.Contains(t, page, `href="about:invalid#TemplFailedSanitizationURL"`)
	})
}
