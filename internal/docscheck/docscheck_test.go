package docscheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// root is the repository's top folder, from this package's folder (go test
// runs a package's tests in its own folder).
const root = "../.."

// documents are the Markdown files checked, relative to root: every *.md
// of the tree but those under hidden folders and what builds and tests
// leave behind (bin/, testoutput/, data/, node_modules/).
func documents(t *testing.T) []string {
	t.Helper()
	skip := map[string]bool{"bin": true, "testoutput": true, "data": true, "node_modules": true}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || skip[d.Name()]) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, filepath.Join("docs", "engine.md")) {
		t.Fatalf("README.md or docs/engine.md not found from %s: %v", root, files)
	}
	return files
}

// parsed is one Markdown file: its source and its syntax tree.
type parsed struct {
	src []byte
	doc ast.Node
}

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

func parse(t *testing.T, path string) parsed {
	t.Helper()
	return parseBytes(readFile(t, path))
}

func parseBytes(src []byte) parsed {
	return parsed{src: src, doc: markdown.Parser().Parse(text.NewReader(src))}
}

// destinations are the link and image targets of p, in order.
func (p parsed) destinations() []string {
	var out []string
	ast.Walk(p.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			out = append(out, string(n.Destination))
		case *ast.Image:
			out = append(out, string(n.Destination))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// anchors are the ids GitHub gives p's headings: the heading's text in
// lower case, without punctuation, spaces turned into hyphens, and -1, -2
// appended to repeats.
func (p parsed) anchors() map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	ast.Walk(p.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		id := slug(plainText(h, p.src))
		if k := seen[id]; k > 0 {
			ids[fmt.Sprintf("%s-%d", id, k)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
		return ast.WalkSkipChildren, nil
	})
	return ids
}

// plainText is the text of n's inline content, code spans' included,
// without the Markdown around it.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slug is GitHub's anchor for a heading's text.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codes are the code spans and code blocks of p, in order: the commands
// and names the documents show.
func (p parsed) codes() []code {
	var out []code
	ast.Walk(p.doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan:
			out = append(out, code{text: plainText(n, p.src), span: true})
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			out = append(out, code{text: blockText(n, p.src)})
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Ensure every relative link and image in the Markdown files names a file
// that exists, and a #fragment into a Markdown file one of its
// headings.
func TestRelativeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // by path from root
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		anchors[path] = parse(t, path).anchors()
		return anchors[path]
	}
	checked := 0
	for _, file := range documents(t) {
		for _, dest := range parse(t, file).destinations() {
			u, err := url.Parse(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", file, dest, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // http:, https:, mailto:: not ours to check
			}
			checked++
			target := file
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					t.Errorf("%s: link %q is absolute: make it relative to the file", file, dest)
					continue
				}
				target = filepath.Join(filepath.Dir(file), filepath.FromSlash(u.Path))
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					t.Errorf("%s: link %q: no such file %s", file, dest, target)
					continue
				}
			}
			if u.Fragment != "" && strings.HasSuffix(target, ".md") && !anchorsOf(target)[u.Fragment] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", file, dest, target, u.Fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: is the root right?")
	}
}

// makeCommand is `make TARGET` and the VAR=value settings after it.
var makeCommand = regexp.MustCompile(`(?m)(?:^|[\s;&|(])make((?:[ \t]+[A-Za-z_][A-Za-z0-9_]*=\S*)*)[ \t]+([a-z][a-z0-9_-]*)((?:[ \t]+[A-Za-z_][A-Za-z0-9_]*=\S*)*)`)

var setting = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=`)

// makefile is the Makefile's targets and variables.
func makefile(t *testing.T) (targets, vars map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rule := regexp.MustCompile(`^([A-Za-z0-9_.-]+(?:[ \t]+[A-Za-z0-9_.-]+)*)[ \t]*:([^=]|$)`)
	assign := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)[ \t]*[?:+]?=`)
	targets, vars = map[string]bool{}, map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if m := assign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = true
		} else if m := rule.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Fields(m[1]) {
				targets[name] = true
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return targets, vars
}

// Ensure every `make TARGET VAR=...` that the Markdown files show names a
// target and variables of the Makefile.
func TestMakeCommandsExist(t *testing.T) {
	targets, vars := makefile(t)
	if !targets["test"] || !vars["GO"] {
		t.Fatalf("the Makefile's targets or variables were not read: %v, %v", targets, vars)
	}
	checked := 0
	for _, file := range documents(t) {
		for _, c := range parse(t, file).codes() {
			for _, m := range makeCommand.FindAllStringSubmatch(c.text, -1) {
				checked++
				cmd := strings.TrimSpace(m[0])
				if !targets[m[2]] {
					t.Errorf("%s: %q: the Makefile has no target %s", file, cmd, m[2])
				}
				for _, v := range setting.FindAllStringSubmatch(m[1]+m[3], -1) {
					if !vars[v[1]] {
						t.Errorf("%s: %q: the Makefile has no variable %s", file, cmd, v[1])
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no make command found in the documents")
	}
}

// Ensure the anchors are GitHub's, on the headings the documents link to.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"One loop per core: -workers":       "one-loop-per-core--workers",
		"Two runs on the project's machine": "two-runs-on-the-projects-machine",
		"make loadtest":                     "make-loadtest",
		"4. Backups":                        "4-backups",
		"What \"a client\" is":              "what-a-client-is",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
