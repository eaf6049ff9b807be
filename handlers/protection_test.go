package handlers_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestPagesShowProtection(t *testing.T) {
	// Ensure the pages say who is protected from theft until when: the
	// ranking beside every protected name, the dossiers beside the Steal
	// button of a protected target of the other side, and HQ for the
	// viewer; and once the protection is over, nothing (HQ keeps the line
	// hidden, for live.js to show again should they be robbed).
	e, tid, _, _ := twoPlayers(t)
	scully, _ := e.player("scully", game.FBI) // mulder's teammate: not his to rob, no marker
	marker := `<span class="protected" data-protected-until="36">protected until tick <span data-part="tick">36</span>`
	page := func(fn string) string {
		t.Helper()
		_, p := e.client().get("/game?function=" + fn + "&tid=" + tid)
		return p
	}

	assert.Equal(t, 3, strings.Count(page("ranking"), marker), "every new player is protected")
	dossiers := page("dossiers")
	assert.Equal(t, 1, strings.Count(dossiers, marker), "krycek's, not scully's")
	assert.Contains(t, dossiers, `<td class="ops" data-protection-slot="start"> `+marker)
	assert.Contains(t, page("hq"), `<span data-protected-until="36" data-protection="me"><br>You are protected from theft until tick <span data-part="tick">36</span>, `+
		`<time data-part="at" datetime="2026-11-30T16:30:00Z">2026-11-30 16:30 UTC</time> (<span data-part="in">in 6 h</span>).</span>`)

	e.clock.Add(game.NewPlayerProtection * game.DefaultTickInterval)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	require.False(t, e.stats(scully.ID).Protected(game.NewPlayerProtection))
	assert.NotContains(t, page("ranking"), `class="protected"`)
	assert.NotContains(t, page("dossiers"), `class="protected"`)
	assert.Contains(t, page("hq"), `<span data-protected-until="36" data-protection="me" hidden>`,
		"past its end, HQ's protection line is hidden, for live.js to show should they be robbed")
}
