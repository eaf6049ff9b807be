-- seen_tick: the tick of the player's last visit to headquarters, for the
-- "while you were away" digest (game/digest.go); -1 before the first.
ALTER TABLE players ADD COLUMN seen_tick INTEGER NOT NULL DEFAULT -1;
