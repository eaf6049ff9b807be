package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// tree is what the documents may name, read from the repository: its
// files, our commands' flags, the game's routes, pages and actions, and
// the metrics the server exports.
type tree struct {
	paths       map[string]bool            // every file and folder, slash-separated, from root
	basenames   map[string]bool            // the files' base names
	flags       map[string]map[string]bool // by command (cmd/NAME's last element)
	testFlags   map[string]bool            // flags the packages' tests define (go test ./handlers -update)
	routes      []string                   // the handlers' and the metrics address's patterns, "GET /game"
	gameRoutes  []string                   // the handlers' alone
	pages       map[string]bool            // /game?function=NAME
	actions     map[string]bool            // POST /game function=NAME
	metrics     map[string]bool            // metric family names the server exports
	readMetrics map[string]bool            // the names loadtest reads from any server
	buildTags   map[string]bool            // the words of the Go files' //go:build lines
	checked     map[string]int             // how many names of each kind the checks read
}

// skipped are the folders that builds and tests leave behind, never
// documented as part of the tree.
var skipped = map[string]bool{".git": true, "bin": true, "testoutput": true, "data": true, "node_modules": true}

var treeCache *tree

// readTree reads the tree once per test binary.
func readTree(t *testing.T) *tree {
	t.Helper()
	if treeCache != nil {
		return treeCache
	}
	tr := &tree{paths: map[string]bool{}, basenames: map[string]bool{}, flags: map[string]map[string]bool{},
		testFlags: map[string]bool{}, pages: map[string]bool{}, actions: map[string]bool{}, metrics: map[string]bool{},
		buildTags: map[string]bool{}, readMetrics: map[string]bool{}, checked: map[string]int{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipped[d.Name()] {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		tr.paths[filepath.ToSlash(rel)] = true
		if !d.IsDir() {
			tr.basenames[d.Name()] = true
			if strings.HasSuffix(d.Name(), ".go") {
				return tr.readGo(t, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tr.readPages(t)
	tr.readProcessMetrics(t)
	if len(tr.flags["gameserver"]) == 0 || len(tr.routes) == 0 || len(tr.pages) == 0 || len(tr.actions) == 0 || len(tr.metrics) == 0 {
		t.Fatalf("the tree was not read: flags %v, routes %v, pages %v, actions %v, metrics %v",
			tr.flags, tr.routes, tr.pages, tr.actions, tr.metrics)
	}
	treeCache = tr
	return tr
}

// readGo takes from one Go file what the documents may name: flags
// (a command's, or a test's), and from the handlers' and cmd/gameserver's
// code route patterns and metric names.
func (tr *tree) readGo(t *testing.T, rel string) error {
	test := strings.HasSuffix(rel, "_test.go")
	dir := filepath.Dir(rel)
	command := strings.HasPrefix(rel, "cmd/") && !test
	// loadtest's output flags (PrintOptions.AddFlags) are the flags of
	// every command that adds them: cmd/loadtest's and cmd/players'.
	shared := rel == "loadtest/output.go"
	routes := !test && (dir == "handlers" || dir == "cmd/gameserver") // and metrics
	src := string(readFile(t, rel))
	for _, line := range strings.Split(src, "\n") {
		if expr, ok := strings.CutPrefix(line, "//go:build "); ok {
			for _, w := range buildWord.FindAllString(expr, -1) {
				tr.buildTags[w] = true
			}
		}
	}
	if test && !strings.Contains(src, "flag.") {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch name := flagName(sel.Sel.Name, n.Args); {
			case name != "" && (command || shared):
				cmds := []string{filepath.Base(dir)}
				if shared {
					cmds = []string{"loadtest", "players"}
				}
				for _, cmd := range cmds {
					if tr.flags[cmd] == nil {
						tr.flags[cmd] = map[string]bool{}
					}
					tr.flags[cmd][name] = true
				}
			case name != "" && test && isIdent(sel.X, "flag"):
				tr.testFlags[name] = true
			case routes && (sel.Sel.Name == "HandleFunc" || sel.Sel.Name == "Handle") && len(n.Args) == 2:
				if p, ok := stringLit(n.Args[0]); ok {
					tr.routes = append(tr.routes, p)
					if dir == "handlers" {
						tr.gameRoutes = append(tr.gameRoutes, p)
					}
				}
			}
		case *ast.BasicLit:
			if s, ok := stringLit(n); ok && metricName.MatchString(s) {
				switch {
				case routes:
					tr.metrics[s] = true
				case dir == "loadtest" && !test:
					tr.readMetrics[s] = true
				}
			}
		}
		return true
	})
	return nil
}

var buildWord = regexp.MustCompile(`[A-Za-z0-9_.]+`)

// metricName is one of our metric families' names: the engine's
// (gameserver_) or the game's (statesecrets_).
var metricName = regexp.MustCompile(`^(gameserver|statesecrets)_[a-z0-9_]*[a-z0-9]$`)

// flagName is the flag a call to a flag.FlagSet method (or the flag
// package's function) of that name defines, "" if it is no such call or
// the name is no string literal.
func flagName(method string, args []ast.Expr) string {
	i := -1
	switch method {
	case "Bool", "String", "Int", "Int64", "Uint", "Uint64", "Float64", "Duration", "Func", "BoolFunc":
		i = 0
	case "BoolVar", "StringVar", "IntVar", "Int64Var", "UintVar", "Uint64Var", "Float64Var", "DurationVar", "TextVar", "Var":
		i = 1
	}
	if i < 0 || len(args) < i+2 {
		return ""
	}
	s, _ := stringLit(args[i])
	return s
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// readFile returns the file at rel, a path from root.
func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readPages reads the game's pages (the keys of handlers/game.go's
// gamePages) and keeps, of the action kinds, those handlers/actions.go's
// actionPages maps (what POST /game takes).
func (tr *tree) readPages(t *testing.T) {
	t.Helper()
	taken := map[string]bool{}
	for _, v := range []struct {
		file, name string
		keys       func(ast.Expr)
	}{
		{"handlers/game.go", "gamePages", func(k ast.Expr) {
			if s, ok := stringLit(k); ok {
				tr.pages[s] = true
			}
		}},
		{"handlers/actions.go", "actionPages", func(k ast.Expr) {
			if sel, ok := k.(*ast.SelectorExpr); ok {
				taken[sel.Sel.Name] = true
			}
		}},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, v.file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || len(spec.Names) != 1 || spec.Names[0].Name != v.name || len(spec.Values) != 1 {
				return true
			}
			if lit, ok := spec.Values[0].(*ast.CompositeLit); ok {
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						v.keys(kv.Key)
					}
				}
			}
			return false
		})
	}
	tr.keepTakenActions(t, taken)
}

// keepTakenActions narrows tr.actions, the kinds' values, to those whose
// constant (game.Recruit) actionPages names.
func (tr *tree) keepTakenActions(t *testing.T, taken map[string]bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "game/game.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if spec, ok := n.(*ast.ValueSpec); ok && isIdent(spec.Type, "ActionKind") && len(spec.Values) == 1 && taken[spec.Names[0].Name] {
			if s, ok := stringLit(spec.Values[0]); ok {
				kept[s] = true
			}
		}
		return true
	})
	tr.actions = kept
}

// readProcessMetrics adds the families of the process and Go runtime
// collectors, which handlers.Metrics registers.
func (tr *tree) readProcessMetrics(t *testing.T) {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		tr.metrics[f.GetName()] = true
	}
}
