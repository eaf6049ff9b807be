-- flood_limits: what keeps one player from flooding another's data away.
-- messages_full_at (Unix nanoseconds, 0: whole) is when the player's
-- allowance of private messages is whole again (rules.go, MessageBurst and
-- MessageEvery).
ALTER TABLE players ADD COLUMN messages_full_at INTEGER NOT NULL DEFAULT 0;
-- from_id is, for the alert of a private message on its recipient's wire,
-- its writer (NULL for every other line): the tick keeps the newest
-- KeepMessageAlerts of each writer apart from the rest of the wire
-- (game/tick.go), so that no writer pushes other lines off it.
ALTER TABLE events ADD COLUMN from_id INTEGER;
CREATE INDEX events_from_id ON events (player_id, from_id, id) WHERE from_id IS NOT NULL;
-- Each channel of the board (the public one, each side's) keeps its own
-- KeepPosts, pruned apart.
CREATE INDEX posts_channel ON posts (faction, id);
