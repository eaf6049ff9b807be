-- unread_pruned: the masthead's unread count loses the unread messages the
-- tick's prune deletes (a recipient's past the newest KeepMessages,
-- game/tick.go), which no page can show or mark read any more; and counts
-- kept too high by prunes before this migration are counted again.
CREATE TRIGGER messages_unread_deleted AFTER DELETE ON messages WHEN old.read = 0
BEGIN
	UPDATE players SET unread_messages = unread_messages - 1 WHERE id = old.to_id;
END;
UPDATE players SET unread_messages = (SELECT count(*) FROM messages WHERE to_id = players.id AND read = 0);
