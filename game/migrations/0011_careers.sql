-- A player's career, which outlasts the round (game.Career): rounds
-- played to the end, rounds won, the best place (0: none yet) and the
-- medals of the first three places.
ALTER TABLE players ADD COLUMN rounds_played INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN rounds_won INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN best_place INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN gold INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN silver INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN bronze INTEGER NOT NULL DEFAULT 0;
