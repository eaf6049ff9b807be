package game_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

func TestStore_Register(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure a new player starts with the starting stats, protected, and is in the news.
		s := MustOpenStore(t)
		p, err := s.Register(ctx, "Fox_Mulder", "trustno1!", game.FBI)
		require.NoError(t, err)
		assert.NotZero(t, p.ID)
		assert.True(t, p.CreatedAt.Equal(Epoch))
		want := game.NewPlayer("Fox_Mulder", game.FBI, 0)
		want.ID, want.CreatedAt = p.ID, p.CreatedAt
		assert.Equal(t, &want, p)
		assert.Equal(t, int64(game.NewPlayerProtection), p.ProtectedUntil)
		assert.Equal(t, p, MustPlayer(t, s, p.ID))

		news, err := s.News(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"Fox_Mulder joined the FBI."}, Texts(news))
		feed, err := s.Events(ctx, p.ID, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"Welcome to the FBI, Fox_Mulder. Nobody can steal from you until tick 36."}, Texts(feed))
	})
	t.Run("ErrConflict", func(t *testing.T) {
		// Ensure names are unique regardless of case.
		s := MustOpenStore(t)
		MustRegister(t, s, "scully", game.FBI)
		_, err := s.Register(ctx, "SCULLY", "password2", game.MIB)
		RequireCode(t, err, game.ECONFLICT, `The name "SCULLY" is taken`)
		ranking, err := s.Ranking(ctx)
		require.NoError(t, err)
		assert.Len(t, ranking.Players, 1)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure bad names, passwords and factions are refused with a message naming the problem.
		s := MustOpenStore(t)
		for _, tc := range []struct{ name, password, faction, msg string }{
			{"ab", "password1", "FBI", "A name needs 3 to 20 characters"},
			{strings.Repeat("a", 21), "password1", "FBI", "A name needs 3 to 20 characters"},
			{"bad name", "password1", "FBI", "only letters, digits"},
			{"krycek", "short", "MIB", "A password needs 8 to 72 bytes; yours has 5."},
			{"krycek", strings.Repeat("p", 73), "MIB", "yours has 73"},
			{"krycek", "password1", "CIA", "choose FBI or MIB"},
		} {
			_, err := s.Register(ctx, tc.name, tc.password, game.Faction(tc.faction))
			RequireCode(t, err, game.EINVALID, tc.msg)
		}
		news, err := s.News(ctx, 10)
		require.NoError(t, err)
		assert.Empty(t, news, "a refused registration leaves no trace")
	})
}

func TestStore_Authenticate(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	want := MustRegister(t, s, "skinner", game.FBI)
	t.Run("OK", func(t *testing.T) {
		// Ensure the name matches regardless of case.
		for _, name := range []string{"skinner", "Skinner"} {
			p, err := s.Authenticate(ctx, name, "password1")
			require.NoError(t, err)
			assert.Equal(t, want, p)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		// Ensure a wrong password and an unknown name fail alike.
		for _, tc := range [][2]string{{"skinner", "password2"}, {"skinner", ""}, {"nobody", "password1"}} {
			_, err := s.Authenticate(ctx, tc[0], tc[1])
			RequireCode(t, err, game.EUNAUTHORIZED, "Wrong name or password.")
		}
	})
	t.Run("UnknownNameSameCost", func(t *testing.T) {
		// Ensure an unknown name is checked against a hash made at Open, at
		// the store's bcrypt cost, so it costs what a wrong password costs,
		// from the first one on.
		s := MustOpenStore(t, func(o *game.Options) { o.BcryptCost = bcrypt.MinCost + 1 })
		MustRegister(t, s, "reyes", game.FBI)
		known, err := s.LookupLogin(ctx, "reyes")
		require.NoError(t, err)
		unknown, err := s.LookupLogin(ctx, "nobody")
		require.NoError(t, err)
		assert.Equal(t, bcrypt.MinCost+1, known.HashCost())
		assert.Equal(t, known.HashCost(), unknown.HashCost())
		_, err = unknown.Check("password1")
		RequireCode(t, err, game.EUNAUTHORIZED, "Wrong name or password.")
	})
	t.Run("SplitOffTheLoop", func(t *testing.T) {
		// Ensure the lookup and the check can run on different goroutines,
		// as the server runs them (lookup on the loop, check on a worker).
		l, err := s.LookupLogin(ctx, "SKINNER")
		require.NoError(t, err)
		got := make(chan *game.Player)
		go func() { p, _ := l.Check("password1"); got <- p }()
		assert.Equal(t, want, <-got)
	})
}

func TestStore_Enlist(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure a hashed enlistment becomes a player who can log in.
		s := MustOpenStore(t)
		e, err := s.NewEnlistment("monica", "password1", game.FBI)
		require.NoError(t, err)
		p, err := s.Enlist(ctx, e)
		require.NoError(t, err)
		got, err := s.Authenticate(ctx, "monica", "password1")
		require.NoError(t, err)
		assert.Equal(t, p, got)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		// Ensure a name taken between hashing and enlisting is refused in the transaction.
		s := MustOpenStore(t)
		e, err := s.NewEnlistment("monica", "password1", game.FBI)
		require.NoError(t, err)
		MustRegister(t, s, "Monica", game.MIB)
		_, err = s.Enlist(ctx, e)
		RequireCode(t, err, game.ECONFLICT, `The name "monica" is taken`)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure a bad registration is refused before any hashing.
		s := MustOpenStore(t)
		_, err := s.NewEnlistment("x", "password1", game.FBI)
		RequireCode(t, err, game.EINVALID, "A name needs 3 to 20 characters")
	})
}

func TestStore_CreateSession(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	p := MustRegister(t, s, "doggett", game.FBI)
	t.Run("OK", func(t *testing.T) {
		// Ensure ids are 32 lowercase hex digits, distinct, expiring after SessionTTL.
		a, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		b, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		assert.Regexp(t, `^[0-9a-f]{32}$`, a.ID)
		assert.NotEqual(t, a.ID, b.ID)
		assert.Equal(t, p.ID, a.PlayerID)
		assert.True(t, a.Expires.Equal(Epoch.Add(time.Hour)), "expires %v", a.Expires)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		// Ensure a session needs a real player.
		_, err := s.CreateSession(ctx, 999)
		RequireCode(t, err, game.ENOTFOUND, "no player #999")
	})
}

func TestStore_SessionPlayer(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure a session finds its player until just before it expires.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "reyes", game.FBI)
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		s.Time.Add(time.Hour - time.Nanosecond)
		got, err := s.SessionPlayer(ctx, sess.ID)
		require.NoError(t, err)
		assert.Equal(t, p.Name, got.Name)
	})
	t.Run("ErrExpired", func(t *testing.T) {
		// Ensure a session is refused once Options.Now reaches its expiry, also when it was just read (and cached).
		s := MustOpenStore(t)
		p := MustRegister(t, s, "reyes", game.FBI)
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		s.Time.Add(time.Hour - time.Nanosecond)
		_, err = s.SessionPlayer(ctx, sess.ID)
		require.NoError(t, err)
		s.Time.Add(time.Nanosecond)
		_, err = s.SessionPlayer(ctx, sess.ID)
		RequireCode(t, err, game.EUNAUTHORIZED, "expired or is unknown")
	})
	t.Run("ErrRevoked", func(t *testing.T) {
		// Ensure DeleteSession logs that session out, and only that one.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "reyes", game.FBI)
		a, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		b, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		_, err = s.SessionPlayer(ctx, a.ID) // cached now
		require.NoError(t, err)
		require.NoError(t, s.DeleteSession(ctx, a.ID))
		_, err = s.SessionPlayer(ctx, a.ID)
		RequireCode(t, err, game.EUNAUTHORIZED, "")
		_, err = s.SessionPlayer(ctx, b.ID)
		assert.NoError(t, err)
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		s := MustOpenStore(t)
		_, err := s.SessionPlayer(ctx, strings.Repeat("ab", 16))
		RequireCode(t, err, game.EUNAUTHORIZED, "")
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		// Ensure malformed ids are refused before the database is touched: the store is closed here.
		s := MustOpenStore(t)
		s.MustClose(t)
		for _, id := range []string{"", "abc", strings.Repeat("AB", 16), strings.Repeat("a", 31) + "g",
			strings.Repeat("a", 33), strings.Repeat("a", 30) + "é", "' OR 1=1 --" + strings.Repeat("a", 21)} {
			_, err := s.SessionPlayer(ctx, id)
			RequireCode(t, err, game.EUNAUTHORIZED, "")
		}
	})
}

func TestStore_SessionState(t *testing.T) {
	// Ensure a session's state is its player as of the last write and the clock, in one.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.SessionTTL = 24 * time.Hour })
	p := MustRegister(t, s, "reyes", game.FBI)
	sess, err := s.CreateSession(ctx, p.ID)
	require.NoError(t, err)
	got, c, err := s.SessionState(ctx, sess.ID)
	require.NoError(t, err)
	assert.Equal(t, p.AP, got.AP)
	want, err := s.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, c)
	_, err = s.Act(ctx, p.ID, game.Action{Kind: game.Recruit})
	require.NoError(t, err)
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	got, c, err = s.SessionState(ctx, sess.ID)
	require.NoError(t, err)
	assert.Equal(t, MustPlayer(t, s, p.ID), got)
	assert.Equal(t, int64(1), c.Tick)
	assert.Equal(t, Epoch.Add(Interval), c.LastTick)
	assert.Equal(t, Interval, c.Interval)
}

func TestStore_DeleteSession(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	t.Run("OK", func(t *testing.T) {
		p := MustRegister(t, s, "kersh", game.MIB)
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		require.NoError(t, s.DeleteSession(ctx, sess.ID))
		// Ensure deleting twice, or deleting nonsense, is not an error.
		assert.NoError(t, s.DeleteSession(ctx, sess.ID))
		assert.NoError(t, s.DeleteSession(ctx, "nonsense"))
	})
}

func TestStore_Secret(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure a secret is random, kept per name, and survives a restart.
		s := MustOpenStore(t)
		hash, err := s.Secret(ctx, "cookie-hash", 64)
		require.NoError(t, err)
		require.Len(t, hash, 64)
		assert.NotEqual(t, make([]byte, 64), hash)
		block, err := s.Secret(ctx, "cookie-block", 32)
		require.NoError(t, err)
		assert.NotEqual(t, hash[:32], block)

		s.MustReopen(t)
		again, err := s.Secret(ctx, "cookie-hash", 64)
		require.NoError(t, err)
		assert.Equal(t, hash, again)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := MustOpenStore(t)
		_, err := s.Secret(ctx, "k", 0)
		RequireCode(t, err, game.EINVALID, "at least 1 byte")
		// Ensure asking for a different size does not silently replace the key.
		_, err = s.Secret(ctx, "k", 32)
		require.NoError(t, err)
		_, err = s.Secret(ctx, "k", 64)
		RequireCode(t, err, game.EINVALID, `The secret "k" has 32 bytes, not 64.`)
	})
}
