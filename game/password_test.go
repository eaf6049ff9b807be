package game_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/game"
)

func TestCheckPassword(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Ensure passwords hard to guess pass, a long one judged by its
		// first 40 bytes.
		for _, pw := range []string{"correct horse battery staple", "lone-gunmen-1", "the crates in hangar eighteen",
			"Tr0ub4dor&3", "kx7#Qp2!vZ", "ünïcödé wörds ärë fïnë tóó", "the crates in hangar eighteen" + strings.Repeat("a", 40)} {
			assert.NoError(t, game.CheckPassword(pw, "mulder"), pw)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure easy passwords are EINVALID, saying why and what to do
		// instead, and that the player's name and the game's count
		// against the password.
		for _, tc := range []struct{ password, why string }{
			{"12345678", "one of the most common passwords"},
			{"password1", "one of the most common passwords"},
			{"mulder1961", "your code name or the game's words"},
			{"Mulder2026", "your code name or the game's words"},
			{"statesecrets", "your code name or the game's words"},
			{"zxcvbnm,./;'", "neighbouring keys"},
			{"zzzzzzzzzzzz", "repeats itself"},
			{"abcdefghijk", "a sequence"},
			{strings.Repeat("a", 40) + "kx7#Qp2!vZ", "repeats itself"},
		} {
			err := game.CheckPassword(tc.password, "mulder")
			RequireCode(t, err, game.EINVALID, "This password is too easy to guess: ")
			assert.Contains(t, game.ErrorMessage(err), tc.why, tc.password)
			assert.Contains(t, game.ErrorMessage(err), "Choose a longer one", tc.password)
			assert.NotContains(t, game.ErrorMessage(err), tc.password, "the message never repeats the password")
		}
	})
}

// BenchmarkCheckPassword is the estimate's cost, which decides where it
// runs (on the worker pool, not the loop): a common password, a
// passphrase, and crafted l33t-looking input of the longest length the
// estimate reads (40 bytes) and of bcrypt's longest (72, cut to 40).
func BenchmarkCheckPassword(b *testing.B) {
	crafted := strings.Repeat("4@8({6#9!1|0$5+7%2~3", 4)
	for _, c := range []struct{ name, password string }{
		{"common", "12345678"},
		{"passphrase", "the crates in hangar eighteen"},
		{"crafted-40", crafted[:40]},
		{"crafted-72", crafted[:72]},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				game.CheckPassword(c.password, "mulder")
			}
		})
	}
}
