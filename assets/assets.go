// Package assets holds the files the game serves, embedded in the binary so
// a deployment is one file.
//
// Static holds static/: the front page (index.html), the stylesheet, the
// countdown script, the logo and the favicons, served by the handlers
// package under /static/ (and / for index.html), each also under a
// content-hashed name (Path, hashed.go) that the pages refer to. The pages the
// handlers render are Go code: templ components in package
// assets/templates, compiled in rather than embedded.
package assets

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static is the static/ folder, its paths relative to it ("style.css").
var Static fs.FS = mustSub("static")

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub fails only on an invalid path, a programming error.
		panic("assets: " + err.Error())
	}
	return sub
}
