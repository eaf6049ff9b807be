package docscheck

import (
	"path"
	"regexp"
	"strings"
)

// code is the text of one code span or code block of a document.
type code struct {
	text string
	span bool // inline: one phrase, `-workers 2`; else a block of lines
}

// goFlags are the go command's build and test flags; a test's own
// (-update) are tree.testFlags.
var goFlags = set("race", "tags", "bench", "benchtime", "benchmem", "run", "count", "cpu", "timeout", "fuzz",
	"fuzztime", "v", "short", "cover", "coverprofile", "cpuprofile", "memprofile", "json", "o", "ldflags",
	"trimpath", "buildvcs", "x", "mod", "p", "failfast", "shuffle", "artifacts", "outputdir", "skip", "list",
	"gcflags", "exec", "vet", "args")

// notFlags look like flags in a lone span but are not: SQLite's -wal and
// -shm (and -journal) files beside a database.
var notFlags = set("wal", "shm", "journal")

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	// shellSegment splits a line of shell into its commands.
	shellSegment = regexp.MustCompile(`\|\||&&|[|;]`)
	// flagWord is a flag as a command line gives it: -name, --name,
	// -name=value.
	flagWord = regexp.MustCompile(`^--?([A-Za-z][A-Za-z0-9-]*)(?:=.*)?$`)
	// loneFlags is a span that begins with a flag as Go's flag package
	// spells them (one dash: `--offline` is another tool's).
	loneFlags = regexp.MustCompile(`^-[A-Za-z]`)
)

// flagProblems checks the flags given to our commands on each command
// line of c (`bin/gameserver -workers 2`, `go run ./cmd/loadtest -c 12`,
// `go test ./handlers -update`), and, in a document of the game, those
// of a lone span of flags (`-max-players 0`) against every command's (in
// the harness's, a lone `-R` is as likely wrk2's).
func (tr *tree) flagProblems(c code, gameDoc bool) []string {
	var out []string
	for _, line := range strings.Split(c.text, "\n") {
		line, _, _ = strings.Cut(line, " #") // a shell comment
		for _, seg := range shellSegment.Split(line, -1) {
			out = append(out, tr.commandFlagProblems(strings.Fields(seg))...)
		}
	}
	if c.span && gameDoc && loneFlags.MatchString(c.text) {
		for _, w := range strings.Fields(c.text) {
			m := flagWord.FindStringSubmatch(w)
			if m == nil {
				continue
			}
			tr.checked["flag"]++
			if !tr.anyFlag(m[1]) {
				out = append(out, "no command of ours has the flag -"+m[1])
			}
		}
	}
	return out
}

// commandFlagProblems checks the flags after one of our commands in
// words, one shell command.
func (tr *tree) commandFlagProblems(words []string) []string {
	var out []string
	cmd, allowed := "", map[string]bool(nil)
	for i, w := range words {
		w = strings.Trim(w, "\"'`")
		if cmd == "" {
			cmd, allowed = tr.command(words, i)
			continue
		}
		m := flagWord.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		tr.checked["flag"]++
		if !allowed[m[1]] && !(cmd == "go test" && tr.testFlags[m[1]]) {
			out = append(out, cmd+" has no flag -"+m[1])
		}
	}
	return out
}

// command reports whether words[i] runs one of our commands (a path
// into bin/, the package after `go run`, or the first word) or is `go
// test`, and which flags it takes.
func (tr *tree) command(words []string, i int) (string, map[string]bool) {
	w := strings.Trim(words[i], "\"'`")
	if w == "go" && i+1 < len(words) && words[i+1] == "test" {
		return "go test", goFlags
	}
	name := path.Base(w)
	if tr.flags[name] == nil {
		return "", nil
	}
	if strings.Contains(w, "bin/") || i > 0 && words[i-1] == "run" && strings.Contains(w, "cmd/") || i == 0 {
		return name, tr.flags[name]
	}
	return "", nil
}

// anyFlag reports whether a command of ours, a test or the go command
// has flag name.
func (tr *tree) anyFlag(name string) bool {
	if goFlags[name] || tr.testFlags[name] || notFlags[name] {
		return true
	}
	for _, flags := range tr.flags {
		if flags[name] {
			return true
		}
	}
	return false
}

var (
	// routeSpan is a span naming a path of the game, with its method or
	// not: `GET /game/events`, `/rules`.
	routeSpan = regexp.MustCompile(`^(?:(GET|HEAD|POST|PUT|PATCH|DELETE) )?(/\S*)`)
	// pageParam is a page or an action named in a URL.
	pageParam = regexp.MustCompile(`[?&](function|view)=([a-z]+)\b`)
	// systemRoots are the first folders of a file's absolute path.
	systemRoots = set("etc", "var", "proc", "usr", "tmp", "dev", "sys", "opt", "home", "run", "lib", "srv", "root")
)

// routeProblems checks the route a span names and any page or action a
// URL in c names (function=NAME, view=NAME).
func (tr *tree) routeProblems(c code) []string {
	var out []string
	for _, m := range pageParam.FindAllStringSubmatch(c.text, -1) {
		tr.checked["route"]++
		if !tr.pages[m[2]] && (m[1] == "view" || !tr.actions[m[2]]) {
			out = append(out, "no page or action "+m[1]+"="+m[2])
		}
	}
	m := routeSpan.FindStringSubmatch(c.text)
	if !c.span || m == nil {
		return out
	}
	p, _, _ := strings.Cut(m[2], "?")
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if systemRoots[first] {
		return out
	}
	tr.checked["route"]++
	if !tr.serves(m[1], p) {
		out = append(out, "no route of the game serves "+strings.TrimSpace(m[1]+" "+p))
	}
	return out
}

// serves reports whether a route of tr serves path p with method ("" for
// any): a pattern's path is p, ends in / and begins p, or matches it with
// its {wildcards}; GET's serve HEAD. The catch-all `GET /` serves only /.
func (tr *tree) serves(method, p string) bool {
	for _, pattern := range tr.routes {
		pm, pp, ok := strings.Cut(pattern, " ")
		if !ok {
			pm, pp = "", pattern
		}
		if method != "" && pm != "" && method != pm && !(method == "HEAD" && pm == "GET") {
			continue
		}
		switch {
		case pp == "/" || pp == "/{$}":
			if p == "/" {
				return true
			}
		case strings.HasSuffix(pp, "/"):
			if strings.HasPrefix(p, pp) {
				return true
			}
		case wildcard.MatchString(pp):
			if regexp.MustCompile("^" + wildcard.ReplaceAllString(regexp.QuoteMeta(pp), `[^/]+`) + "$").MatchString(p) {
				return true
			}
		case pp == p:
			return true
		}
	}
	return false
}

// wildcard is a {name} segment of a pattern, as regexp.QuoteMeta leaves it.
var wildcard = regexp.MustCompile(`\\\{[^}]*\\\}`)

// metricWord is a metric family's name, ours or the process and Go
// collectors'; `*` ends a family of names (`gameserver_work_*`).
var metricWord = regexp.MustCompile(`\b(?:gameserver|statesecrets|process|go)_[a-z0-9_]*[a-z0-9*]`)

// metricProblems checks every metric name in text: a family the server
// exports, a histogram's _bucket, _sum or _count series, or a prefix of
// one (`gameserver_streams_*`); in the harness's documents also one that
// loadtest reads from any server. A build tag (gameserver_portable) is no
// metric.
func (tr *tree) metricProblems(text string, harnessDoc bool) []string {
	var out []string
	for _, name := range metricWord.FindAllString(text, -1) {
		tr.checked["metric"]++
		if !tr.buildTags[name] && !tr.hasMetric(name) && !(harnessDoc && tr.readMetrics[name]) {
			out = append(out, "no metric "+name)
		}
	}
	return out
}

func (tr *tree) hasMetric(name string) bool {
	if prefix, ok := strings.CutSuffix(name, "*"); ok {
		for m := range tr.metrics {
			if strings.HasPrefix(m, prefix) {
				return true
			}
		}
		return false
	}
	for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && tr.metrics[base] {
			return true
		}
	}
	return false
}
