package docscheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark/ast"
)

// embedHeading begins the README's section on using the engine from a
// module of one's own.
const embedHeading = "Embed"

// Ensure the README's embedding section works as written, from a clone:
// its shell lines run in order in a folder beside the repository (linked
// as ../server, as the section says), its Go program saved as
// hello/main.go where the section says, and the module builds. The last
// line, `go run .`, would serve until stopped: it is run as `go vet .
// && go build .`. The go command may fetch golang.org/x/sys, as it would
// for a reader.
func TestEmbedFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	script := embedScript(t, parse(t, "README.md"))
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(repo, filepath.Join(dir, "server")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-ex", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "PATH="+filepath.Dir(goTool)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's embedding section fails: %v\n%s", err, out)
	}
}

// embedScript is the README's embedding section as one shell script: its
// sh blocks, and its go block written to the file the text before it
// names (`hello/main.go`, from the folder the script runs in).
func embedScript(t *testing.T, p parsed) string {
	t.Helper()
	var script strings.Builder
	var in bool
	var last string // the last code span before a block: the Go program's file
	for n := p.doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 2 {
			in = strings.HasPrefix(plainText(h, p.src), embedHeading)
			continue
		}
		if !in {
			continue
		}
		if _, ok := n.(*ast.Paragraph); ok {
			for _, c := range (parsed{src: p.src, doc: n}).codes() {
				last = c.text
			}
		}
		b, ok := n.(*ast.FencedCodeBlock)
		if !ok {
			continue
		}
		text := blockText(b, p.src)
		switch string(b.Language(p.src)) {
		case "sh":
			script.WriteString(strings.ReplaceAll(text, "go run .", "go vet . && go build ."))
		case "go":
			if !strings.HasSuffix(last, ".go") {
				t.Fatalf("README.md: the embedding section's Go program follows no `FILE.go` naming its file")
			}
			// The file is named from the folder the section starts in.
			script.WriteString("cat >\"$OLDPWD_EMBED/" + last + "\" <<'EOF'\n" + text + "EOF\n")
		}
	}
	if !strings.Contains(script.String(), "go mod edit -replace") || !strings.Contains(script.String(), "<<'EOF'") {
		t.Fatalf("README.md: no section %q with the replace line and a Go program; read:\n%s", embedHeading, script.String())
	}
	return "OLDPWD_EMBED=$(pwd)\n" + script.String()
}

// blockText is the text of a code block.
func blockText(b ast.Node, src []byte) string {
	var buf bytes.Buffer
	lines := b.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		buf.Write(seg.Value(src))
	}
	return buf.String()
}
