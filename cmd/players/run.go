package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/bots"
	"github.com/statesecrets/server/internal/dblock"
	"github.com/statesecrets/server/internal/version"
	"github.com/statesecrets/server/loadtest"
)

// options are the command line's.
type options struct {
	prepare    int
	db         string
	tids       string
	register   bool
	url        string
	ramp       string
	rate       float64
	over, hold time.Duration
	window     time.Duration
	pageEvery  time.Duration
	orderEvery time.Duration
	seed       uint64
	timeout    time.Duration
	metrics    string
	label      string
	print      loadtest.PrintOptions // -json, -json-out, -html, -hgrm, -hlog, -threshold, -q
	out        string                // -out FILE: the request log
	stopWhen   stopWhen
	minWindows int
	arrival    loadtest.Arrival
	accounts   []string
	localAddrs int
	stopAfter  int
	cpuProfile string
	memProfile string
}

// stopWhen is the repeatable -stop-when flag.
type stopWhen []loadtest.Threshold

func (l *stopWhen) String() string { return fmt.Sprint(len(*l), " thresholds") }

func (l *stopWhen) Set(v string) error {
	t, err := loadtest.ParseThreshold(v)
	if err != nil {
		return err
	}
	*l = append(*l, t)
	return nil
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags parses and checks the command line.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := o.flagSet(stderr)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := o.check(fs); err != nil {
		return nil, err
	}
	return o, nil
}

// flagSet declares the flags on o.
func (o *options) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("players", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.prepare, "prepare", 0, "seed this `many` players into the -db (a fresh game) with a session each, print their tids one a line and exit")
	fs.StringVar(&o.db, "db", "", "the game's SQLite database `file`, for -prepare (before the server starts on it)")
	fs.StringVar(&o.tids, "tids", "", "play as the sessions in this `file` (a tid a line, from -prepare), user i taking line i")
	fs.BoolVar(&o.register, "register", false, "enlist each player (botNNNNN, a strong password) through the register form first")
	fs.StringVar(&o.ramp, "ramp", "0:100", "ramp `A:B`: A players at once, then up to B evenly over -over")
	fs.Float64Var(&o.rate, "rate", 0, "players arriving per `second` over -over, instead of -ramp")
	fs.DurationVar(&o.over, "over", 30*time.Second, "how long the arrivals last")
	fs.DurationVar(&o.hold, "hold", 0, "how long the run goes on after the last arrival")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the windows the run is cut into, for the timeline and -stop-when")
	fs.IntVar(&o.minWindows, "min-windows", 1, "-stop-when checks no window before this `many` (the first ones hold the start-up)")
	fs.DurationVar(&o.pageEvery, "page-every", bots.PageEvery, "mean think time between two page views")
	fs.DurationVar(&o.orderEvery, "order-every", bots.OrderEvery, "mean think time between two orders")
	fs.Uint64Var(&o.seed, "seed", 1, "seeds the players' think times and choices")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "bound on each request and each wait for an event")
	fs.StringVar(&o.metrics, "metrics", "", "the server's Prometheus `URL` (http://127.0.0.1:9190/metrics): its loop's figures per window and over the run")
	fs.StringVar(&o.label, "label", "loop", "the engine's `name` on the capacity line")
	o.print.AddFlags(fs)
	fs.StringVar(&o.out, "out", "", "write one JSON line per request of the players to `file` (start, latency_us, status, bytes, step, error)")
	fs.Var(&o.stopWhen, "stop-when", "STEP.METRIC OP VALUE checked on each window; the run ends at the first that fails and prints the capacity line; repeatable")
	fs.IntVar(&o.stopAfter, "stop-after", 1, "-stop-when ends the run after this `many` failing windows in a row (the capacity is before the first)")
	fs.IntVar(&o.localAddrs, "local-addrs", 0, "connect from this `many` loopback addresses, 127.0.0.2 and up, player i from the i-th (mod N):\nthe server limits what one address may hold (64 streams); 0: the system's choice")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the players (pprof) to `file`: where the load generator's own CPU goes")
	fs.StringVar(&o.memProfile, "memprofile", "", "write the players' allocations (pprof's allocs profile) to `file` at the end of the run")
	fs.BoolVar(&o.print.Quiet, "q", false, "print only the capacity line (with -stop-when)")
	return fs
}

// check checks the parsed flags and reads -tids.
func (o *options) check(fs *flag.FlagSet) error {
	if o.prepare > 0 {
		if o.db == "" {
			return usageError{"-prepare needs -db FILE"}
		}
		return nil
	}
	if o.prepare < 0 {
		return usageError{fmt.Sprintf("-prepare must be positive, got %d", o.prepare)}
	}
	if fs.NArg() != 1 {
		return usageError{"want one URL, the server's (http://127.0.0.1:8080)"}
	}
	o.url = strings.TrimSuffix(fs.Arg(0), "/")
	if o.localAddrs < 0 || o.localAddrs > 253 {
		return usageError{fmt.Sprintf("-local-addrs must be 0 to 253 (127.0.0.2 to 127.0.0.254), got %d", o.localAddrs)}
	}
	if (o.tids == "") == !o.register {
		return usageError{"give -tids FILE or -register (how players get into the game)"}
	}
	o.arrival = loadtest.Arrival{Rate: o.rate, Over: o.over}
	if o.rate == 0 {
		a, b, ok := strings.Cut(o.ramp, ":")
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return usageError{fmt.Sprintf("-ramp wants A:B, two numbers of players, got %q", o.ramp)}
		}
		o.arrival.From, o.arrival.To = from, to
	}
	if o.tids != "" {
		lines, err := readLines(o.tids)
		if err != nil {
			return usageError{"-tids: " + err.Error()}
		}
		if len(lines) < o.arrival.Users() {
			return usageError{fmt.Sprintf("-tids %s has %d sessions; the schedule brings %d players", o.tids, len(lines), o.arrival.Users())}
		}
		o.accounts = lines
	}
	return nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(stderr, "players:", err)
		}
		return 2
	}
	if o.prepare > 0 {
		if err := prepare(ctx, o, stdout); err != nil {
			fmt.Fprintln(stderr, "players:", err)
			return 1
		}
		return 0
	}
	var res *loadtest.UsersResult
	var cfg loadtest.UsersConfig
	err = profiled(o.cpuProfile, func() (err error) { res, cfg, err = play(ctx, o); return err })
	err = errors.Join(err, writeAllocs(o.memProfile))
	if err != nil {
		fmt.Fprintln(stderr, "players:", err)
		return 1
	}
	return loadtest.Print(res, o.printOptions(res, cfg, stdout, stderr))
}

// printOptions are the flags' print options for res, with the envelope's
// fields and, under -stop-when, the capacity line last.
func (o *options) printOptions(res *loadtest.UsersResult, cfg loadtest.UsersConfig, stdout, stderr io.Writer) loadtest.PrintOptions {
	p := o.print
	p.Program, p.Stdout, p.Stderr, p.Title = "players", stdout, stderr, "players: "+o.label
	p.StartedAt, p.Version, p.Settings = res.StartedAt, version.Get().String(), cfg.Settings()
	if len(o.stopWhen) > 0 {
		p.Summary = func(w io.Writer) error {
			report := "\n" + lesson.CapacityReport(o.label, res)
			if o.print.Quiet || o.print.JSON {
				report = ""
			}
			_, err := fmt.Fprintf(w, "%s%s\n", report, lesson.Capacity(o.label, res))
			return err
		}
	}
	return p
}

// profiled runs f, with a CPU profile written to path when path is set.
func profiled(path string, f func() error) error {
	if path == "" {
		return f()
	}
	pf, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	err = f()
	pprof.StopCPUProfile()
	return errors.Join(err, pf.Close())
}

// writeAllocs writes the allocations so far (pprof's allocs profile) to
// path, when it is set.
func writeAllocs(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	return errors.Join(err, f.Close())
}

// play runs the players as o says, writing -out's request log.
func play(ctx context.Context, o *options) (*loadtest.UsersResult, loadtest.UsersConfig, error) {
	cfg := loadtest.UsersConfig{URL: o.url, Arrival: o.arrival, Hold: o.hold, Seed: o.seed, Timeout: o.timeout,
		Window: o.window, StopWhen: o.stopWhen, BindAddrs: loopbacks(o.localAddrs), MinWindows: o.minWindows, StopAfter: o.stopAfter,
		MetricsURL: o.metrics, Timeline: o.print.HLog != "",
		Scenario: bots.Scenario(bots.Config{Account: o.account, PageEvery: o.pageEvery, OrderEvery: o.orderEvery})}
	if o.out == "" {
		res, err := loadtest.RunUsers(ctx, cfg)
		return res, cfg, err
	}
	f, err := os.Create(o.out)
	if err != nil {
		return nil, cfg, fmt.Errorf("-out: %w", err)
	}
	cfg.RequestLog = f
	res, err := loadtest.RunUsers(ctx, cfg)
	return res, cfg, errors.Join(err, f.Close())
}

// loopbacks are n loopback addresses from 127.0.0.2.
func loopbacks(n int) []netip.Addr {
	var out []netip.Addr
	for i := range n {
		out = append(out, netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}))
	}
	return out
}

// account is user id's way in.
func (o *options) account(id int) bots.Account {
	if o.accounts != nil {
		return bots.Account{TID: o.accounts[id%len(o.accounts)]}
	}
	f := game.FBI
	if id%2 == 1 {
		f = game.MIB
	}
	return bots.Account{Register: true, Name: fmt.Sprintf("bot%05d", id), Password: fmt.Sprintf("quasar-%d-tangerine-walrus", id), Faction: f}
}

// prepare seeds the players into a fresh game and prints a session id
// for each. It takes the database's lock first (internal/dblock), as the
// server does: beside a running server it is refused, naming its pid,
// before the store is opened (which would migrate and catch up ticks).
func prepare(ctx context.Context, o *options, stdout io.Writer) error {
	lock, err := dblock.Take(o.db, 1)
	if held := (*dblock.HeldError)(nil); errors.As(err, &held) {
		return fmt.Errorf("-prepare: -db %s: %v; nothing was changed: prepare before the server starts on it", o.db, err)
	} else if err != nil {
		return fmt.Errorf("-prepare: -db %s: %w", o.db, err)
	}
	defer lock.Close()
	store, err := game.Open(o.db, game.Options{MaxPlayers: 0})
	if err != nil {
		return err
	}
	defer store.Close()
	rk, err := store.Ranking(ctx)
	if err != nil {
		return err
	}
	first := int64(len(rk.Players)) + 1
	if _, err := store.Seed(ctx, o.prepare); err != nil {
		return fmt.Errorf("-prepare: %s", game.ErrorMessage(err))
	}
	w := bufio.NewWriter(stdout)
	for id := first; id < first+int64(o.prepare); id++ {
		s, err := store.CreateSession(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, s.ID)
	}
	return w.Flush()
}
