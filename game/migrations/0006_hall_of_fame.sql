-- rounds is the hall of fame: one row per finished round, written by the tick
-- that ends it. winner is the winning faction (NULL: level); the totals are
-- each faction's as the round ended.
CREATE TABLE rounds (
	round       INTEGER PRIMARY KEY,
	ended_tick  INTEGER NOT NULL,
	ended_at    INTEGER NOT NULL,
	winner      TEXT    CHECK (winner IS NULL OR winner IN ('FBI', 'MIB')),
	fbi_players INTEGER NOT NULL,
	fbi_secrets INTEGER NOT NULL,
	mib_players INTEGER NOT NULL,
	mib_secrets INTEGER NOT NULL
);

-- placings is each finished round's top ten (RoundTop), place 1 the round's
-- winner. The name and faction are copied, so the hall outlives renames and
-- deleted accounts (player_id then NULL).
CREATE TABLE placings (
	round     INTEGER NOT NULL REFERENCES rounds (round) ON DELETE CASCADE,
	place     INTEGER NOT NULL CHECK (place >= 1),
	player_id INTEGER REFERENCES players (id) ON DELETE SET NULL,
	name      TEXT    NOT NULL,
	faction   TEXT    NOT NULL CHECK (faction IN ('FBI', 'MIB')),
	secrets   INTEGER NOT NULL,
	cash      INTEGER NOT NULL,
	PRIMARY KEY (round, place)
) WITHOUT ROWID;

CREATE INDEX placings_player_id ON placings (player_id, round) WHERE player_id IS NOT NULL;

-- acted is 1 once the player has taken any action: headquarters shows a
-- first-visit guide until then.
ALTER TABLE players ADD COLUMN acted INTEGER NOT NULL DEFAULT 0 CHECK (acted IN (0, 1));
