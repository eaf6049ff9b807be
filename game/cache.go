package game

import (
	"context"
	"fmt"
	"sync"
)

// The read cache keeps what the pages read and only a write can change (the
// clock, feeds, news, board, sources, ranking, dossiers, counts), so that a
// page shown again while nothing it shows changed costs no query but the
// session's.
//
// Each entry names what it was read from (its tags: a player's feed, the
// board, the standings, a faction's intel...), and each write transaction
// names what it changed (touches): committing drops the entries that share
// a tag with it and keeps the rest, so one player's order leaves the other
// players' pages cached. A write that names nothing (Store.update: the
// tick, an enlistment, a seed, a migration) empties the whole cache, as
// does a failed commit, and so does Sync when another connection wrote.
// An entry read while a write committed is not kept (the write may have
// changed it after the read began), so a page never shows something older
// than the last write it could see.
//
// The cache assumes this Store is the only writer of its file: another
// Store or process writing to the same file is not seen until this one
// calls Sync, which folds SQLite's PRAGMA data_version (it changes when
// another connection commits) into Version and empties the cache. A server
// sharing its file calls Sync before each request.

// maxCacheEntries bounds the cache: past it, an entry chosen at random
// makes room for the new one.
const maxCacheEntries = 8192

// cacheKey names one cached read: its kind, the player or other id it is
// for, a number such as a page or a limit, or a name such as a session id.
type cacheKey struct {
	kind string
	id   int64
	n    int
	name string
}

// tag names something stored that cached reads depend on and writes
// change: its kind and, for some kinds, a player's id or a faction
// (factionTag).
type tag struct {
	kind tagKind
	id   int64
}

type tagKind uint8

// The kinds of tag. A write that changes what one names touches it.
const (
	tagClock      tagKind = iota + 1 // the game clock
	tagFeed                          // id: a player's feed lines
	tagNews                          // the news (public events)
	tagBoard                         // id: factionTag; the board's public posts (0) or a faction's channel
	tagSources                       // the sources
	tagPlayer                        // id: any column of a player's row
	tagAnyPlayer                     // any column of any player's row (touched with every tagPlayer)
	tagMembers                       // id: factionTag; a column of every player of a faction (unread_faction)
	tagSessions                      // id: a player's sessions
	tagRoster                        // the players there are (names, factions, count)
	tagSecrets                       // any player's Secrets: the ranking's order and the factions' totals
	tagProtection                    // any player's protection from theft
	tagIntel                         // id: factionTag; the dossiers a faction's players gathered
	tagIntelOn                       // id: intelOnTag; a faction's dossiers on one player
	tagStanding                      // id: a player's Secrets or protection from theft (with tagSecrets, tagProtection)
	tagInbox                         // id: private messages to or from a player
	tagReports                       // id: spy and steal reports a player gave or was the target of
	tagRounds                        // the hall of fame: finished rounds and their placings
)

// factionTag is a faction as a tag's id: 0 for none (the public board).
func factionTag(f Faction) int64 {
	switch f {
	case FBI:
		return 1
	case MIB:
		return 2
	}
	return 0
}

// intelOnTag is the tag of faction f's dossiers on player id.
func intelOnTag(f Faction, id int64) tag { return tag{tagIntelOn, id<<2 | factionTag(f)} }

// touches is what one write transaction changed, for the read cache: all,
// or the tags.
type touches struct {
	all  bool
	tags []tag
}

func (t *touches) add(tags ...tag) { t.tags = append(t.tags, tags...) }

// player adds what a change to player id's row touches.
func (t *touches) player(id int64) {
	t.add(tag{tagPlayer, id}, tag{kind: tagAnyPlayer})
}

// notes adds what storing notes (insertNotes) touches: a player's feed or
// the news.
func (t *touches) notes(notes []Note) {
	for _, n := range notes {
		if n.PlayerID == 0 {
			t.add(tag{kind: tagNews})
		} else {
			t.add(tag{tagFeed, n.PlayerID})
		}
	}
}

// everything is the touches of a write that names none: it empties the
// cache.
var everything = &touches{all: true}

type cacheEntry struct {
	v    any
	tags []tag
}

type readCache struct {
	mu      sync.Mutex // uncontended on the server's one loop; the Store is also safe for concurrent use
	writes  uint64     // writes committed, this Store's or seen by Sync: an entry read across one is not kept
	entries map[cacheKey]cacheEntry
	byTag   map[tag]map[cacheKey]struct{} // the entries of each tag

	dataVersion int64 // PRAGMA data_version at the last Sync; guarded by mu
}

// Version returns the store's write counter: it increases by one with every
// write transaction this Store commits (and every logout), but for Visit's
// record of a visit, which no read but Visit's own returns; it never goes
// back, and is the same between two calls only if nothing another read
// returns was written in between. Something derived from the store's
// content at one version stays valid while Version returns it.
func (s *Store) Version() uint64 { return s.version.Load() }

// written marks the end of a write that changed what t names: the version
// moves on and the cache drops the entries it made stale.
func (s *Store) written(t *touches) {
	s.version.Add(1)
	s.cache.invalidate(t)
}

// Sync makes the read cache see what other connections to the file (another
// Store, another process) committed since the last Sync: if SQLite's PRAGMA
// data_version moved, so does Version, and the cache is emptied. It costs
// one query. A Store that is its file's only writer never needs it.
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
		s.written(everything)
	}
	return nil
}

// invalidate drops the entries t made stale: all of them, or those
// sharing a tag with it.
func (c *readCache) invalidate(t *touches) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if t.all {
		c.entries, c.byTag = nil, nil
		return
	}
	for _, g := range t.tags {
		for key := range c.byTag[g] {
			c.drop(key)
		}
	}
}

// drop removes key's entry and its place under each of its tags; c.mu is held.
func (c *readCache) drop(key cacheKey) {
	e, ok := c.entries[key]
	if !ok {
		return
	}
	delete(c.entries, key)
	for _, g := range e.tags {
		keys := c.byTag[g]
		delete(keys, key)
		if len(keys) == 0 {
			delete(c.byTag, g)
		}
	}
}

// lookup returns key's entry and the write count a read on a miss starts at.
func (c *readCache) lookup(key cacheKey) (v any, ok bool, writes uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e.v, ok, c.writes
}

// keep stores v under key with its tags, unless a write committed since
// the read began (writes).
func (c *readCache) keep(key cacheKey, v any, tags []tag, writes uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes != writes {
		return
	}
	if c.entries == nil {
		c.entries, c.byTag = make(map[cacheKey]cacheEntry), make(map[tag]map[cacheKey]struct{})
	}
	c.drop(key)
	if len(c.entries) >= maxCacheEntries {
		for k := range c.entries { // map order: a random entry
			c.drop(k)
			break
		}
	}
	c.entries[key] = cacheEntry{v, tags}
	for _, g := range tags {
		keys := c.byTag[g]
		if keys == nil {
			keys = make(map[cacheKey]struct{})
			c.byTag[g] = keys
		}
		keys[key] = struct{}{}
	}
}

// cached returns the value read for key, calling read on a miss and keeping
// its result, under tags, unless it failed. The tags name everything the
// read's value depends on: a write touching none of them leaves the entry
// in place. Cached values are shared by every caller: nobody may modify
// them.
func cached[T any](ctx context.Context, s *Store, key cacheKey, tags []tag, read func(context.Context) (T, error)) (T, error) {
	if s.opt.NoReadCache {
		return read(ctx)
	}
	e, ok, writes := s.cache.lookup(key)
	if ok {
		return e.(T), nil
	}
	x, err := read(ctx)
	if err != nil {
		return x, err
	}
	s.cache.keep(key, x, tags, writes)
	return x, nil
}

// cachedBy is cached for a read that takes a name (a session id, a
// player's) and names its value's tags itself, when they depend on what it
// read (a session's player), so the call needs no closure.
func cachedBy[T any](ctx context.Context, s *Store, key cacheKey, name string, read func(context.Context, string) (T, []tag, error)) (T, error) {
	if s.opt.NoReadCache {
		v, _, err := read(ctx, name)
		return v, err
	}
	e, ok, writes := s.cache.lookup(key)
	if ok {
		return e.(T), nil
	}
	x, tags, err := read(ctx, name)
	if err != nil {
		return x, err
	}
	s.cache.keep(key, x, tags, writes)
	return x, nil
}
