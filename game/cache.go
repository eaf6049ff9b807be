package game

import (
	"context"
	"fmt"
	"sync"
)

// The read cache keeps what the pages read and only a write can change (the
// clock, feeds, news, board, sources, ranking, dossiers, counts), so that a
// page shown again while nothing happens in the game costs no query but the
// session's. Every write transaction this Store commits increments its
// version (Version); an entry read at another version is never served, and
// the first read at a new version empties the cache. So invalidation needs
// no list of what a write touches, and a page can never show something
// older than the last write it could see.
//
// The cache assumes this Store is the only writer of its file: another
// Store or process writing to the same file is not seen until this one
// writes too, or calls Sync, which folds SQLite's PRAGMA data_version (it
// changes when another connection commits) into Version. A server sharing
// its file calls Sync before each request.

// maxCacheEntries bounds the cache: past it, it is emptied (at worst once
// per maxCacheEntries distinct reads between two writes).
const maxCacheEntries = 4096

// cacheKey names one cached read: its kind, the player or other id it is
// for, a number such as a page or a limit, or a name such as a session id.
type cacheKey struct {
	kind string
	id   int64
	n    int
	name string
}

type readCache struct {
	mu      sync.Mutex // uncontended on the server's one loop; the Store is also safe for concurrent use
	version uint64     // the Store version the entries were read at
	entries map[cacheKey]any

	dataVersion int64 // PRAGMA data_version at the last Sync; guarded by mu
}

// Version returns the store's write counter: it increases by one with every
// write transaction this Store commits (and every logout), but for Visit's
// record of a visit, which no read but Visit's own returns; it never goes
// back, and is the same between two calls only if nothing another read
// returns was written in between. Something derived from the store's
// content at one version stays valid while Version returns it.
func (s *Store) Version() uint64 { return s.version.Load() }

// written marks the end of a write: the cache's entries are stale.
func (s *Store) written() { s.version.Add(1) }

// Sync makes the read cache see what other connections to the file (another
// Store, another process) committed since the last Sync: if SQLite's PRAGMA
// data_version moved, so does Version. It costs one query. A Store that is
// its file's only writer never needs it.
func (s *Store) Sync(ctx context.Context) error {
	var dv int64
	if err := s.prepared(ctx, nil, `PRAGMA data_version`).QueryRowContext(ctx).Scan(&dv); err != nil {
		return fmt.Errorf("game: sync: %w", err)
	}
	c := &s.cache
	c.mu.Lock()
	changed := dv != c.dataVersion
	c.dataVersion = dv
	c.mu.Unlock()
	if changed {
		s.written()
	}
	return nil
}

// cached returns the value read for key at the current version, calling read
// on a miss and keeping its result unless it failed. The version is taken
// before read runs, so a write that commits while read runs makes the entry
// stale rather than wrongly fresh. Cached values are shared by every caller:
// nobody may modify them.
func cached[T any](ctx context.Context, s *Store, key cacheKey, read func(context.Context) (T, error)) (T, error) {
	return cachedBy(ctx, s, key, key.name, func(ctx context.Context, _ string) (T, error) { return read(ctx) })
}

// cachedBy is cached for a read that takes key.name, so the call needs no
// closure.
func cachedBy[T any](ctx context.Context, s *Store, key cacheKey, name string, read func(context.Context, string) (T, error)) (T, error) {
	if s.opt.NoReadCache {
		return read(ctx, name)
	}
	v := s.version.Load()
	c := &s.cache
	c.mu.Lock()
	if c.version != v || c.entries == nil || len(c.entries) >= maxCacheEntries {
		c.version, c.entries = v, make(map[cacheKey]any)
	}
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.(T), nil
	}
	x, err := read(ctx, name)
	if err != nil {
		return x, err
	}
	c.mu.Lock()
	if c.version == v {
		c.entries[key] = x
	}
	c.mu.Unlock()
	return x, nil
}
