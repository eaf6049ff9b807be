package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

// Content-hashed names. A sub-resource (stylesheet, script, image, icon)
// is also served under a name that carries a hash of its content,
// style.1f2e3d4c5b6a7980.css, so the name changes whenever the content
// does and a browser may keep it for a year without asking again; the
// pages refer to those names (Path). HTML files are pages, reached by
// their own URL, and keep theirs.

// HashLen is the number of hex digits of a hashed name's hash: the first
// 8 bytes of the file's SHA-256, as in the handlers' ETags.
const HashLen = 16

// hashedPaths maps a file of Static ("style.css") to the URL path of its
// hashed name ("/static/style.1f2e3d4c5b6a7980.css"). Built once, when
// the package is loaded: the files are embedded and never change while
// the program runs, and a page asks for six of them on every render.
var hashedPaths = hashAll(Static)

func hashAll(fsys fs.FS) map[string]string {
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) == ".html" {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		out[name] = "/static/" + HashedName(name, body)
		return nil
	})
	if err != nil {
		panic("assets: " + err.Error()) // an embedded FS that cannot be read: a broken build
	}
	return out
}

// HashedName returns name with the hash of body before its extension:
// "style.css" becomes "style.1f2e3d4c5b6a7980.css" (HashLen hex digits), a
// name without an extension gets ".HASH" appended.
func HashedName(name string, body []byte) string {
	sum := sha256.Sum256(body)
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:HashLen/2]) + ext
}

// Path returns the URL path of the static file name (a path in Static,
// "style.css") under its hashed name: "/static/style.1f2e3d4c5b6a7980.css",
// which the handlers serve with a year's Cache-Control. A name Static does
// not hold, or an HTML file, gets its plain "/static/NAME".
func Path(name string) string {
	if p, ok := hashedPaths[name]; ok {
		return p
	}
	return "/static/" + name
}

// Unhash returns the plain name of a hashed one ("style.1f2e.css" gives
// "style.css") and whether hashed has the shape of one: a dot and HashLen
// lowercase hex digits before its extension. It does not check the hash
// against the content: the caller compares hashed with the current one.
func Unhash(hashed string) (name string, ok bool) {
	ext := path.Ext(hashed)
	stem := strings.TrimSuffix(hashed, ext)
	dot := len(stem) - HashLen - 1
	if dot < 1 || stem[dot] != '.' || !isLowerHex(stem[dot+1:]) {
		return "", false
	}
	return stem[:dot] + ext, true
}

func isLowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
