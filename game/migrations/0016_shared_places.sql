-- shared_places: players level on Secrets share a place (game/world.go,
-- SharedPlaces), so a round's top may hold a place twice: seq, from 1,
-- orders it instead (by place, then who enlisted first). The places kept
-- before, given by name among level players, are shared again.
CREATE TABLE placings_shared (
	round     INTEGER NOT NULL REFERENCES rounds (round) ON DELETE CASCADE,
	seq       INTEGER NOT NULL CHECK (seq >= 1),
	place     INTEGER NOT NULL CHECK (place >= 1),
	player_id INTEGER REFERENCES players (id) ON DELETE SET NULL,
	name      TEXT    NOT NULL,
	faction   TEXT    NOT NULL CHECK (faction IN ('FBI', 'MIB')),
	secrets   INTEGER NOT NULL,
	cash      INTEGER NOT NULL,
	PRIMARY KEY (round, seq)
) WITHOUT ROWID;
INSERT INTO placings_shared (round, seq, place, player_id, name, faction, secrets, cash)
	SELECT round, place, 1 + (SELECT count(*) FROM placings o WHERE o.round = p.round AND o.secrets > p.secrets),
		player_id, name, faction, secrets, cash
	FROM placings p;
DROP TABLE placings;
ALTER TABLE placings_shared RENAME TO placings;
CREATE INDEX placings_player_id ON placings (player_id, round) WHERE player_id IS NOT NULL;
