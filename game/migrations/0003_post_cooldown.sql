-- last_post_at (Unix nanoseconds, 0: never) is when the player last posted on
-- the board, for the posting cooldown (rules.go, PostCooldown). It lives on the
-- player, not in posts, because the tick prunes old posts.
ALTER TABLE players ADD COLUMN last_post_at INTEGER NOT NULL DEFAULT 0;
UPDATE players SET last_post_at = coalesce((SELECT max(at) FROM posts WHERE player_id = players.id), 0);
