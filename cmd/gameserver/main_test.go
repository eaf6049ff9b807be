package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
)

var servingAddr = regexp.MustCompile(`msg=serving addr=(\S+)`)

// program is the whole command running in-process, as main runs it.
type program struct {
	base   string // http://127.0.0.1:PORT
	stderr *testkit.LogBuffer
	stop   func() error // cancels run's context (as SIGTERM does) and returns run's error
}

// startProgram runs the command with args plus -addr 127.0.0.1:0 and waits
// until it serves.
func startProgram(t *testing.T, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stderr: &testkit.LogBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), io.Discard, p.stderr)
	}()
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = p.stop() })
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			require.FailNow(t, "gameserver stopped before serving", "err %v, log:\n%s", err, p.stderr)
		default:
		}
		m := servingAddr.FindStringSubmatch(p.stderr.String())
		if m == nil {
			return false
		}
		p.base = "http://" + m[1]
		return true
	}, 20*time.Second, 10*time.Millisecond, "no serving line in the log")
	return p
}

// mustNewPlayer runs `gameserver -db DB -new-player NAME` and returns the tid it prints.
func mustNewPlayer(t *testing.T, db, name string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-db", db, "-new-player", name}, &out, io.Discard))
	tid := strings.TrimSpace(out.String())
	require.Regexp(t, `^[0-9a-f]{32}$`, tid)
	return tid
}

// besideStore opens a Store of the test's own on db, beside the server
// that owns it, as another process writing the game would (the program's
// own commands that write are refused beside a server): closed with the
// test.
func besideStore(t *testing.T, db string) *game.Store {
	t.Helper()
	s, err := game.Open(db, game.Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"-tick", "0"}, "-tick must be at least 100ms, got 0s"},
		{[]string{"-tick", "-5s"}, "-tick must be at least 100ms"},
		{[]string{"-tick", "1ns"}, "-tick must be at least 100ms, got 1ns"},
		{[]string{"-tick", "99ms"}, "-tick must be at least 100ms"},
		{[]string{"-tick", "soon"}, "-tick"},
		{[]string{"-round", "-1"}, "-round must be 0"},
		{[]string{"-round", "9223372036854775807"}, "-round must last at most 100 years of -tick 10m0s: at most 5256000 ticks"},
		{[]string{"-tick", "1s", "-round", "3153600001"}, "at most 3153600000 ticks, got 3153600001"},
		{[]string{"-max-players", "-2"}, "-max-players must be 0"},
		{[]string{"-nope"}, "-nope"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-db", ""}, "-db must name a file, got an empty name"},
		{[]string{"-db", ":memory:"}, "-db must name a file: :memory:"},
		{[]string{"-db", "file:ss.db?mode=memory"}, "-db must be a plain file name, not a URI"},
		{[]string{"-db", "FILE:ss.db"}, "-db must be a plain file name, not a URI"},
		{[]string{"-backup", ""}, "-backup must name a file, got an empty name"},
		{[]string{"-backup", ":memory:"}, "-backup must name a file: :memory:"},
		{[]string{"-backup", "file:/tmp/b.db"}, "-backup must be a plain file name, not a URI"},
		{[]string{"-backup", "x.db-journal"}, "-backup x.db-journal: SQLite takes a name ending -journal for a file of the database x.db"},
		{[]string{"-backup", "/srv/backups/live.db-wal"}, "-backup /srv/backups/live.db-wal: SQLite takes a name ending -wal for a file of the database /srv/backups/live.db"},
		{[]string{"-backup", "b.db-shm"}, "-backup b.db-shm: SQLite takes a name ending -shm"},
		{[]string{"-db", "ss.db-wal"}, "-db ss.db-wal: SQLite takes a name ending -wal"},
		{[]string{"-faction", "MIB"}, "-faction applies only with -new-player"},
		{[]string{"-engine", "apache"}, `-engine must be loop or nethttp, got "apache"`},
		{[]string{"-max-conns", "-1"}, "-max-conns must not be negative"},
		{[]string{"-max-conns", "many"}, "-max-conns"},
		{[]string{"-max-conns-per-addr", "-1"}, "-max-conns-per-addr must not be negative"},
		{[]string{"-hash-on-loop", "-workers", "2"}, "-hash-on-loop: teaching switches want -workers 1"},
		{[]string{"-no-read-cache", "-workers", "0"}, "-no-read-cache: teaching switches want -workers 1"},
		{[]string{"-seed-players", "-3"}, "-seed-players must be positive"},
		{[]string{"-seed-players", "5", "-new-player", "x"}, "-seed-players goes with neither"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Ensure a bad command line is a usage error naming the flag, before anything is created.
			dir := t.TempDir()
			err := run(context.Background(), append(tc.args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard)
			require.Error(t, err)
			assert.True(t, errors.As(err, new(usageError)), "want a usageError, got %T %v", err, err)
			assert.Contains(t, err.Error(), tc.want)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries)
		})
	}
}

func TestVersionFlag(t *testing.T) {
	// Ensure -version prints the build's one line and creates nothing.
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-version", "-db", filepath.Join(dir, "ss.db")}, &out, io.Discard))
	assert.Regexp(t, `^gameserver \S+ \(revision \S+, go[0-9.]+\S*\)\n$`, out.String())
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

func TestNewPlayerRejectsBadFaction(t *testing.T) {
	// Ensure -faction is validated with a message naming the flag.
	db := filepath.Join(t.TempDir(), "ss.db")
	err := run(context.Background(), []string{"-db", db, "-new-player", "agent", "-faction", "CIA"}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-faction")
}

func TestRefusedRunCreatesNothing(t *testing.T) {
	// Ensure a run refused for a bad -addr, an unknown -faction or a port
	// in use (-addr's or -metrics-addr's) leaves no database, lock or
	// folder behind in the -db folder.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool // a usageError: exit status 2
	}{
		{[]string{"-addr", "nohost"}, `-addr must be host:port (e.g. 127.0.0.1:8080, :8080), got "nohost"`, true},
		{[]string{"-metrics-addr", "9190"}, `-metrics-addr must be host:port (e.g. 127.0.0.1:9190), got "9190"`, true},
		{[]string{"-faction", "CIA", "-new-player", "bob"}, `-faction: unknown faction "CIA": choose FBI or MIB.`, true},
		{[]string{"-new-player", "b"}, `-new-player: a name needs 3 to 20 characters; "b" has 1.`, true},
		{[]string{"-addr", busy.Addr().String()}, "-addr", false},
		{[]string{"-addr", busy.Addr().String(), "-workers", "2"}, "-addr", false},
		{[]string{"-addr", "127.0.0.1:0", "-metrics-addr", busy.Addr().String()}, "-metrics-addr", false},
		{[]string{"-addr", "127.0.0.1:0", "-access-log", filepath.Join(t.TempDir(), "no", "such", "a.log")}, "-access-log", false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-db", filepath.Join(dir, "data", "x.db")}, tc.args...)
			err := run(context.Background(), args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.usage, errors.As(err, new(usageError)), "usage error (exit 2): %v", err)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "the refused run created files")
		})
	}
}

func TestRefusedRunRemovesItsAccessLog(t *testing.T) {
	// Ensure a run refused after it opened its access log (here for a
	// malformed cookie key) removes the log file it created, and leaves
	// one that was there before.
	t.Setenv("STATESECRETS_HASH_KEY", "not a key")
	dir := t.TempDir()
	for _, existed := range []bool{false, true} {
		log := filepath.Join(dir, "access.log")
		if existed {
			require.NoError(t, os.WriteFile(log, []byte("earlier\n"), 0o600))
		}
		err := run(context.Background(), []string{"-db", filepath.Join(dir, "data", "x.db"), "-addr", "127.0.0.1:0",
			"-access-log", log}, io.Discard, io.Discard)
		require.ErrorContains(t, err, "STATESECRETS_HASH_KEY")
		entries, _ := os.ReadDir(dir)
		if !existed {
			assert.Empty(t, entries, "the refused run left files")
			continue
		}
		got, err := os.ReadFile(log)
		require.NoError(t, err)
		assert.Equal(t, "earlier\n", string(got))
		require.Len(t, entries, 1, "the refused run left files")
	}
}

func TestRefusedWorkersRunCreatesNothing(t *testing.T) {
	// Ensure a supervisor (-workers 2) refuses, as a lone server does, a
	// malformed cookie key or an access log it cannot open before it
	// creates the database, its lock or its folder: not after, in every
	// worker it starts.
	for _, tc := range []struct {
		name string
		key  string
		args []string
		want string
	}{
		{"key", "not a key", nil, "STATESECRETS_HASH_KEY"},
		{"access-log", "", []string{"-access-log", filepath.Join(t.TempDir(), "no", "such", "a.log")}, "-access-log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STATESECRETS_HASH_KEY", tc.key)
			dir := t.TempDir()
			args := append([]string{"-db", filepath.Join(dir, "data", "x.db"), "-addr", "127.0.0.1:0", "-workers", "2"}, tc.args...)
			err := run(context.Background(), args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "the refused run created files")
		})
	}
}

func TestServeAndShutdown(t *testing.T) {
	// Ensure the program creates its database folder on first start, serves
	// the front page and a tid page, and stops cleanly when signalled.
	db := filepath.Join(t.TempDir(), "data", "statesecrets.db")
	tid := mustNewPlayer(t, db, "mulder")
	p := startProgram(t, "-db", db, "-access-log", "-")

	resp, body := get(t, p.base+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "State Secrets")

	resp, body = get(t, p.base+"/game?function=hq&tid="+tid)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, p.base+"/game?function=news&t%69d="+tid) // the query parser decodes the name
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "mulder")
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))

	// No form is larger than handlers.MaxFormBytes, so the loop refuses a
	// larger body from its declared length, before reading it.
	resp, err := http.Post(p.base+"/login", "application/x-www-form-urlencoded",
		strings.NewReader(strings.Repeat("a", 100<<10)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain", "the loop's 413, not the handlers' page")
	assert.True(t, resp.Close, "the loop closes after refusing a body")

	require.NoError(t, p.stop())
	assert.FileExists(t, db)
	assert.Regexp(t, `"GET /game\?function=hq&tid=REDACTED HTTP/1.1" 200 \d+`, p.stderr.String(), "access log line")
	assert.NotContains(t, p.stderr.String(), tid, "a session id is a credential: never logged")
	assert.Contains(t, p.stderr.String(), "shutting down")
}

func TestTicks(t *testing.T) {
	// Ensure the game clock advances on the server's loop at the -tick
	// interval: headquarters shows the tick count growing.
	db := filepath.Join(t.TempDir(), "ss.db")
	tid := mustNewPlayer(t, db, "skinner")
	p := startProgram(t, "-db", db, "-tick", "200ms")
	tickN := regexp.MustCompile(`Tick <span data-live="tick">(\d+)</span> of round`)
	require.Eventually(t, func() bool {
		_, body := get(t, p.base+"/game?function=hq&tid="+tid)
		m := tickN.FindStringSubmatch(body)
		return m != nil && len(m[1]) > 0 && m[1] != "0" && m[1] != "1"
	}, 15*time.Second, 50*time.Millisecond, "the tick count never passed 1")
}

func TestBackupWhileServing(t *testing.T) {
	// Ensure -backup copies the database while the server serves it and other
	// writers go on, that the copy holds every player acknowledged before the
	// backup began, that a server started on the copy (a restore) lets them
	// in, and that an existing file is never overwritten.
	dir := t.TempDir()
	db := filepath.Join(dir, "live", "statesecrets.db")
	mustNewPlayer(t, db, "skinner")
	p := startProgram(t, "-db", db, "-tick", "100ms") // ticks write too

	// Another writer on the database meanwhile (-new-player is refused
	// while the server runs).
	writer := besideStore(t, db)
	var mu sync.Mutex
	acked := map[string]string{} // tid -> name, for every player whose session was committed
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			name := fmt.Sprintf("agent%03d", i)
			pl, err := writer.Register(context.Background(), name, "trust-no-one", game.FBI)
			if err != nil {
				done <- err
				return
			}
			sess, err := writer.CreateSession(context.Background(), pl.ID)
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked[sess.ID] = name
			mu.Unlock()
		}
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 2 }, time.Minute, 5*time.Millisecond)
	mu.Lock()
	before := maps.Clone(acked)
	mu.Unlock()

	dest := filepath.Join(dir, "backup.db")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-db", db, "-backup", dest}, &out, io.Discard))
	assert.Regexp(t, `^backed up .+ to .+backup\.db \(\d+ bytes\)\n$`, out.String())
	close(stop)
	require.NoError(t, <-done)
	resp, _ := get(t, p.base+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the server served throughout")

	err := run(context.Background(), []string{"-db", db, "-backup", dest}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-backup")
	assert.Contains(t, err.Error(), "exists")
	require.NoError(t, p.stop())

	// Restore: the copy is an ordinary database file; serve it.
	restored := filepath.Join(dir, "restored", "statesecrets.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(restored), 0o755))
	buf, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(restored, buf, 0o600))
	r := startProgram(t, "-db", restored)
	for tid, name := range before {
		resp, body := get(t, r.base+"/game?function=hq&tid="+tid)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "player %s, acknowledged before the backup", name)
		assert.Contains(t, body, name)
	}
}

func TestBackupFlags(t *testing.T) {
	// Ensure -backup refuses a missing database (creating nothing) and -new-player beside it.
	dir := t.TempDir()
	err := run(context.Background(), []string{"-db", filepath.Join(dir, "none.db"), "-backup", filepath.Join(dir, "b.db")}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-backup")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)

	err = run(context.Background(), []string{"-db", filepath.Join(dir, "x.db"), "-backup", "b.db", "-new-player", "x"}, io.Discard, io.Discard)
	assert.True(t, errors.As(err, new(usageError)), "got %v", err)
}

var metricsAddr = regexp.MustCompile(`msg=metrics addr=(\S+)`)

func TestMetricsAddr(t *testing.T) {
	// Ensure -metrics-addr serves Prometheus text on its own address, with
	// the loop's figures and the game's, and the game's port does not.
	db := filepath.Join(t.TempDir(), "ss.db")
	mustNewPlayer(t, db, "frohike")
	p := startProgram(t, "-db", db, "-metrics-addr", "127.0.0.1:0")
	m := metricsAddr.FindStringSubmatch(p.stderr.String())
	require.NotNil(t, m, "no metrics line in the log:\n%s", p.stderr)
	get(t, p.base+"/")

	// The loop publishes its counters at the end of each turn: a scrape
	// may land just before the turn that served "/" ends.
	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		resp, body := get(t, "http://"+m[1]+"/metrics")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		families = testkit.ParseMetrics(t, strings.NewReader(body))
		f := families["gameserver_requests_total"]
		return f != nil && f.Metric[0].GetCounter().GetValue() >= 1
	}, 5*time.Second, 10*time.Millisecond, "the request to / is counted")
	for _, name := range []string{"gameserver_loop_busy_seconds_total", "statesecrets_players", "process_resident_memory_bytes"} {
		assert.Contains(t, families, name)
	}
	assert.Equal(t, 1.0, families["statesecrets_players"].Metric[0].GetGauge().GetValue())

	resp, _ := get(t, p.base+"/metrics")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "never on the game's port")
}

func TestEngines(t *testing.T) {
	// Ensure both engines serve the game: pages, ticks (run by the
	// engine's timers), an event stream fed by the live-page poll, and
	// metrics; and that a graceful shutdown ends the open stream instead
	// of waiting for it.
	for _, engine := range []string{"loop", "nethttp"} {
		t.Run(engine, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "ss.db")
			tid := mustNewPlayer(t, db, "langly")
			p := startProgram(t, "-db", db, "-engine", engine, "-tick", "200ms", "-metrics-addr", "127.0.0.1:0", "-access-log", "-")
			assert.Contains(t, p.stderr.String(), "engine="+engine)

			resp, body := get(t, p.base+"/")
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, body, "State Secrets")

			resp, err := http.Get(p.base + "/game/events?tid=" + tid)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			events := make(chan string, 100)
			streamEnded := make(chan error, 1)
			go func() {
				r := bufio.NewReader(resp.Body)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						streamEnded <- err
						return
					}
					select {
					case events <- strings.TrimSpace(line):
					default: // never block the stream: only the first lines matter
					}
				}
			}()
			// Ticks run on the engine's timer, and the live poll (also a
			// timer) sends each one to the open stream.
			deadline := time.After(15 * time.Second)
			for ticked := false; !ticked; {
				select {
				case line := <-events:
					ticked = line == "event: tick"
				case <-deadline:
					require.FailNow(t, "no tick event on the stream")
				}
			}
			tickN := regexp.MustCompile(`Tick <span data-live="tick">(\d+)</span> of round`) // as TestTicks
			_, body = get(t, p.base+"/game?function=hq&tid="+tid)
			m := tickN.FindStringSubmatch(body)
			require.NotNil(t, m, "no tick count on HQ")
			assert.NotEqual(t, "0", m[1])

			mm := metricsAddr.FindStringSubmatch(p.stderr.String())
			require.NotNil(t, mm, "no metrics line in the log:\n%s", p.stderr)
			// Both engines count connections, requests and responses (the
			// loop publishes at the end of a turn: wait for the HQ page's).
			var families map[string]*dto.MetricFamily
			require.Eventually(t, func() bool {
				families = scrapeFamilies(t, "http://"+mm[1]+"/metrics")
				return sample(families, "gameserver_responses_total", "code", "2xx") >= 2
			}, 5*time.Second, 10*time.Millisecond, "the front page and HQ counted as 2xx")
			assert.Equal(t, 1.0, sample(families, "statesecrets_players"))
			assert.GreaterOrEqual(t, sample(families, "gameserver_requests_total"), 3.0, "/, the stream and HQ")
			assert.GreaterOrEqual(t, sample(families, "gameserver_connections_accepted_total"), 1.0)
			assert.GreaterOrEqual(t, sample(families, "gameserver_connections_open"), 1.0, "the stream's")
			assert.Greater(t, sample(families, "gameserver_written_bytes_total"), 1000.0)
			assert.Greater(t, sample(families, "gameserver_read_bytes_total"), 100.0)
			assert.GreaterOrEqual(t, sample(families, "statesecrets_request_duration_seconds_count", "route", "GET /game"), 1.0)
			if engine == "nethttp" {
				assert.NotContains(t, families, "gameserver_loop_turns_total", "no loop: absent, not zero")
			} else {
				assert.Greater(t, sample(families, "gameserver_loop_turns_total"), 0.0)
			}

			start := time.Now()
			require.NoError(t, p.stop())
			assert.Less(t, time.Since(start), shutdownGrace, "shutdown waited for the stream")
			select {
			case err := <-streamEnded:
				assert.ErrorIs(t, err, io.EOF, "the stream ends cleanly")
			case <-time.After(5 * time.Second):
				assert.Fail(t, "the stream outlived the server")
			}
			assert.Regexp(t, `"GET / HTTP/1.1" 200 \d+`, p.stderr.String(), "access log line")
		})
	}
}

// scrapeFamilies reads url's Prometheus text.
func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := get(t, url)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	return testkit.ParseMetrics(t, strings.NewReader(body))
}

// sample is the value of the sample of family name (a counter, gauge or
// a histogram's _count, named so) whose labels include the given
// name-value pairs; NaN when there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	family, suffix := families[name], ""
	if family == nil {
		if base, ok := strings.CutSuffix(name, "_count"); ok {
			family, suffix = families[base], "_count"
		}
	}
	if family == nil {
		return math.NaN()
	}
next:
	for _, m := range family.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			if !slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == labels[i] && l.GetValue() == labels[i+1] }) {
				continue next
			}
		}
		switch {
		case suffix == "_count":
			return float64(m.GetHistogram().GetSampleCount())
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		default:
			return m.GetGauge().GetValue()
		}
	}
	return math.NaN()
}

func TestAddrFlag(t *testing.T) {
	// Ensure -addr defaults to loopback, as make run serves, and takes
	// :8080 for every interface.
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", o.addr)
	o, err = parseFlags([]string{"-addr", ":8080"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, ":8080", o.addr)
}

func TestMaxConnsFlag(t *testing.T) {
	// Ensure -max-conns defaults to below the open-file limit, leaving
	// descriptors for the database and the log, and can be set.
	limit := fdLimit()
	require.Positive(t, limit, "the open-file limit is readable here")
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, max(limit-fdReserve, 1), o.maxConns)
	assert.Less(t, o.maxConns, limit)
	o, err = parseFlags([]string{"-max-conns", "10"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 10, o.maxConns)
	o, err = parseFlags([]string{"-max-conns", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, o.maxConns, "0: no cap")
}

func TestMaxConnsPerAddrFlag(t *testing.T) {
	// Ensure -max-conns-per-addr defaults to a quarter of -max-conns, to
	// no cap behind a trusted proxy (whose address every connection
	// has), and can be set, 0 for no cap.
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-max-conns", "500"}, 125},
		{[]string{"-max-conns", "2"}, 1},
		{[]string{"-max-conns", "0"}, 0},
		{[]string{"-max-conns", "500", "-trust-proxy"}, 0},
		{[]string{"-max-conns", "500", "-max-conns-per-addr", "7"}, 7},
		{[]string{"-max-conns", "500", "-max-conns-per-addr", "0"}, 0},
		{[]string{"-trust-proxy", "-max-conns-per-addr", "300"}, 300},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, tc.want, o.perAddr, "%v", tc.args)
	}
}

func TestMaxConnsPerAddr(t *testing.T) {
	// Ensure the served game closes a connection over -max-conns-per-addr
	// at once while one address holds its share with half a header each,
	// and serves another address meanwhile (the loop closes the held ones
	// only at the read-header timeout, 10 s).
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"), "-max-conns", "8")
	host := strings.TrimPrefix(p.base, "http://")
	for range 2 {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHo")
		require.NoError(t, err)
	}
	over, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer over.Close()
	io.WriteString(over, "GET / HTTP/1.1\r\nHost: test\r\n\r\n") // may fail: the server may have closed
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = over.Read(make([]byte, 1))
	require.Error(t, err, "a third connection from the address was served")
	assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "a third connection from the address was kept open")

	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	cl := http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 5 * time.Second}
	resp, err := cl.Get(p.base + "/")
	require.NoError(t, err, "another address was not served")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestMaxPlayersFlag(t *testing.T) {
	// Ensure -max-players defaults to defaultMaxPlayers, 0 means no
	// limit, and a registration over the cap is 409 with the form saying
	// the game is full, creating nobody.
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, defaultMaxPlayers, o.maxPlayers)
	o, err = parseFlags([]string{"-max-players", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, o.maxPlayers, "0: no limit")

	db := filepath.Join(t.TempDir(), "ss.db")
	mustNewPlayer(t, db, "mulder")
	p := startProgram(t, "-db", db, "-max-players", "1")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(p.base + "/register")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(page)
	require.NotNil(t, m, "a form token on the register form")
	resp, err = c.PostForm(p.base+"/register", url.Values{"csrf": {string(m[1])}, "name": {"scully"},
		"password": {"the crates in hangar eighteen"}, "faction": {"FBI"}})
	require.NoError(t, err)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, string(page), "The game is full: it has 1 agent, as many as its host allows. Nobody was enlisted.")
}
