-- players_ranking orders the players as the ranking does (Rank: Secrets, then
-- cash, both descending, then name), so a page of the ranking reads its own
-- rows and not every player's; players_faction covers the faction totals, so
-- summing them reads an index of three small columns rather than every row.
CREATE INDEX players_ranking ON players (secrets DESC, cash DESC, name COLLATE NOCASE);
CREATE INDEX players_faction ON players (faction, secrets, cash);
