-- changes is the live pages' log: one row per thing a player's open page may
-- show without a reload, written in the transaction that caused it, so that
-- any process reading this database can feed its event streams from it and
-- a reconnecting browser can resume after the last id it saw. AUTOINCREMENT:
-- ids only grow, even after the oldest rows are pruned (tick.go, KeepChanges).
-- kind: feed (ref events.id, player_id set), news (ref events.id), post (ref
-- posts.id), tick (ref the new tick), source (ref sources.id).
CREATE TABLE changes (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	kind      TEXT    NOT NULL CHECK (kind IN ('feed', 'news', 'post', 'tick', 'source')),
	player_id INTEGER REFERENCES players (id) ON DELETE CASCADE,
	alert     INTEGER NOT NULL DEFAULT 0 CHECK (alert IN (0, 1)), -- a feed line about another player's action on this one
	ref       INTEGER NOT NULL,
	at        INTEGER NOT NULL
);
