package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// maxConcurrency is ab's MAX_CONCURRENCY.
const maxConcurrency = 20000

// command is one form of the command line.
type command struct {
	name string
	urls int  // positional URLs wanted; -1 means one or more
	loop bool // a scenario of time-limited phases (hol, sweep): -n need not cover -c
	// sweep: -c takes a list of concurrencies
	sweep bool
}

var (
	plainCmd = command{name: "loadtest", urls: 1}
	gapCmd   = command{name: "loadtest gap", urls: 2}
	holCmd   = command{name: "loadtest hol", urls: 2, loop: true}
	sweepCmd = command{name: "loadtest sweep", urls: -1, loop: true, sweep: true}
)

// options are the parsed command line.
type options struct {
	cfg      loadtest.Config
	print    loadtest.PrintOptions // -json, -json-out, -html, -hgrm, -hlog, -threshold, gap's -brief
	urls     []string
	reqSet   bool // -n given
	postArg  string
	levels   []int   // sweep's -c list
	loadRate float64 // hol -load-rate: the load's open-loop rate (0: closed loop)
	out      string  // -out FILE: the request log
	version  bool    // -version
	title    string  // -title: the HTML report's title and scenario
}

// levelList is sweep's -c: concurrencies in increasing order, "1,2,4,8".
type levelList []int

func (l *levelList) String() string { return fmt.Sprint([]int(*l)) }

func (l *levelList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxConcurrency || (len(*l) > 0 && n <= (*l)[len(*l)-1]) {
			return fmt.Errorf("want increasing concurrencies from 1 to %d, e.g. 1,2,4,8", maxConcurrency)
		}
		*l = append(*l, n)
	}
	return nil
}

// statusList is -expect: HTTP statuses, "403,429".
type statusList []int

func (l *statusList) String() string { return fmt.Sprint([]int(*l)) }

func (l *statusList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 || n > 599 {
			return fmt.Errorf("want HTTP statuses from 100 to 599, e.g. 403,429, not %q", f)
		}
		*l = append(*l, n)
	}
	return nil
}

// maxBindAddrs bounds the addresses -B may list.
const maxBindAddrs = 1 << 16

// bindList is -B: local addresses, "127.0.0.2", "127.0.0.2,127.0.0.3" or
// a range "127.0.0.2-127.0.1.255", or a mix, comma-separated.
type bindList []netip.Addr

func (l *bindList) String() string { return fmt.Sprint(len(*l), " addresses") }

func (l *bindList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		first, last, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := netip.ParseAddr(first)
		if err != nil {
			return fmt.Errorf("want addresses or ranges (127.0.0.2-127.0.0.201), comma-separated: %q is not an address", first)
		}
		b := a
		if isRange {
			if b, err = netip.ParseAddr(last); err != nil || b.Is4() != a.Is4() || b.Less(a) {
				return fmt.Errorf("want a range FIRST-LAST of one family, FIRST <= LAST: %q", f)
			}
		}
		for ; a.IsValid() && !b.Less(a); a = a.Next() {
			if len(*l) == maxBindAddrs {
				return fmt.Errorf("more than %d addresses", maxBindAddrs)
			}
			*l = append(*l, a)
		}
	}
	return nil
}

// headerList is the repeatable -H flag.
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, ", ") }

func (h *headerList) Set(v string) error {
	if n, _, ok := strings.Cut(v, ":"); !ok || strings.TrimSpace(n) == "" {
		return errors.New(`want "Name: value"`)
	}
	*h = append(*h, v)
	return nil
}

// seconds is a time flag in seconds as ab's ("5", "0.5"), also taking Go
// durations ("500ms").
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil {
		return "0"
	}
	return strconv.FormatFloat(s.d.Seconds(), 'f', -1, 64)
}

func (s seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		*s.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return errors.New("want seconds (5, 0.5) or a duration (500ms)")
	}
	*s.d = d
	return nil
}

// newFlagSet declares ab's flags (and ours) on o.
func newFlagSet(cmd command, o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: loadtest [options] http[s]://host[:port]/path\n"+
			"       loadtest gap [options] STATIC_URL DYNAMIC_URL\n"+
			"       loadtest hol [-c N] [-k] [-t S] [-rate R] [-load-rate R] [options] STATIC_URL DYNAMIC_URL\n"+
			"       loadtest sweep [-k] [-t S] -c 1,2,4,...,256 [options] URL...\n"+
			"       loadtest explain [-machine V] gap|hol|sweep|storm|engines|machine|hol-scale ARGS...\n"+
			"       loadtest -version\n"+
			"Options (ab's, plus -rate, -warmup, -insecure, -json, -json-out, -metrics, -html, -hgrm, -hlog, -out and -threshold):\n")
		fs.PrintDefaults()
	}
	c := &o.cfg
	c.Timeout = loadtest.DefaultTimeout
	fs.IntVar(&c.Requests, "n", 0, "`requests` to perform (default 1, or 50000 with -t)")
	if cmd.sweep {
		o.levels = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
		fs.Var((*levelList)(&o.levels), "c", "sweep: `concurrencies`, increasing (default 1,2,4,...,256)")
	} else {
		fs.IntVar(&c.Concurrency, "c", 1, "`concurrency`: requests at a time, one connection each")
	}
	fs.Var(seconds{&c.TimeLimit}, "t", "time limit in `seconds` (implies -n 50000 unless -n is given)")
	fs.Var(seconds{&c.Timeout}, "s", "`seconds` a request may wait on the network")
	fs.Var(seconds{&c.Warmup}, "warmup", "`seconds` of load first, not measured (not in ab)")
	fs.BoolVar(&c.KeepAlive, "k", false, "keep-alive: HTTP/1.0 with Connection: Keep-Alive, as ab")
	fs.Var((*bindList)(&c.BindAddrs), "B", "local `address`es to connect from, each new connection the next in turn: 127.0.0.2, a list, or a range 127.0.0.2-127.0.0.201 (ab's -B takes one)")
	fs.Var((*headerList)(&c.Headers), "H", "extra `header` line, \"Name: value\" (repeatable)")
	fs.StringVar(&c.Method, "m", "", "request `method` (default GET, POST with -p)")
	fs.StringVar(&o.postArg, "p", "", "`file` holding the request body (POST)")
	fs.StringVar(&c.ContentType, "T", "", "Content-type of the -p body (default text/plain)")
	fs.BoolVar(&c.VariableLength, "l", false, "accept variable document length (no Length failures)")
	fs.BoolVar(&c.ContinueOnReceiveError, "r", false, "do not abort on receive errors")
	rateHelp := "open loop: `requests per second` in total on a fixed schedule, latency corrected for coordinated omission (wrk2's -R; not in ab)"
	if cmd.name == holCmd.name {
		rateHelp = "the probe's `requests per second` (open loop; default 100)"
		fs.Float64Var(&o.loadRate, "load-rate", 0, "hol: the load's `requests per second` in total, open loop over its -c connections (default: closed loop)")
	}
	fs.Float64Var(&c.Rate, "rate", 0, rateHelp)
	fs.BoolVar(&c.InsecureSkipVerify, "insecure", false, "https: accept any server certificate, as curl -k (-k is ab's keep-alive)")
	fs.BoolVar(&o.version, "version", false, "print loadtest's version and exit")
	fs.StringVar(&c.MetricsURL, "metrics", "", "the server's Prometheus metrics `URL`, scraped before and after each run for its loop's figures (not in ab)")
	if cmd.name == gapCmd.name {
		fs.BoolVar(&o.print.Brief, "brief", false, "gap: print the comparison table and the server loop's figures, not each page's ab report (not in ab)")
	}
	fs.StringVar(&o.out, "out", "", "write one JSON line per measured request to `file` (start, latency_us, status, bytes, step, error) (not in ab)")
	fs.StringVar(&o.title, "title", "", "the HTML report's `title` (default: loadtest and the command); hol: it also names the scenario\n"+
		"in place of \"Head-of-line blocking\" (not in ab)")
	fs.Var((*statusList)(&o.print.Expected), "expect", "non-2xx `statuses` the run expects, 403,429: the HTML report labels them expected (not in ab)")
	o.print.AddFlags(fs)
	return fs
}

// parseArgs parses args as ab does, flags before or after the URL(s), and
// checks them. wantURLs is how many positional arguments the command takes.
func parseArgs(cmd command, args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := newFlagSet(cmd, o, stderr)
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.urls = append(o.urls, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fs.Visit(func(f *flag.Flag) { o.reqSet = o.reqSet || f.Name == "n" })
	if o.version {
		return o, nil
	}
	if err := o.check(cmd); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd.name, err)
		fs.Usage()
		return nil, err
	}
	return o, nil
}

// check validates the options' values and reads the -p file.
func (o *options) check(cmd command) error {
	c := &o.cfg
	if cmd.sweep {
		c.Concurrency = o.levels[len(o.levels)-1]
	}
	switch {
	case cmd.urls < 0 && len(o.urls) == 0:
		return errors.New("want at least one URL argument")
	case cmd.urls >= 0 && len(o.urls) != cmd.urls:
		return fmt.Errorf("want %d URL argument(s), got %d", cmd.urls, len(o.urls))
	case c.Requests < 0 || (o.reqSet && c.Requests == 0):
		return fmt.Errorf("invalid -n %d: want at least 1 request", c.Requests)
	case c.Concurrency < 1 || c.Concurrency > maxConcurrency:
		return fmt.Errorf("invalid -c %d: want 1 to %d", c.Concurrency, maxConcurrency)
	case cmd.sweep && c.Rate != 0:
		return errors.New("invalid -rate: a sweep is closed-loop")
	case !cmd.loop && c.TimeLimit == 0 && max(c.Requests, 1) < c.Concurrency:
		return fmt.Errorf("invalid -c %d: more than the %d requests (-n)", c.Concurrency, max(c.Requests, 1))
	case c.Timeout == 0:
		return errors.New("invalid -s 0: want a positive timeout")
	case c.Rate < 0 || math.IsInf(c.Rate, 0) || math.IsNaN(c.Rate):
		return fmt.Errorf("invalid -rate %v: want requests per second above 0", c.Rate)
	case o.loadRate < 0 || math.IsInf(o.loadRate, 0) || math.IsNaN(o.loadRate):
		return fmt.Errorf("invalid -load-rate %v: want requests per second above 0", o.loadRate)
	}
	urls := o.urls
	if c.MetricsURL != "" {
		urls = append(urls[:len(urls):len(urls)], c.MetricsURL)
	}
	for _, u := range urls {
		if err := loadtest.CheckURL(u); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "loadtest: "))
		}
	}
	if o.postArg != "" {
		body, err := os.ReadFile(o.postArg)
		if err != nil {
			return fmt.Errorf("invalid -p: %w", err)
		}
		c.Body = body
	}
	return nil
}
