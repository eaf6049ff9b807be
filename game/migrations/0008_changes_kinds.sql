-- changes without the CHECK on kind: the kinds grow with the live pages
-- (player: a player's standing as the ranking shows it, ref players.id), and
-- the code that reads the log refuses a kind it does not know
-- (game/changes.go, scanChangeHead), so a new kind needs no new table.
-- SQLite cannot drop a constraint: the table is copied, and its
-- AUTOINCREMENT counter with it, so that ids keep growing past any ever
-- handed out (a browser's Last-Event-ID must never point ahead of the log).
CREATE TABLE changes_new (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	kind      TEXT    NOT NULL,
	player_id INTEGER REFERENCES players (id) ON DELETE CASCADE,
	alert     INTEGER NOT NULL DEFAULT 0 CHECK (alert IN (0, 1)), -- a feed line the player's open pages raise as an alert
	ref       INTEGER NOT NULL,
	at        INTEGER NOT NULL
);
INSERT INTO changes_new (id, kind, player_id, alert, ref, at) SELECT id, kind, player_id, alert, ref, at FROM changes;
DELETE FROM sqlite_sequence WHERE name = 'changes_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'changes_new', seq FROM sqlite_sequence WHERE name = 'changes';
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
