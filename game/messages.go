package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// KeepMessages is how many private messages the tick keeps from each
// writer to each recipient; older ones are deleted. Kept per writer, so
// that no writer, however many messages it sends, removes what another
// wrote.
const KeepMessages = 200

// KeepMessageAlerts is how many alerts of private messages (the line on
// the recipient's wire for each) the tick keeps from each writer to each
// recipient, apart from the rest of the wire (KeepFeed lines): the latest
// messages of a conversation are on the Messages tab, and no writer pushes
// the other lines off a wire.
const KeepMessageAlerts = 3

// WireLines is how many lines of a player's wire its whole page shows, the
// newest first: the KeepFeed lines the tick keeps, and room for the
// alerts of messages from many writers (KeepMessageAlerts each).
const WireLines = 4 * KeepFeed

// PrivateMessage is one private message between two players.
type PrivateMessage struct {
	ID   int64
	From string // the sender's name
	To   string // the recipient's name
	Body string
	At   time.Time
	Read bool // the recipient has opened the conversation since
}

// Conversation is a player's exchange with one other player, as the
// inbox lists it.
type Conversation struct {
	With    Player         // ID, Name and Faction of the other player
	Last    PrivateMessage // the latest message either way
	Unread  int            // messages from With the player has not read
	Written int            // messages either way (kept)
}

// insertMessage keeps a message from one player to another and counts it
// unread for the recipient.
func insertMessage(ctx context.Context, tx *sql.Tx, from, to int64, body string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (from_id, to_id, body, at) VALUES (?, ?, ?, ?)`,
		from, to, body, unixNano(at)); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE players SET unread_messages = unread_messages + 1 WHERE id = ?`, to); err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	return nil
}

// Inbox returns the player's conversations, the latest first. From the
// read cache until a write changes it; do not modify the slice.
func (s *Store) Inbox(ctx context.Context, playerID int64) ([]Conversation, error) {
	return cached(ctx, s, cacheKey{kind: "inbox", id: playerID}, []tag{{tagInbox, playerID}}, func(ctx context.Context) ([]Conversation, error) {
		rows, err := s.db.QueryContext(ctx, `WITH mine AS (
				SELECT id, from_id, to_id, body, at, read,
					CASE WHEN from_id = ?1 THEN to_id ELSE from_id END AS other FROM messages
				WHERE from_id = ?1 OR to_id = ?1)
			SELECT o.id, o.name, o.faction, m.id, f.name, t.name, m.body, m.at, m.read,
				(SELECT count(*) FROM mine u WHERE u.other = o.id AND u.to_id = ?1 AND u.read = 0),
				(SELECT count(*) FROM mine u WHERE u.other = o.id)
			FROM mine m JOIN players o ON o.id = m.other JOIN players f ON f.id = m.from_id JOIN players t ON t.id = m.to_id
			WHERE m.id = (SELECT max(id) FROM mine l WHERE l.other = m.other)
			ORDER BY m.id DESC`, playerID)
		cs, err := collect(rows, err, func(row scanner) (*Conversation, error) {
			var c Conversation
			var at int64
			err := row.Scan(&c.With.ID, &c.With.Name, &c.With.Faction, &c.Last.ID, &c.Last.From, &c.Last.To, &c.Last.Body,
				&at, &c.Last.Read, &c.Unread, &c.Written)
			c.Last.At = fromNano(at)
			return &c, err
		})
		return cs, wrap("inbox", err)
	})
}

// Thread returns the messages between the player and the one called
// with, oldest first (the last KeepMessages from each at most), and marks
// those to the player read. Errors: ENOTFOUND for no such player.
func (s *Store) Thread(ctx context.Context, playerID int64, with string) (Player, []PrivateMessage, error) {
	var other Player
	err := s.db.QueryRowContext(ctx, `SELECT id, name, faction FROM players WHERE name = ?`, with).
		Scan(&other.ID, &other.Name, &other.Faction)
	if errors.Is(err, sql.ErrNoRows) {
		return Player{}, nil, Errorf(ENOTFOUND, "There is no agent called %q.", with)
	} else if err != nil {
		return Player{}, nil, wrap("thread", err)
	}
	var unread int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE to_id = ? AND from_id = ? AND read = 0`,
		playerID, other.ID).Scan(&unread); err != nil {
		return Player{}, nil, wrap("thread", err)
	}
	if unread > 0 {
		t := &touches{tags: []tag{{tagInbox, playerID}, {tagInbox, other.ID}}} // both see the messages read
		t.player(playerID)
		err := s.updateTouching(ctx, t, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET read = 1 WHERE to_id = ? AND from_id = ? AND read = 0`,
				playerID, other.ID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE players SET unread_messages =
				(SELECT count(*) FROM messages WHERE to_id = ?1 AND read = 0) WHERE id = ?1`, playerID)
			return err
		})
		if err != nil {
			return Player{}, nil, wrap("thread", err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, f.name, t.name, m.body, m.at, m.read FROM messages m
		JOIN players f ON f.id = m.from_id JOIN players t ON t.id = m.to_id
		WHERE (m.from_id = ?1 AND m.to_id = ?2) OR (m.from_id = ?2 AND m.to_id = ?1) ORDER BY m.id`, playerID, other.ID)
	msgs, err := collect(rows, err, func(row scanner) (*PrivateMessage, error) {
		var m PrivateMessage
		var at int64
		err := row.Scan(&m.ID, &m.From, &m.To, &m.Body, &at, &m.Read)
		m.At = fromNano(at)
		return &m, err
	})
	return other, msgs, wrap("thread", err)
}

// SeenFaction marks the player's faction channel read: UnreadFaction
// goes back to 0. A player with nothing unread costs no write.
func (s *Store) SeenFaction(ctx context.Context, p *Player) error {
	if p.UnreadFaction == 0 {
		return nil
	}
	t := &touches{}
	t.player(p.ID)
	err := s.updateTouching(ctx, t, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE players SET unread_faction = 0 WHERE id = ?`, p.ID)
		return err
	})
	return wrap("seen faction", err)
}
