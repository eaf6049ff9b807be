-- The ranking orders players by Secrets, then name (Rank): cash is private
-- (a dossier's) and breaks no tie, so the ranking's index and the faction
-- totals' no longer carry it.
DROP INDEX players_ranking;
CREATE INDEX players_ranking ON players (secrets DESC, name COLLATE NOCASE);
DROP INDEX players_faction;
CREATE INDEX players_faction ON players (faction, secrets);
