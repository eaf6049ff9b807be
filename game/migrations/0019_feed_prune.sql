-- The tick's prune of the feeds (game/tick.go, histories) finds in each
-- feed that grew the newest line past KeepFeed: through events_player_id
-- it read every line's row to tell feed lines from the alerts of private
-- messages, about 14 us a feed, 45 ms of a tick at make capacity's pace
-- (BenchmarkTickAtPace, 10,000 players). This index holds the feed lines
-- alone, in the prune's own terms, so the prune reads no row to find its
-- cut.
CREATE INDEX events_feed ON events (player_id, id) WHERE player_id IS NOT NULL AND public = 0 AND from_id IS NULL;
