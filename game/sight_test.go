package game_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/game"
)

func TestDisclose(t *testing.T) {
	// Ensure the rules on information: everyone sees what the ranking and
	// the profile show; a player's cash, agents, security and AP are their
	// own, a rival's only from a dossier (agents and security also from
	// an order's report), a teammate's never; the faction channel is the
	// side's; the wire, messages and unread counts the player's alone.
	for _, f := range []game.Figure{game.FigureName, game.FigureFaction, game.FigureJoined, game.FigureSecrets,
		game.FigureProtection, game.FigureCareer, game.FigureFinal, game.FigurePosts} {
		for _, r := range []game.Relation{game.Self, game.Teammate, game.Rival} {
			assert.Equal(t, game.Live, game.Disclose(r, f), "%s to a %s", f, r)
		}
	}
	for _, tc := range []struct {
		f                     game.Figure
		self, teammate, rival game.Access
	}{
		{game.FigureCash, game.Live, game.Hidden, game.ByDossier},
		{game.FigureAgents, game.Live, game.Hidden, game.ByDossier | game.ByReport},
		{game.FigureSecurity, game.Live, game.Hidden, game.ByDossier | game.ByReport},
		{game.FigureAP, game.Live, game.Hidden, game.ByDossier},
		{game.FigureTrap, game.Live, game.Hidden, game.ByDossier | game.ByReport},
		{game.FigureSweep, game.Live, game.Hidden, game.ByDossier | game.ByReport},
		{game.FigureBid, game.Live, game.Hidden, game.ByDossier},
		{game.FigureLieLow, game.Live, game.Hidden, game.Hidden},
		{game.FigureChannel, game.Live, game.Live, game.Hidden},
		{game.FigureWire, game.Live, game.Hidden, game.Hidden},
		{game.FigureMessages, game.Live, game.Hidden, game.Hidden},
		{game.FigureUnread, game.Live, game.Hidden, game.Hidden},
	} {
		assert.Equal(t, [3]game.Access{tc.self, tc.teammate, tc.rival},
			[3]game.Access{game.Disclose(game.Self, tc.f), game.Disclose(game.Teammate, tc.f), game.Disclose(game.Rival, tc.f)}, string(tc.f))
	}
	assert.Len(t, game.Figures(), 20, "every figure is in the table")
	assert.Equal(t, game.Hidden, game.Disclose(game.Rival, "shoe size"), "an unknown figure is hidden")
	assert.Equal(t, []string{"yes", "no", "from a dossier", "from a dossier or a report"},
		[]string{game.Live.String(), game.Hidden.String(), game.ByDossier.String(), (game.ByDossier | game.ByReport).String()})
}

func TestSeesAndKnownFigure(t *testing.T) {
	// Ensure Relate tells self, teammate and rival apart, and that what a
	// viewer knows of a covert figure is their own live one, a rival's
	// only from a dossier, and a teammate's never.
	me := &game.Player{ID: 1, Faction: game.FBI, Cash: 10}
	mate := game.Player{ID: 2, Faction: game.FBI, Cash: 20}
	rival := game.Player{ID: 3, Faction: game.MIB, Cash: 30, Security: 4}
	assert.Equal(t, []game.Relation{game.Self, game.Teammate, game.Rival},
		[]game.Relation{game.Relate(me, me), game.Relate(me, &mate), game.Relate(me, &rival)})
	assert.True(t, game.Sees(me, me, game.FigureCash))
	assert.False(t, game.Sees(me, &rival, game.FigureCash))
	assert.True(t, game.Sees(me, &rival, game.FigureSecrets))

	known := func(d game.Dossier, f game.Figure) [2]any {
		v, ok := game.KnownFigure(me, &d, f)
		return [2]any{v, ok}
	}
	assert.Equal(t, [2]any{10, true}, known(game.Dossier{Target: *me}, game.FigureCash))
	assert.Equal(t, [2]any{0, false}, known(game.Dossier{Target: mate, Known: true}, game.FigureCash), "a teammate's: never")
	assert.Equal(t, [2]any{0, false}, known(game.Dossier{Target: rival}, game.FigureSecurity), "no dossier")
	assert.Equal(t, [2]any{4, true}, known(game.Dossier{Target: rival, Known: true}, game.FigureSecurity))
	trapped := rival
	trapped.Trap, trapped.Bid = true, 250
	assert.Equal(t, [2]any{1, true}, known(game.Dossier{Target: trapped, Known: true}, game.FigureTrap))
	assert.Equal(t, [2]any{0, false}, known(game.Dossier{Target: trapped}, game.FigureTrap), "a trap: from a dossier only")
	assert.Equal(t, [2]any{250, true}, known(game.Dossier{Target: trapped, Known: true}, game.FigureBid))
	assert.Equal(t, [2]any{0, false}, known(game.Dossier{Target: trapped, Known: true}, game.FigureLieLow), "never a rival's")
	assert.Equal(t, [2]any{0, false}, known(game.Dossier{Target: rival, Known: true}, game.FigureSecrets), "not a covert figure")
}
