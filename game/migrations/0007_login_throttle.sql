-- login_failures count the failed logins behind the back-off of the next
-- attempt (logins.go), one row per key: "name <name>" for the attempts on
-- an account (a name, lowercase, whether or not anyone has it) from clients
-- it does not know, "client <name> <client>" for those of one client.
-- last_at is the last failure, nanoseconds since the Unix epoch; a row
-- whose last failure is older than the back-off's Forget is deleted.
CREATE TABLE login_failures (
	key      TEXT    PRIMARY KEY,
	failures INTEGER NOT NULL,
	last_at  INTEGER NOT NULL
);
CREATE INDEX login_failures_last_at ON login_failures (last_at);

-- login_clients are the clients (an address, or a device cookie's id) each
-- player logged in from, and when last: the account's back-off does not
-- delay them (logins.go).
CREATE TABLE login_clients (
	player_id INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	client    TEXT    NOT NULL,
	seen_at   INTEGER NOT NULL,
	PRIMARY KEY (player_id, client)
);
