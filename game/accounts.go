package game

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Register creates a player of faction f with the starting stats, protected
// from theft for NewPlayerProtection ticks, and announces them in the news:
// NewEnlistment, then Enlist. It blocks the caller for the bcrypt hash; a
// server on one loop calls NewEnlistment off the loop and Enlist on it.
//
// Errors: those of NewEnlistment and Enlist.
func (s *Store) Register(ctx context.Context, name, password string, f Faction) (*Player, error) {
	e, err := s.NewEnlistment(name, password, f)
	if err != nil {
		return nil, err
	}
	return s.Enlist(ctx, e)
}

// An Enlistment is a checked registration with its password hashed, ready
// for Enlist.
type Enlistment struct {
	Name    string
	Faction Faction
	hash    []byte
}

// NewEnlistment checks a registration and hashes its password with bcrypt at
// Options.BcryptCost (about 70 ms of CPU at bcrypt.DefaultCost). It touches
// no database and no mutable state of the Store, so any goroutine may call
// it: a server hands it to a worker.
//
// Errors: EINVALID for a name not 3..20 of [A-Za-z0-9_-], a password not 8..72
// bytes or a faction not FBI or MIB, each with a message naming the problem.
func (s *Store) NewEnlistment(name, password string, f Faction) (*Enlistment, error) {
	if err := validateAccount(name, password, f); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.opt.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("game: register: %w", err)
	}
	return &Enlistment{Name: name, Faction: f, hash: hash}, nil
}

// Enlist creates the player e describes, in one transaction (no hashing:
// it takes about as long as any other write).
//
// Errors: ECONFLICT if the name is taken, compared case-insensitively, or
// if the game already has Options.MaxPlayers players (the game is full).
func (s *Store) Enlist(ctx context.Context, e *Enlistment) (*Player, error) {
	var p Player
	err := s.update(ctx, func(tx *sql.Tx) error {
		c, err := readClock(ctx, tx, s.clockStmt)
		if err != nil {
			return err
		}
		if err := s.checkRoom(ctx, tx); err != nil {
			return err
		}
		p = NewPlayer(e.Name, e.Faction, c.Tick)
		p.CreatedAt = s.now().UTC()
		if err := insertPlayer(ctx, tx, &p, e.hash); err != nil {
			return err
		}
		if err := insertNotes(ctx, tx, 0, []Note{
			{Tick: c.Tick, Text: fmt.Sprintf("%s joined the %s.", p.Name, p.Faction)},
			{Tick: c.Tick, PlayerID: p.ID, Text: fmt.Sprintf("Welcome to the %s, %s. Nobody can steal from you until tick %d.",
				p.Faction, p.Name, p.ProtectedUntil)},
		}, func(int64) time.Time { return p.CreatedAt }); err != nil {
			return err
		}
		return recordStanding(ctx, tx, nil, []Player{p}, p.CreatedAt)
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// checkRoom refuses a new player when the game has Options.MaxPlayers.
func (s *Store) checkRoom(ctx context.Context, tx *sql.Tx) error {
	if s.opt.MaxPlayers <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM players`).Scan(&n); err != nil {
		return fmt.Errorf("game: register: %w", err)
	}
	if n >= s.opt.MaxPlayers {
		agents := "agents"
		if n == 1 {
			agents = "agent"
		}
		return Errorf(ECONFLICT, "The game is full: it has %d %s, as many as its host allows. Nobody was enlisted.", n, agents)
	}
	return nil
}

func validateAccount(name, password string, f Faction) error {
	return ValidateAccount(name, password, string(f))
}

// ValidateAccount checks a registration's name (ValidateName), password
// (ValidatePassword) and faction (ParseFaction) and reports every problem
// at once: nil, or one EINVALID error whose message is each refusal's
// message in that order, separated by a space.
func ValidateAccount(name, password, faction string) error {
	_, ferr := ParseFaction(faction)
	var msgs []string
	for _, err := range []error{ValidateName(name), ValidatePassword(password), ferr} {
		if err != nil {
			msgs = append(msgs, ErrorMessage(err))
		}
	}
	if msgs == nil {
		return nil
	}
	return &Error{Code: EINVALID, Message: strings.Join(msgs, " ")}
}

func insertPlayer(ctx context.Context, tx *sql.Tx, p *Player, hash []byte) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM players WHERE name = ?`, p.Name).Scan(&n); err != nil {
		return fmt.Errorf("game: register: %w", err)
	} else if n > 0 {
		return Errorf(ECONFLICT, "The name %q is taken; choose another.", p.Name)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO players (name, faction, password_hash, cash, agents, security,
		secrets, ap, protected_until, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Name, p.Faction, hash, p.Cash, p.Agents, p.Security, p.Secrets, p.AP, p.ProtectedUntil, unixNano(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("game: register: %w", err)
	}
	p.ID, err = res.LastInsertId()
	return err
}

// Authenticate returns the player with this name (case-insensitive) and
// password: LookupLogin, then Login.Check. It blocks the caller for one
// bcrypt comparison (about 70 ms of CPU at bcrypt.DefaultCost); a server on
// one loop calls LookupLogin on the loop and Check off it.
//
// Errors: those of LookupLogin and Check.
func (s *Store) Authenticate(ctx context.Context, name, password string) (*Player, error) {
	l, err := s.LookupLogin(ctx, name)
	if err != nil {
		return nil, err
	}
	return l.Check(password)
}

// A Login is what a password is checked against: a player's bcrypt hash, or
// for an unknown name the Store's dummy hash, so that both cost the same.
type Login struct {
	player *Player    // nil for an unknown name
	hash   []byte     // nil for an unknown name: dummy's
	dummy  *dummyHash // for an unknown name
}

// LookupLogin reads the player called name (case-insensitive) and their
// password hash, one query. An unknown name is not an error here: its Login
// fails Check after the same bcrypt work as a wrong password, so timing does
// not reveal who plays.
func (s *Store) LookupLogin(ctx context.Context, name string) (*Login, error) {
	var hash []byte
	row := s.db.QueryRowContext(ctx, `SELECT p.password_hash, `+playerColumns+` FROM players p WHERE p.name = ?`, name)
	p, err := scanPlayer(row, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return &Login{dummy: s.dummy}, nil
	} else if err != nil {
		return nil, fmt.Errorf("game: authenticate: %w", err)
	}
	return &Login{player: p, hash: hash}, nil
}

// Check compares password with the login's hash (bcrypt, at the cost the
// hash was made with) and returns the player it belongs to. It touches no
// database, so any goroutine may call it: a server hands it to a worker.
//
// Errors: EUNAUTHORIZED for an unknown name or a wrong password, with the
// same message for both.
func (l *Login) Check(password string) (*Player, error) {
	hash := l.hash
	if l.player == nil {
		hash = l.dummy.get()
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || l.player == nil {
		return nil, errBadLogin
	}
	return l.player, nil
}

var errBadLogin = Errorf(EUNAUTHORIZED, "Wrong name or password.")

// dummyHash is the hash an unknown name's Login is checked against, at
// Options.BcryptCost, so that the first unknown name costs what a wrong
// password costs (building it lazily on the first such login made that one
// take twice as long). Open starts making it on a goroutine of its own, so
// opening the store is not held up by it; get waits for it, on the
// goroutine that checks the password (a worker, in the server).
type dummyHash struct {
	done chan struct{}
	hash []byte
}

func newDummyHash(cost int) *dummyHash {
	d := &dummyHash{done: make(chan struct{})}
	go func() {
		d.hash, _ = bcrypt.GenerateFromPassword([]byte("state secrets dummy"), cost) // cost checked by Open
		close(d.done)
	}()
	return d
}

func (d *dummyHash) get() []byte {
	<-d.done
	return d.hash
}

// MaxSessions is how many sessions a player may have at once: a new one
// beyond it ends the oldest (the one expiring first).
const MaxSessions = 10

// CreateSession starts a session for the player, valid for Options.SessionTTL,
// and ends the player's oldest sessions past MaxSessions.
// Its ID is 128 bits from crypto/rand as 32 lowercase hex digits.
// Errors: ENOTFOUND if there is no such player.
func (s *Store) CreateSession(ctx context.Context, playerID int64) (*Session, error) {
	var b [16]byte
	crand.Read(b[:])
	sess := &Session{ID: hex.EncodeToString(b[:]), PlayerID: playerID, Expires: s.now().Add(s.opt.SessionTTL).UTC()}
	err := s.updateTouching(ctx, &touches{tags: []tag{{tagSessions, playerID}}}, func(tx *sql.Tx) error {
		if _, err := findPlayer(ctx, tx, s.playerStmt, playerID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, player_id, expires_at) VALUES (?, ?, ?)`,
			sess.ID, sess.PlayerID, unixNano(sess.Expires)); err != nil {
			return err
		}
		// Keep the new session and the player's MaxSessions-1 newest others.
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE player_id = ?1 AND id != ?2 AND id NOT IN (
			SELECT id FROM sessions WHERE player_id = ?1 AND id != ?2 ORDER BY expires_at DESC LIMIT ?3)`,
			playerID, sess.ID, MaxSessions-1)
		return err
	})
	if err != nil {
		return nil, wrap("create session", err)
	}
	return sess, nil
}

// SessionPlayer returns the player whose session id is. A malformed id (not
// 32 lowercase hex digits) is refused without a query. Errors: EUNAUTHORIZED
// for a malformed, unknown or expired (per Options.Now) session.
func (s *Store) SessionPlayer(ctx context.Context, id string) (*Player, error) {
	p, _, err := s.SessionState(ctx, id)
	return p, err
}

// SessionState returns what every page of the session id starts from: its
// player and the game clock, read in one query, and then from the read
// cache until a write changes them (the *Player is shared: do not modify it); the
// expiry is checked against Options.Now on every call. Errors: as
// SessionPlayer.
func (s *Store) SessionState(ctx context.Context, id string) (*Player, Clock, error) {
	if !ValidSessionID(id) {
		return nil, Clock{}, errNoSession
	}
	st, err := cachedBy(ctx, s, cacheKey{kind: "session", name: id}, id, s.readSessionTagged)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !s.now().Before(st.expires) {
		return nil, Clock{}, errNoSession
	} else if err != nil {
		return nil, Clock{}, fmt.Errorf("game: session player: %w", err)
	}
	return st.player, st.clock, nil
}

type sessionState struct {
	player  *Player
	clock   Clock
	expires time.Time
}

// readSessionTagged is readSession with its tags: the player's sessions
// and row (and their faction's, for unread_faction), and the clock.
func (s *Store) readSessionTagged(ctx context.Context, id string) (sessionState, []tag, error) {
	st, err := s.readSession(ctx, id)
	if err != nil {
		return st, nil, err
	}
	p := st.player
	return st, []tag{{tagSessions, p.ID}, {tagPlayer, p.ID}, {tagMembers, factionTag(p.Faction)}, {kind: tagClock}}, nil
}

// readSession reads the session id (expired or not), its player and the clock.
func (s *Store) readSession(ctx context.Context, id string) (sessionState, error) {
	var st sessionState
	var expires, last int64
	c := &st.clock
	p, err := scanPlayer(s.sessionStmt.QueryRowContext(ctx, id), &expires, &c.Tick, &c.Round, &c.RoundStart, &last)
	if err != nil {
		return st, err
	}
	st.player, st.expires = p, fromNano(expires)
	c.LastTick, c.RoundTicks, c.Interval = fromNano(last), s.opt.RoundTicks, s.opt.TickInterval
	return st, nil
}

var errNoSession = Errorf(EUNAUTHORIZED, "Your session has expired or is unknown; please log in.")

// ValidSessionID reports whether id has the form of a session ID: 32 lowercase hex digits.
func ValidSessionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DeleteSession ends the session id (logging out). Deleting an unknown or
// malformed session is not an error: the outcome, no such session, is the same.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if !ValidSessionID(id) {
		return nil
	}
	var player int64
	err := s.db.QueryRowContext(ctx, `DELETE FROM sessions WHERE id = ? RETURNING player_id`, id).Scan(&player)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.written(nothingCached())
	case err != nil:
		s.written(everything)
		return fmt.Errorf("game: delete session: %w", err)
	default:
		s.written(&touches{tags: []tag{{tagSessions, player}}})
	}
	return nil
}

// DeleteSessions ends every session of the player (logging out
// everywhere) and returns their ids, so the caller can close what they
// hold open (none: nil).
func (s *Store) DeleteSessions(ctx context.Context, playerID int64) ([]string, error) {
	var ids []string
	err := s.updateTouching(ctx, &touches{tags: []tag{{tagSessions, playerID}}}, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM sessions WHERE player_id = ? RETURNING id`, playerID)
		ids, err = collect(rows, err, func(row scanner) (*string, error) {
			var id string
			return &id, row.Scan(&id)
		})
		return err
	})
	if err != nil {
		return nil, wrap("delete sessions", err)
	}
	return ids, nil
}

// Secret returns size random bytes (from crypto/rand) stored in the kv table
// under name, creating them on the first call: how cookie keys survive
// restarts. Errors: EINVALID if size < 1 or differs from the stored value's.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	if size < 1 {
		return nil, Errorf(EINVALID, "A secret needs at least 1 byte, not %d.", size)
	}
	var value []byte
	err := s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, "secret:"+name).Scan(&value)
		if errors.Is(err, sql.ErrNoRows) {
			value = make([]byte, size)
			crand.Read(value)
			_, err = tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES (?, ?)`, "secret:"+name, value)
		}
		return err
	})
	if err != nil {
		return nil, wrap("secret", err)
	}
	if len(value) != size {
		return nil, Errorf(EINVALID, "The secret %q has %d bytes, not %d.", name, len(value), size)
	}
	return value, nil
}

// wrap prefixes an internal error with the package and operation, and passes *Error through.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if e := (*Error)(nil); errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("game: %s: %w", op, err)
}
