-- players_ranking orders the players as the ranking does (Rank: Secrets, then
-- cash, both descending, then name), so a page of the ranking reads its own
-- rows and not every player's.
CREATE INDEX players_ranking ON players (secrets DESC, cash DESC, name COLLATE NOCASE);
