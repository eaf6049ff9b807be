-- Times are INTEGER nanoseconds since the Unix epoch (UTC); ticks are INTEGER tick numbers.

CREATE TABLE players (
	id              INTEGER PRIMARY KEY,
	name            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
	faction         TEXT    NOT NULL CHECK (faction IN ('FBI', 'MIB')),
	password_hash   BLOB    NOT NULL,
	cash            INTEGER NOT NULL CHECK (cash >= 0),
	agents          INTEGER NOT NULL CHECK (agents >= 0),
	security        INTEGER NOT NULL CHECK (security >= 0),
	secrets         INTEGER NOT NULL CHECK (secrets >= 0),
	ap              INTEGER NOT NULL CHECK (ap >= 0),
	protected_until INTEGER NOT NULL,
	created_at      INTEGER NOT NULL
);

CREATE TABLE sessions (
	id         TEXT    PRIMARY KEY CHECK (length(id) = 32),
	player_id  INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX sessions_player_id ON sessions (player_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE sources (
	id           INTEGER PRIMARY KEY,
	name         TEXT    NOT NULL UNIQUE,
	description  TEXT    NOT NULL,
	secrets      INTEGER NOT NULL CHECK (secrets >= 0),
	price        INTEGER NOT NULL CHECK (price > 0),
	base_price   INTEGER NOT NULL CHECK (base_price > 0),
	heat         INTEGER NOT NULL CHECK (heat >= 0),
	burned_until INTEGER NOT NULL
);

-- intel is each player's latest successful look at another player (a dossier).
CREATE TABLE intel (
	player_id INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	target_id INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	cash      INTEGER NOT NULL,
	agents    INTEGER NOT NULL,
	security  INTEGER NOT NULL,
	secrets   INTEGER NOT NULL,
	ap        INTEGER NOT NULL,
	tick      INTEGER NOT NULL,
	at        INTEGER NOT NULL,
	PRIMARY KEY (player_id, target_id)
) WITHOUT ROWID;

CREATE INDEX intel_target_id ON intel (target_id);

-- events: player_id NULL with public = 1 is a news line; player_id set is a feed line.
CREATE TABLE events (
	id        INTEGER PRIMARY KEY,
	tick      INTEGER NOT NULL,
	at        INTEGER NOT NULL,
	player_id INTEGER REFERENCES players (id) ON DELETE CASCADE,
	public    INTEGER NOT NULL CHECK (public IN (0, 1)),
	text      TEXT    NOT NULL
);

CREATE INDEX events_player_id ON events (player_id, id) WHERE player_id IS NOT NULL;
CREATE INDEX events_public ON events (id) WHERE public = 1;

CREATE TABLE posts (
	id        INTEGER PRIMARY KEY,
	player_id INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	body      TEXT    NOT NULL,
	at        INTEGER NOT NULL
);

CREATE INDEX posts_player_id ON posts (player_id);

-- kv holds the clock (tick, round, round_start, last_tick) and Secret() values.
CREATE TABLE kv (
	key   TEXT PRIMARY KEY,
	value BLOB NOT NULL
) WITHOUT ROWID;
