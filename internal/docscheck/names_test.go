package docscheck

import (
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The names the documents use, checked against the tree (tree_test.go):
// a file or folder (`cmd/gameserver/workers.go`, `internal/`, a base name
// such as `live.js`), a flag of one of our commands (`bin/gameserver
// -workers 2`, or a lone `-workers`), a route of the game (`GET
// /game/events`, `/game?function=hq`) and a metric
// (`gameserver_loop_lag_seconds`). Code spans and code blocks are read,
// not prose: a name in a document is written as code.

// Ensure every file, flag, route and metric the Markdown files name
// exists.
func TestNamesExist(t *testing.T) {
	tr := readTree(t)
	clear(tr.checked)
	for _, file := range documents(t) {
		for _, problem := range tr.problems(file, parse(t, file)) {
			t.Errorf("%s: %s", file, problem)
		}
	}
	for _, kind := range []string{"file", "flag", "route", "metric"} {
		if tr.checked[kind] == 0 {
			t.Errorf("no %s name found in the documents: is the check reading them? %v", kind, tr.checked)
		}
	}
	t.Logf("names checked: %v", tr.checked)
}

// Ensure each check reports a planted wrong name, and passes the right
// ones beside it: what a renamed file, flag, route or metric leaves in a
// document.
func TestNamesPlanted(t *testing.T) {
	tr := readTree(t)
	for _, c := range []struct{ doc, want string }{
		{"The supervisor is `cmd/gameserver/workers.go`.", ""},
		{"The supervisor is `cmd/gameserver/nosuch.go`.", "no such file or folder cmd/gameserver/nosuch.go"},
		{"See `nosuchfile.go` and `live.js`.", "no file named nosuchfile.go"},
		{"```sh\ngo test ./game/nosuchpkg/...\n```", "no such file or folder game/nosuchpkg"},
		{"Screenshots go to `testoutput/_artifacts/`.", ""},
		{"```sh\nbin/gameserver -workers 2 -db x.db\n```", ""},
		{"```sh\nbin/gameserver -workers 2 -no-such-flag\n```", "gameserver has no flag -no-such-flag"},
		{"Run `go run ./cmd/loadtest -c 12 -nosuch URL`.", "loadtest has no flag -nosuch"},
		{"Set `-max-players 0`; `-nosuch-flag` is wrong.", "no command of ours has the flag -nosuch-flag"},
		{"`GET /game/events` and `/game?function=hq&tid=...`.", ""},
		{"`GET /nosuch`", "no route of the game serves GET /nosuch"},
		{"`POST /rules`", "no route of the game serves POST /rules"},
		{"`/game?function=nosuch`", "no page or action function=nosuch"},
		{"`gameserver_loop_lag_seconds_bucket`, `process_cpu_seconds_total`, `gameserver_streams_*`.", ""},
		{"`rate(gameserver_nosuch_total[1m])`", "no metric gameserver_nosuch_total"},
	} {
		got := tr.problems("README.md", parseBytes([]byte(c.doc)))
		if c.want == "" && len(got) > 0 || c.want != "" && !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%q: got %q, want %q", c.doc, got, c.want)
		}
	}
}

// Ensure the handlers package doc lists the routes registerRoutes
// registers, the pages of /game and the actions of POST /game, no more and
// no fewer.
func TestHandlersDocListsRoutes(t *testing.T) {
	tr := readTree(t)
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "handlers", "server.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		t.Fatalf("handlers/server.go's package doc: %v", err)
	}
	doc := f.Doc.Text()
	var listed []string
	for _, m := range docRoute.FindAllStringSubmatch(doc, -1) {
		listed = append(listed, m[1]+" "+m[2])
	}
	same(t, "routes", listed, tr.gameRoutes)
	flat := strings.Join(strings.Fields(doc), " ")
	for _, l := range []struct {
		what string
		re   *regexp.Regexp
		want map[string]bool
	}{{"pages", docPages, tr.pages}, {"actions", docActions, tr.actions}} {
		m := l.re.FindStringSubmatch(flat)
		if m == nil {
			t.Errorf("the handlers package doc has no line %v", l.re)
			continue
		}
		same(t, l.what, strings.Split(m[1], ", "), keys(l.want))
	}
}

var (
	docRoute   = regexp.MustCompile(`(?m)^\t(GET|POST|HEAD|PUT|PATCH|DELETE) +(/\S*)`)
	docPages   = regexp.MustCompile(`Pages, [^:]*: ([a-z]+(?:, [a-z]+)*)\.`)
	docActions = regexp.MustCompile(`Actions, [^:]*: ([a-z]+(?:, [a-z]+)*)\.`)
)

// same fails t unless the handlers package doc's list and the code's hold
// the same names.
func same(t *testing.T, what string, doc, code []string) {
	t.Helper()
	slices.Sort(doc)
	slices.Sort(code)
	if !slices.Equal(doc, code) {
		t.Errorf("the handlers package doc lists the %s %q; the code has %q", what, doc, code)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// problems are the names p uses that the tree does not have.
func (tr *tree) problems(file string, p parsed) []string {
	var out []string
	harnessDoc := strings.HasPrefix(file, "loadtest/")
	gameDoc := !harnessDoc && !strings.HasPrefix(file, "gameserver/")
	for _, c := range p.codes() {
		for _, tok := range strings.Fields(c.text) {
			out = append(out, tr.fileProblems(tok)...)
		}
		out = append(out, tr.flagProblems(c, gameDoc)...)
		out = append(out, tr.metricProblems(c.text, harnessDoc)...)
		if gameDoc {
			out = append(out, tr.routeProblems(c)...)
		}
	}
	return out
}

// fileExts are the endings of the files a document names by base name
// alone (`live.js`); an output's (.html, .json, .png) is not checked.
var fileExts = []string{".go", ".sql", ".sh", ".templ", ".js", ".css", ".conf", ".service", ".socket", ".timer",
	".md", ".tmpl", ".yml", ".yaml", ".http"}

// modulePath is our module's import path, before a package's folder.
const modulePath = "github.com/statesecrets/server"

// fileProblems checks one word of code that may be a path: from the
// module (`github.com/statesecrets/server/gameserver`), from the root's
// top folders (`cmd/gameserver/workers.go`, `./game/...`, `assets/*.templ`)
// or a source file's base name (`live.js`).
func (tr *tree) fileProblems(tok string) []string {
	tok = strings.Trim(tok, "\"'`(),;[]")
	tok, _, _ = strings.Cut(tok, "#")
	if tok == "" || strings.ContainsAny(tok, "<>{}$=?:@") {
		return nil // a placeholder, a URL, a setting, a module version
	}
	rel, ok := strings.CutPrefix(tok, modulePath+"/")
	if !ok {
		rel = strings.TrimPrefix(tok, "./")
		first, _, slash := strings.Cut(rel, "/")
		if !slash || !tr.paths[first] {
			return tr.baseProblems(tok)
		}
	}
	tr.checked["file"]++
	rel = strings.TrimSuffix(strings.TrimSuffix(rel, "..."), "/")
	if strings.Contains(rel, "*") {
		if m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(rel))); len(m) == 0 {
			return []string{"no file matches " + rel}
		}
		return nil
	}
	if slices.ContainsFunc(strings.Split(rel, "/"), func(dir string) bool { return skipped[dir] }) {
		return nil // made by a build or a test (internal/browsertest/node_modules)
	}
	if !tr.paths[rel] {
		return []string{"no such file or folder " + rel}
	}
	return nil
}

// baseProblems checks a word without a folder that ends like a source
// file: some file of the tree has that name (or matches it, `*_templ.go`).
func (tr *tree) baseProblems(tok string) []string {
	if strings.Contains(tok, "/") || !slices.ContainsFunc(fileExts, func(e string) bool { return strings.HasSuffix(tok, e) }) {
		return nil
	}
	tr.checked["file"]++
	if tr.basenames[tok] {
		return nil
	}
	if strings.Contains(tok, "*") {
		for name := range tr.basenames {
			if ok, _ := path.Match(tok, name); ok {
				return nil
			}
		}
	}
	return []string{"no file named " + tok}
}
