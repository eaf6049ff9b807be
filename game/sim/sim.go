// Package sim plays whole rounds of State Secrets with scripted players, on
// the real rules (game.Resolve and game.World.Advance) and a seeded Dice, to
// measure the game's balance: which strategy wins how often, how a player who
// checks in once a day fares, whether raiding pays.
//
// Nothing here touches a database: a Game holds the World a Store would load
// and the intel each faction has gathered, and applies actions and ticks the
// way the Store does. Results depend only on Config (and the rules), so a seed
// replays a table exactly.
package sim

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/statesecrets/server/game"
)

// SourcePrices are the base prices of the sources the first migration seeds
// (game/migrations/0002_sources.sql), in id order; a test checks they match.
var SourcePrices = []int{600, 500, 300, 800, 700, 200, 240, 400}

// Config is one batch of simulated rounds.
type Config struct {
	Rounds     int    // rounds to play; each is a fresh game
	Seed       uint64 // seeds the dice of every round (round i uses Seed, i)
	MinPlayers int    // players per game, drawn uniformly from MinPlayers..MaxPlayers
	MaxPlayers int
	RoundTicks int64 // ticks per round; 0 means a week of 10-minute ticks (1008)
	Strategies []Strategy
}

// Strategy is a scripted way to play: how often the player checks in and
// what it orders when it does.
type Strategy struct {
	Name string
	// Every is the ticks between two check-ins (12: every two hours at
	// 10-minute ticks; 144: once a day). Each player starts at a random offset.
	Every int64
	// Next returns the player's next order, or false to end the check-in.
	// It is called again after each order, refused or not, up to
	// maxOrders times per check-in.
	Next func(g *Game, me *game.Player) (game.Action, bool)
	// Params are the family member the strategy plays (Params.Strategy),
	// nil for a script of its own; Search starts from them.
	Params *Params
}

// maxOrders bounds one check-in, so a strategy that keeps asking for a
// refused order cannot loop.
const maxOrders = 60

// Game is one round being played: the world and each faction's dossiers.
type Game struct {
	World game.World
	Intel map[game.Faction]map[int64]Intel // what each faction knows of each player
	Rand  *rand.Rand
	plays []int // strategy index of each player, by World.Players index
	stole []int // Secrets each player stole, by World.Players index
	lost  []int // Secrets stolen from each player
	// lostSince is the Secrets stolen from each player since its last
	// check-in; raided, whether it attempted a theft at that check-in
	// (which ends its own protection, see game.AlertTicks).
	lostSince []int
	raided    []bool
	spied     map[spyKey]int64 // when a player last tried to spy on another

	Stats Stats
}

type spyKey struct{ spy, target int64 }

// Intel is a dossier: a snapshot of a player as of Tick.
type Intel struct {
	game.Player
	Tick int64
}

// Stats counts what happened in a round (summed over a Table's rounds,
// but for DailyMaxLoss, the most of any round).
type Stats struct {
	Steals      int `json:"steals"`
	StealWins   int `json:"steal_wins"`
	Spies       int `json:"spies"`
	SpyWins     int `json:"spy_wins"`
	Haggles     int `json:"haggles"`
	HaggleWins  int `json:"haggle_wins"`
	Rumors      int `json:"rumors"`
	Burns       int `json:"burns"` // sources burned by a deal
	Bids        int `json:"bids"`  // bids placed (or changed)
	Lots        int `json:"lots"`  // Secrets the broker sold
	LotDollars  int `json:"lot_dollars"`
	Traps       int `json:"traps"`        // traps set
	TrapsSprung int `json:"traps_sprung"` // by a thief going in blind
	Sweeps      int `json:"sweeps"`
	// DailyMaxLoss is the most Secrets a player who checks in once a day
	// lost to thieves between two of its check-ins: what its next
	// check-in had to answer. A check-in at which the player attempted a
	// theft, ending its own protection, does not count.
	DailyMaxLoss int `json:"daily_max_loss"`
}

// StealFailShare returns the share of steal attempts that failed, 0..1.
func (s Stats) StealFailShare() float64 { return share(s.Steals-s.StealWins, s.Steals) }

// BurnShare returns the share of haggles that burned their source, 0..1.
func (s Stats) BurnShare() float64 { return share(s.Burns, s.Haggles) }

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Cased reports whether me's side holds a dossier on target fresh enough
// (game.Cased) to steal from them without going in blind.
func (g *Game) Cased(me *game.Player, target int64) bool {
	in, ok := g.Intel[me.Faction][target]
	return ok && game.Cased(in.Tick, g.Tick())
}

// Robbed returns how many Secrets thieves took from me this round, as
// its feed told it (0 for a player outside a simulated round).
func (g *Game) Robbed(me *game.Player) int {
	if int(me.ID) > len(g.lost) || me.ID < 1 {
		return 0
	}
	return g.lost[me.ID-1]
}

// Tick returns the current tick.
func (g *Game) Tick() int64 { return g.World.Clock.Tick }

// Player returns the player with id.
func (g *Game) Player(id int64) *game.Player { return &g.World.Players[id-1] }

// act resolves a for me, as Store.Act would; it reports whether the rules took it.
func (g *Game) act(me *game.Player, a game.Action) bool {
	t := &game.Turn{Tick: g.Tick(), Actor: me, Rand: g.Rand}
	switch a.Kind {
	case game.Spy, game.Steal:
		t.Target = g.Player(a.TargetID)
		t.Cased = g.Cased(me, a.TargetID)
		t.Cheapest = game.Cheapest(g.World.Sources, g.Tick())
		t.Players = len(g.World.Players)
	case game.Haggle:
		t.Source = &g.World.Sources[a.SourceID-1]
	}
	before := *me
	var burned int64
	if t.Source != nil {
		burned = t.Source.BurnedUntil
	}
	res, err := game.Resolve(t, a)
	if err != nil {
		return false
	}
	st := &g.Stats
	switch a.Kind {
	case game.Spy:
		st.Spies++
	case game.Steal:
		st.Steals++
		if int(me.ID) <= len(g.raided) {
			g.raided[me.ID-1] = true
		}
		if me.Secrets > before.Secrets {
			st.StealWins++
			g.stole[me.ID-1]++
			g.lost[a.TargetID-1]++
			g.lostSince[a.TargetID-1]++
		}
		if res.Report.Trap {
			st.TrapsSprung++
		}
	case game.Haggle:
		st.Haggles++
		if me.Secrets > before.Secrets {
			st.HaggleWins++
		}
		if t.Source.BurnedUntil != burned {
			st.Burns++
		}
	case game.Rumor:
		st.Rumors++
	case game.Bid:
		st.Bids++
	case game.Trap:
		st.Traps++
	case game.Sweep:
		st.Sweeps++
	}
	if res.Intel {
		st.SpyWins++
		g.Intel[me.Faction][t.Target.ID] = Intel{Player: *t.Target, Tick: g.Tick()}
	}
	return true
}

// NewView is a Game as one player sees it, for a Strategy to choose that
// player's next order outside a simulation (game/bots plays the real
// server so): w holds what the player knows of the world (the clock, the
// sources, the players they have dossiers on) and intel their faction's
// dossiers; rng draws the strategy's chances. The caller keeps w up to
// date between calls of Next; the Game remembers whom the player spied
// on, as in a simulated round.
func NewView(w game.World, intel map[game.Faction]map[int64]Intel, rng *rand.Rand) *Game {
	if intel == nil {
		intel = map[game.Faction]map[int64]Intel{game.FBI: {}, game.MIB: {}}
	}
	return &Game{World: w, Intel: intel, Rand: rng, spied: map[spyKey]int64{}}
}

// newGame seats n players, alternating factions in a shuffled order, with
// strategies plays.
func newGame(plays []int, rng *rand.Rand, roundTicks int64) *Game {
	g := &Game{Rand: rng, plays: plays, stole: make([]int, len(plays)), lost: make([]int, len(plays)), lostSince: make([]int, len(plays)),
		raided: make([]bool, len(plays)),
		spied:  map[spyKey]int64{}, Intel: map[game.Faction]map[int64]Intel{game.FBI: {}, game.MIB: {}}}
	g.World.Clock = game.Clock{Round: 1, RoundTicks: roundTicks}
	for i := range plays {
		f := game.FBI
		if i%2 == 1 {
			f = game.MIB
		}
		p := game.NewPlayer(fmt.Sprintf("p%02d", i+1), f, 0)
		p.ID = int64(i + 1)
		g.World.Players = append(g.World.Players, p)
	}
	for i, price := range SourcePrices {
		g.World.Sources = append(g.World.Sources, game.Source{ID: int64(i + 1), Name: fmt.Sprintf("source %d", i+1),
			Secrets: game.SourceStartSecrets, Price: price, BasePrice: price})
	}
	return g
}

// Result is one player's end of a round.
type Result struct {
	Strategy int
	Rank     int // 1 is the winner
	Players  int // in the game
	Secrets  int
	Cash     int
	Stole    int // Secrets stolen by the player
	Lost     int // Secrets stolen from the player
	Faction  game.Faction
	Won      bool // their faction won the round
	// Champion: the player won the round, first with at least one Secret
	// and nobody sharing the place (game.RoundResult.Champion: of players
	// level on Secrets, one who bought a Secret at the round's last
	// auction places ahead): a shared first place is won by nobody.
	Champion bool
}

// play plays one round and returns each player's result, by player.
func (g *Game) play(strats []Strategy) []Result {
	n := len(g.World.Players)
	offsets := make([]int64, n)
	for i := range offsets {
		offsets[i] = g.Rand.Int64N(strats[g.plays[i]].Every)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	end := g.World.Clock.RoundEnd()
	for g.Tick() < end {
		g.Rand.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			s := strats[g.plays[i]]
			if (g.Tick()+offsets[i])%s.Every != 0 {
				continue
			}
			me := &g.World.Players[i]
			if s.Every >= daily && !g.raided[i] {
				g.Stats.DailyMaxLoss = max(g.Stats.DailyMaxLoss, g.lostSince[i])
			}
			g.lostSince[i], g.raided[i] = 0, false
			for range maxOrders {
				a, ok := endgame(g, me, s.Every)
				if !ok {
					a, ok = s.Next(g, me)
				}
				if !ok {
					break
				}
				g.act(me, a)
			}
		}
		if g.Tick()+1 >= end {
			break // the last tick would start a new round and reset everyone
		}
		g.advance()
	}
	rk := game.Rank(g.World.Players)
	winner, _ := rk.Winner()
	top := rk.Players[0].Secrets
	sole := top > 0 && (n == 1 || rk.Places[1] > 1) // a level top shares first place (game.Rank)
	out := make([]Result, n)
	for r, p := range rk.Players {
		i := p.ID - 1
		out[i] = Result{Strategy: g.plays[i], Rank: r + 1, Players: n, Secrets: p.Secrets, Cash: p.Cash,
			Stole: g.stole[i], Lost: g.lost[i], Faction: p.Faction,
			Won: p.Faction == winner, Champion: r == 0 && sole}
	}
	return out
}

// Row is one strategy's line of the table.
type Row struct {
	Strategy      string  `json:"strategy"`
	Seats         int     `json:"seats"`          // player-rounds played with this strategy
	Games         int     `json:"games"`          // rounds in which at least one player used it
	Wins          int     `json:"wins"`           // rounds won (first place, nobody level) by a player using it
	WinRate       float64 `json:"win_share"`      // Wins / Games
	TopHalf       float64 `json:"top_half"`       // share of seats finishing in the top half (2*rank <= players+1: an odd table's middle seat counts)
	MedianSecrets int     `json:"median_secrets"` // median final Secrets over its seats
	Stole         float64 `json:"stole"`          // Secrets stolen by a seat, on average
	Lost          float64 `json:"lost"`           // Secrets stolen from a seat, on average
	MeanCash      int     `json:"mean_cash"`      // cash left at the end, on average
}

// Table is the outcome of a batch: a row per strategy, in Config order.
type Table struct {
	Rounds int   `json:"rounds"`
	Rows   []Row `json:"rows"`
	Stats  Stats `json:"stats"` // summed over every round
}

// Run plays cfg.Rounds rounds. Each game seats every strategy once when it
// has room (shuffled), and fills the other seats with strategies drawn at
// random, so every strategy meets every other in most games.
func Run(cfg Config) Table {
	return run(cfg, func(rng *rand.Rand, n int) []int { return seats(rng, n, len(cfg.Strategies)) })
}

// seats draws the strategies of a table of n players from k: each once
// while there is room, the rest at random, shuffled.
func seats(rng *rand.Rand, n, k int) []int {
	plays := rng.Perm(k)
	for len(plays) < n {
		plays = append(plays, rng.IntN(k))
	}
	plays = plays[:n]
	rng.Shuffle(n, func(i, j int) { plays[i], plays[j] = plays[j], plays[i] })
	return plays
}

// run plays cfg.Rounds rounds, each seated by seat (the strategy index of
// each of n players, drawn from the round's rng).
func run(cfg Config, seat func(rng *rand.Rand, n int) []int) Table {
	if cfg.RoundTicks <= 0 {
		cfg.RoundTicks = 1008
	}
	k := len(cfg.Strategies)
	secrets := make([][]int, k)
	tab := Table{Rounds: cfg.Rounds, Rows: make([]Row, k)}
	for i, s := range cfg.Strategies {
		tab.Rows[i].Strategy = s.Name
	}
	for round := range cfg.Rounds {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(round)))
		n := cfg.MinPlayers + rng.IntN(cfg.MaxPlayers-cfg.MinPlayers+1)
		g := newGame(seat(rng, n), rng, cfg.RoundTicks)
		present := make([]bool, k)
		for _, r := range g.play(cfg.Strategies) {
			tab.Rows[r.Strategy].add(r)
			present[r.Strategy] = true
			secrets[r.Strategy] = append(secrets[r.Strategy], r.Secrets)
		}
		for i, ok := range present {
			if ok {
				tab.Rows[i].Games++
			}
		}
		addStats(&tab.Stats, g.Stats)
	}
	for i := range tab.Rows {
		tab.Rows[i].finish(secrets[i])
	}
	return tab
}

// add counts one seat's result in the row.
func (row *Row) add(r Result) {
	row.Seats++
	if r.Champion {
		row.Wins++
	}
	if 2*r.Rank <= r.Players+1 {
		row.TopHalf++
	}
	row.Stole += float64(r.Stole)
	row.Lost += float64(r.Lost)
	row.MeanCash += r.Cash
}

// finish turns the row's sums into shares and means; secrets are the
// final Secrets of its seats.
func (row *Row) finish(secrets []int) {
	if row.Games > 0 {
		row.WinRate = float64(row.Wins) / float64(row.Games)
	}
	if row.Seats > 0 {
		row.TopHalf /= float64(row.Seats)
		row.Stole /= float64(row.Seats)
		row.Lost /= float64(row.Seats)
		row.MeanCash /= row.Seats
		row.MedianSecrets = median(secrets)
	}
}

// advance applies a tick, counting what the broker sold.
func (g *Game) advance() {
	if !game.AuctionDue(g.World.Clock, g.Tick()+1) {
		g.World.Advance(g.Rand)
		return
	}
	before := slices.Clone(g.World.Players)
	g.World.Advance(g.Rand)
	for i, p := range g.World.Players {
		// b.Cash too: the round's last auction bids the cash (game.LastAuctionCashPercent).
		if b := before[i]; p.Secrets > b.Secrets {
			g.Stats.Lots++
			g.Stats.LotDollars += b.Cash + b.Bid - p.Cash - p.Bid
		}
	}
}

func addStats(sum *Stats, s Stats) {
	sum.Steals += s.Steals
	sum.StealWins += s.StealWins
	sum.Spies += s.Spies
	sum.SpyWins += s.SpyWins
	sum.Haggles += s.Haggles
	sum.HaggleWins += s.HaggleWins
	sum.Rumors += s.Rumors
	sum.Burns += s.Burns
	sum.Bids += s.Bids
	sum.Lots += s.Lots
	sum.LotDollars += s.LotDollars
	sum.Traps += s.Traps
	sum.TrapsSprung += s.TrapsSprung
	sum.Sweeps += s.Sweeps
	sum.DailyMaxLoss = max(sum.DailyMaxLoss, s.DailyMaxLoss)
}

func median(xs []int) int {
	sort.Ints(xs)
	return xs[len(xs)/2]
}

// Row returns the row of the strategy named name.
func (t Table) Row(name string) Row {
	i := slices.IndexFunc(t.Rows, func(r Row) bool { return r.Strategy == name })
	if i < 0 {
		return Row{}
	}
	return t.Rows[i]
}

// Print writes the table as Markdown.
func (t Table) Print(w io.Writer) {
	fmt.Fprintf(w, "%d rounds\n\n", t.Rounds)
	fmt.Fprintln(w, "| strategy | seats | games | wins | win rate | top half | median Secrets | stole | lost | cash left |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(b.WinRate, a.WinRate) })
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.0f%% | %.0f%% | %d | %.1f | %.1f | $%d |\n", r.Strategy, r.Seats, r.Games,
			r.Wins, 100*r.WinRate, 100*r.TopHalf, r.MedianSecrets, r.Stole, r.Lost, r.MeanCash)
	}
	s := t.Stats
	fmt.Fprintf(w, "\nsteals %d (%s failed), spies %d (%s won), haggles %d (%s won, %s burned the source), rumors %d, "+
		"Secrets sold by the broker %d (%s each on average), traps set %d (%d sprung), sweeps %d; "+
		"the most a once-a-day player lost between two check-ins: %d\n",
		s.Steals, pct(s.Steals-s.StealWins, s.Steals), s.Spies, pct(s.SpyWins, s.Spies), s.Haggles, pct(s.HaggleWins, s.Haggles),
		pctTenths(s.Burns, s.Haggles), s.Rumors, s.Lots, dollars(s.LotDollars, s.Lots), s.Traps, s.TrapsSprung, s.Sweeps, s.DailyMaxLoss)
}

func pctTenths(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func dollars(sum, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("$%d", sum/n)
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
}

// Names lists the strategies' names, comma-separated.
func Names(ss []Strategy) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}
