-- leases are named rights held by one process at a time until expires_at
-- (nanoseconds since the Unix epoch), renewed by their holder: the tick
-- scheduler of several worker processes on one database (lease.go).
CREATE TABLE leases (
	name       TEXT    PRIMARY KEY,
	holder     TEXT    NOT NULL,
	expires_at INTEGER NOT NULL
);

-- rate_buckets are token buckets shared by every process on the database,
-- kept as when each is full again (GCRA): the login and register limit per
-- client address when several workers serve (limits.go). A bucket full by
-- now is the same as none, and is deleted.
CREATE TABLE rate_buckets (
	key     TEXT    PRIMARY KEY,
	full_at INTEGER NOT NULL
);
CREATE INDEX rate_buckets_full_at ON rate_buckets (full_at);
