-- The second week (issue 30): the broker's sealed bids (players.bid, set
-- aside from cash, and bid_tick, which breaks a tie for the earlier bid),
-- the defender's trap and counter-intelligence sweep, what a dossier
-- records of them, and what a report records of the roll's additions.
ALTER TABLE players ADD COLUMN bid INTEGER NOT NULL DEFAULT 0 CHECK (bid >= 0);
ALTER TABLE players ADD COLUMN bid_tick INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN trap INTEGER NOT NULL DEFAULT 0 CHECK (trap IN (0, 1));
ALTER TABLE players ADD COLUMN sweep_until INTEGER NOT NULL DEFAULT 0;
-- A thief's agents lie low for a while after a theft (game.StealCooldown).
ALTER TABLE players ADD COLUMN lie_low_until INTEGER NOT NULL DEFAULT 0;

-- The auction's tick reads only the bidders.
CREATE INDEX players_bid ON players (id) WHERE bid > 0;

ALTER TABLE intel ADD COLUMN bid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intel ADD COLUMN trap INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intel ADD COLUMN sweep_until INTEGER NOT NULL DEFAULT 0;

ALTER TABLE reports ADD COLUMN blind INTEGER NOT NULL DEFAULT 0 CHECK (blind IN (0, 1));
ALTER TABLE reports ADD COLUMN trap INTEGER NOT NULL DEFAULT 0 CHECK (trap IN (0, 1));
ALTER TABLE reports ADD COLUMN sweep INTEGER NOT NULL DEFAULT 0 CHECK (sweep IN (0, 1));
-- Before the trap and the sweep, a theft's defence above the target's
-- security was the blind thief's.
UPDATE reports SET blind = 1 WHERE kind = 'steal' AND defence > target_security;

-- Secrets cost twice what they did: with pay stopping at game.MaxCash, cash
-- buys Secrets a few at a time and runs out, so what to pay is a choice
-- every day (game/sim found the economy so). The sources of later rounds
-- reset to these prices.
UPDATE sources SET base_price = base_price * 2, price = price * 2;
