-- reports: what decided each spy and steal order (game/report.go): both
-- sides as they stood, the odds and the dice. Names are copied so a report
-- reads the same after a rename; a deleted account takes its reports along.
CREATE TABLE reports (
	id              INTEGER PRIMARY KEY,
	tick            INTEGER NOT NULL,
	at              INTEGER NOT NULL,
	kind            TEXT    NOT NULL CHECK (kind IN ('spy', 'steal')),
	actor_id        INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	actor_name      TEXT    NOT NULL,
	actor_faction   TEXT    NOT NULL,
	actor_agents    INTEGER NOT NULL,
	actor_security  INTEGER NOT NULL,
	target_id       INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	target_name     TEXT    NOT NULL,
	target_faction  TEXT    NOT NULL,
	target_agents   INTEGER NOT NULL,
	target_security INTEGER NOT NULL,
	defence         INTEGER NOT NULL,
	odds            REAL    NOT NULL,
	attack_roll     INTEGER NOT NULL CHECK (attack_roll BETWEEN 1 AND 6),
	defence_roll    INTEGER NOT NULL CHECK (defence_roll BETWEEN 1 AND 6),
	success         INTEGER NOT NULL CHECK (success IN (0, 1))
);

CREATE INDEX reports_actor_id ON reports (actor_id, id);
CREATE INDEX reports_target_id ON reports (target_id, id);
