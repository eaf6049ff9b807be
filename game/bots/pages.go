package bots

import (
	"bytes"
	"strconv"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/sim"
)

// What a player reads off the game's pages (the markup of
// assets/templates, which live.js reads too): scanned, not parsed, so that
// thousands of players cost the load generator little.

// after returns what follows the first needle in b, nil if none.
func after(b []byte, needle string) []byte {
	i := bytes.Index(b, []byte(needle))
	if i < 0 {
		return nil
	}
	return b[i+len(needle):]
}

// leadingInt reads the whole number at the start of b, skipping a "$"
// and spaces; false when there is none.
func leadingInt(b []byte) (int, bool) {
	b = bytes.TrimLeft(b, " $")
	n, neg, i := 0, false, 0
	if len(b) > 0 && b[0] == '-' {
		neg, i = true, 1
	}
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// figure is a whole number a page or an event shows, after needle, and
// where the player keeps it: arrays of them, with their needles written
// out, read a page without a map or a string made per figure.
type figure struct {
	needle string
	to     *int
}

// readFigures reads each figure of fs off b; one b lacks is left alone.
func readFigures(b []byte, fs []figure) {
	for _, f := range fs {
		if n, ok := leadingInt(after(b, f.needle)); ok {
			*f.to = n
		}
	}
}

// readMasthead updates me from what every game page shows: the tick
// (body data-tick), AP, cash and Secrets in the masthead, and, on HQ,
// agents and security (each a data-live="name" element).
func readMasthead(b []byte, me *game.Player, clock *game.Clock) {
	if v := after(b, `data-tick="`); v != nil {
		if n, ok := leadingInt(v); ok {
			clock.Tick = int64(n)
		}
	}
	readFigures(b, []figure{{`data-live="ap">`, &me.AP}, {`data-live="cash">`, &me.Cash}, {`data-live="secrets">`, &me.Secrets},
		{`data-live="agents">`, &me.Agents}, {`data-live="security">`, &me.Security}})
}

// readName reads the player's name and faction off the masthead
// ("Agent <strong>NAME</strong> <span class="badge fbi">").
func readName(b []byte) (string, game.Faction) {
	v := after(b, `<div class="agent">Agent <strong>`)
	end := bytes.IndexByte(v, '<')
	if v == nil || end < 0 {
		return "", ""
	}
	f := game.FBI
	if bytes.HasPrefix(after(v, `class="badge `), []byte("mib")) {
		f = game.MIB
	}
	return string(v[:end]), f
}

// rows splits b at each occurrence of start (a table row's opening tag
// up to its id: `<tr data-source="`), returning each row's id and body.
func rows(b []byte, start string, each func(id int64, row []byte)) {
	for {
		v := after(b, start)
		if v == nil {
			return
		}
		id, ok := leadingInt(v)
		end := bytes.Index(v, []byte("</tr>"))
		if end < 0 {
			end = len(v)
		}
		if ok {
			each(int64(id), v[:end])
		}
		b = v[end:]
	}
}

// readSources reads the sources page: each source's stock, price, heat and
// burned state.
func readSources(b []byte, tick int64) []game.Source {
	var out []game.Source
	rows(b, `<tr data-source="`, func(id int64, row []byte) {
		s := game.Source{ID: id}
		var heat int // percent of BurnHeat
		readFigures(row, []figure{{`data-live="stock">`, &s.Secrets}, {`data-live="price">`, &s.Price}, {`data-live="heat">`, &heat}})
		s.Heat = heat * game.BurnHeat / 100
		s.BasePrice = s.Price
		if v := after(row, `class="burned"`); v != nil {
			if u, ok := leadingInt(after(v, "until tick ")); ok {
				s.BurnedUntil = int64(u)
			} else {
				s.BurnedUntil = tick + 1
			}
		}
		out = append(out, s)
	})
	return out
}

// readDossiers reads the dossiers page: the players of the other faction
// with what the dossier says of them.
func readDossiers(b []byte, theirs game.Faction) ([]game.Player, map[int64]sim.Intel) {
	var players []game.Player
	intel := map[int64]sim.Intel{}
	rows(b, `<tr data-player="`, func(id int64, row []byte) {
		p := game.Player{ID: id, Faction: theirs}
		readFigures(row, []figure{{`data-label="Secrets">`, &p.Secrets}, {`data-label="Cash">`, &p.Cash},
			{`data-label="Agents">`, &p.Agents}, {`data-label="Security">`, &p.Security}, {`data-label="AP">`, &p.AP}})
		if n, ok := leadingInt(after(row, `data-protected-until="`)); ok {
			p.ProtectedUntil = int64(n)
		}
		players = append(players, p)
		if n, ok := leadingInt(after(row, "intel of tick ")); ok {
			intel[id] = sim.Intel{Player: p, Tick: int64(n)}
		}
	})
	return players, intel
}

// figuresKey is the key of a player's standing as the live stream's
// "player" event shows it: name and Secrets (the event carries no cash,
// which is private); it names the write that brought the player there
// (see Player.order).
func figuresKey(buf []byte, name []byte, secrets int) []byte {
	buf = append(buf[:0], name...)
	buf = append(buf, '|')
	return strconv.AppendInt(buf, int64(secrets), 10)
}

// playerEventKey is figuresKey of a "player" event's data
// ({"id":7,"name":"x","faction":"FBI","secrets":3,...}), or nil when it is
// the player's own (not is its name) or malformed.
func playerEventKey(buf, data, not []byte) []byte {
	name := after(data, `"name":"`)
	end := bytes.IndexByte(name, '"')
	if end < 0 || bytes.Equal(name[:end], not) {
		return nil
	}
	secrets, ok := leadingInt(after(data, `"secrets":`))
	if !ok {
		return nil
	}
	return figuresKey(buf, name[:end], secrets)
}
