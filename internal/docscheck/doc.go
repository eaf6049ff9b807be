// Package docscheck holds no code of the program: its tests check the
// project's Markdown documentation against the tree it documents. Every
// relative link and image in the tree's Markdown files (README.md, docs/,
// deploy/, loadtest/, game/RULES.md...) must name a file or folder that
// exists (and a heading that exists, for a #fragment into a
// Markdown file), and every `make TARGET VAR=...` they show must name a
// target and variables the Makefile has.
package docscheck
