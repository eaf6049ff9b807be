package game

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// Defaults for the zero Options.
const (
	DefaultTickInterval = 10 * time.Minute
	DefaultSessionTTL   = 30 * 24 * time.Hour
	roundLength         = 7 * 24 * time.Hour // DefaultRoundTicks = roundLength / TickInterval
)

// Store keeps the game in one SQLite file through modernc.org/sqlite, in WAL
// mode. It is safe for concurrent use. It holds one connection, so calls from
// several goroutines take turns; several Stores (or processes) on one file
// take turns on SQLite's lock, waiting up to the 5 s busy timeout, and since
// every write transaction begins with BEGIN IMMEDIATE none of them can
// deadlock upgrading a read lock. The server calls it from its one loop
// goroutine, so every call blocks the loop for as long as it takes; what the
// pages read is cached in memory until a write changes it (cache.go), so a
// page shown again costs little. Stores sharing a file see each other's writes
// in those reads after Sync.
type Store struct {
	db  *sql.DB
	opt Options

	mu  sync.Mutex // guards rng
	rng *rand.Rand

	dummy *dummyHash // for unknown names' logins; made as Open begins

	version atomic.Uint64 // see Version
	cache   readCache     // see cache.go
	ckpt    *checkpointer // see checkpoint.go; nil with a negative Options.CheckpointInterval
	ticking atomic.Bool   // a tick is under way: TickStep said more (the checkpointer waits)
	pruning atomic.Bool   // a tick's prune may be under way (TickStep looks even with no tick due)

	// seen is, per player, the tick of the last headquarters visit this
	// Store recorded (see Visit): players.seen_tick only grows, so it is a
	// lower bound of the row's, and a visit in that same tick needs no query.
	seenMu sync.Mutex
	seen   map[int64]int64

	// Prepared once at Open for the HQ page, the page the load test measures;
	// transactions use them through tx.StmtContext.
	sessionStmt, playerStmt, clockStmt, eventsStmt *sql.Stmt
	// The other hot queries, prepared on first use (stmts.go).
	stmts stmtCache
}

// Open opens the SQLite database at path, creating the file (0600, not its
// folder) if needed. It sets WAL journaling, a 5 s busy timeout and foreign keys,
// applies the embedded migrations not yet applied in one transaction (seeding
// the sources and starting the clock on a new file), prepares the hot
// queries, and calls Tick once to catch up ticks missed while the server was
// down. It also starts making, on a goroutine of its own, the bcrypt hash
// that logins of unknown names are checked against (about 70 ms at the
// default cost; see LookupLogin). The caller must Close the Store.
//
// Opening writes the game (migrations, the catch-up of ticks at
// opt.TickInterval): only the process that owns the database may open it,
// the one holding its lock (internal/dblock), or its workers. A command
// that cannot take the lock must refuse before calling Open; Backup only
// reads.
func Open(path string, opt Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("game: open: empty database path")
	}
	if c := opt.BcryptCost; c != 0 && (c < bcrypt.MinCost || c > bcrypt.MaxCost) {
		return nil, fmt.Errorf("game: open: bcrypt cost %d outside %d..%d", c, bcrypt.MinCost, bcrypt.MaxCost)
	}
	// A new database holds password hashes and the session keys: create
	// it 0600 (SQLite gives its -wal and -shm files the same mode).
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("game: open %s: %w", path, err)
	}
	opt = opt.withDefaults()
	dsn := DSN(path)
	if opt.CheckpointInterval > 0 {
		dsn += fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", checkpointBackstop)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("game: open %s: %w", path, err)
	}
	// One connection: SQLite allows one writer anyway, the server is single-threaded,
	// each statement is prepared once, and our own connections never wait on each other.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, opt: opt}
	s.pruning.Store(true) // a prune cut short by a crash is finished by Open's Tick
	s.dummy = newDummyHash(s.opt.BcryptCost)
	s.rng = s.opt.Rand
	if err := s.open(context.Background()); err != nil {
		s.Close()
		return nil, fmt.Errorf("game: open %s: %w", path, err)
	}
	if opt.CheckpointInterval > 0 {
		if s.ckpt, err = startCheckpointer(path, s.db, s.ticking.Load, opt.CheckpointInterval); err != nil {
			s.Close()
			return nil, fmt.Errorf("game: open %s: %w", path, err)
		}
	}
	return s, nil
}

func (s *Store) open(ctx context.Context) error {
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	_, err := s.Tick(ctx)
	return err
}

// DSN returns the modernc.org/sqlite data source name Open uses for path: a
// file: URI (path escaped, so '?', '#' and '%' stay part of the name) with
// busy_timeout(5000), journal_mode(wal), synchronous(normal), foreign_keys(1)
// and _txlock=immediate, so every transaction begins with BEGIN IMMEDIATE.
//
// synchronous=NORMAL is the usual setting under WAL (litestream's too): a
// commit survives the process crashing, and a power cut can lose only the
// last commits, never corrupt the file; it spares an fsync per commit.
//
// wal_autocheckpoint stays SQLite's 1,000 pages here: the commit that
// takes the WAL past it checkpoints and waits for the fsyncs. A Store's own
// connection checkpoints only past checkpointBackstop pages, and leaves the
// checkpoints to a goroutine and connection of its own
// (Options.CheckpointInterval, checkpoint.go). (Checkpoints every 200
// pages in the commit, on the server's loop, made a tick's longest turn
// shorter in BenchmarkLiveStreams, but in make capacity a request stalled
// 143 to 363 ms in each of 4 runs: docs/live.md.)
func DSN(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(wal)" +
		"&_pragma=synchronous(normal)&_pragma=foreign_keys(1)&_txlock=immediate"
}

// withDefaults fills in what zero means.
func (o Options) withDefaults() Options {
	if o.TickInterval <= 0 {
		o.TickInterval = DefaultTickInterval
	}
	if o.RoundTicks <= 0 {
		o.RoundTicks = max(1, int64(roundLength/o.TickInterval))
	}
	if o.KeepChanges <= 0 {
		o.KeepChanges = DefaultKeepChanges
	}
	if o.PaySlice <= 0 {
		o.PaySlice = DefaultPaySlice
	}
	if o.PruneSlice <= 0 {
		o.PruneSlice = DefaultPruneSlice
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = DefaultCheckpointInterval
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.BcryptCost == 0 {
		o.BcryptCost = bcrypt.DefaultCost
	}
	if o.Rand == nil {
		var seed [32]byte
		crand.Read(seed[:])
		o.Rand = rand.New(rand.NewChaCha8(seed))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Close closes the prepared statements and the database. The Store must not
// be used afterwards.
func (s *Store) Close() error {
	if s.ckpt != nil {
		s.ckpt.close()
	}
	for _, st := range []*sql.Stmt{s.sessionStmt, s.playerStmt, s.clockStmt, s.eventsStmt} {
		if st != nil {
			st.Close()
		}
	}
	s.closeStmts()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("game: close: %w", err)
	}
	return nil
}

// migrate applies, in name order and in one transaction, each embedded
// migration not yet recorded in schema_migrations, then starts the clock if
// the database is new.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	return s.update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		for _, name := range names {
			if err := s.migrateFile(ctx, tx, name); err != nil {
				return err
			}
		}
		return initClock(ctx, tx, s.now())
	})
}

func (s *Store) migrateFile(ctx context.Context, tx *sql.Tx, name string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return fmt.Errorf("migration %s: %w", name, err)
	} else if n > 0 {
		return nil
	}
	buf, err := fs.ReadFile(migrations, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
		return fmt.Errorf("migration %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`,
		name, unixNano(s.now())); err != nil {
		return fmt.Errorf("migration %s: %w", name, err)
	}
	return nil
}

func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.sessionStmt, `SELECT s.expires_at, ` + clockColumns + `, ` + playerColumns + `
			FROM sessions s JOIN players p ON p.id = s.player_id WHERE s.id = ?`},
		{&s.playerStmt, `SELECT ` + playerColumns + ` FROM players p WHERE p.id = ?`},
		{&s.clockStmt, clockQuery},
		{&s.eventsStmt, `SELECT ` + eventColumns + ` FROM events WHERE player_id = ? ORDER BY id DESC LIMIT ?`},
	} {
		st, err := s.db.PrepareContext(ctx, p.query)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		*p.stmt = st
	}
	return nil
}

// update runs fn in one BEGIN IMMEDIATE transaction, committed if fn
// returns nil, and empties the read cache: for writes that do not say what
// they change (a tick, an enlistment), or change nothing it keeps
// (updateTouching says so).
func (s *Store) update(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.updateTouching(ctx, everything, fn)
}

// updateTouching is update for a write that changes, for the read cache,
// only what t names by the time fn returns (fn may add to it). Every write
// goes through here (or calls written itself), so the version moves on
// with every commit (cache.go).
func (s *Store) updateTouching(ctx context.Context, t *touches, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("game: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		s.written(everything) // even a failed commit may have written
		return fmt.Errorf("game: commit: %w", err)
	}
	s.written(t)
	return nil
}

// nothingCached is the touches of a write to tables no cached read reads
// (leases, rate limits, login failures): the cache stays as it is.
func nothingCached() *touches { return &touches{} }

// random calls fn with the store's random source, serialised.
func (s *Store) random(fn func(*rand.Rand)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.rng)
}

func (s *Store) now() time.Time { return s.opt.Now() }

// Times are stored as INTEGER nanoseconds since the Unix epoch and read back in UTC.
func unixNano(t time.Time) int64 { return t.UnixNano() }
func fromNano(n int64) time.Time { return time.Unix(0, n).UTC() }
