// Package assets holds the files the game serves or renders, embedded in the
// binary so a deployment is one file.
//
// Static holds static/: the front page (index.html), the stylesheet, the
// countdown script, the logo and the favicons, served as they are by the
// handlers package under /static/ (and / for index.html). Templates holds
// templates/*.html: html/template sources parsed once at start-up by the
// handlers package, one page per file plus layout.html, which every page
// uses. The pages compiled with templ are Go code in package
// assets/templates instead (the headquarters page so far).
package assets

import (
	"embed"
	"io/fs"
)

//go:embed static templates
var files embed.FS

// Static is the static/ folder, its paths relative to it ("style.css").
var Static fs.FS = mustSub("static")

// Templates is the templates/ folder, its paths relative to it
// ("layout.html").
var Templates fs.FS = mustSub("templates")

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		// fs.Sub fails only on an invalid path, a programming error.
		panic("assets: " + err.Error())
	}
	return sub
}
