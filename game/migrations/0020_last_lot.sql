-- last_lot is 1 once the player bought a Secret at the round's last
-- auction: of players level on Secrets when the round ends, those who did
-- place ahead (game/world.go, Rank). A new round clears it.
ALTER TABLE players ADD COLUMN last_lot INTEGER NOT NULL DEFAULT 0 CHECK (last_lot IN (0, 1));
