-- messages: private messages between two players (game/messages.go).
CREATE TABLE messages (
	id      INTEGER PRIMARY KEY,
	from_id INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	to_id   INTEGER NOT NULL REFERENCES players (id) ON DELETE CASCADE,
	body    TEXT    NOT NULL,
	at      INTEGER NOT NULL,
	read    INTEGER NOT NULL DEFAULT 0 CHECK (read IN (0, 1))
);

CREATE INDEX messages_to_id ON messages (to_id, from_id, id);
CREATE INDEX messages_from_id ON messages (from_id, to_id, id);

-- The unread counts the masthead shows: private messages, and posts on the
-- player's faction channel by others since the player last read the board.
ALTER TABLE players ADD COLUMN unread_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE players ADD COLUMN unread_faction INTEGER NOT NULL DEFAULT 0;
