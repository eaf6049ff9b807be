-- A dossier shows the latest look of the viewer's faction at each player:
-- with the intel of each target in the order of its looks, the dossiers
-- page (50 rows) and a theft's check of its case (cased) read a target's
-- newest rows first and stop at the first of the faction, instead of
-- reading and sorting every look at the target (issue 29: the dossiers
-- were a quarter of the server's CPU under make capacity). It begins with
-- target_id, as the index it replaces did.
CREATE INDEX intel_target_latest ON intel (target_id, tick DESC, at DESC);
DROP INDEX intel_target_id;
