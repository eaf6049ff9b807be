// Package docscheck holds no code of the program: its tests check the
// project's Markdown documentation against the tree it documents. Every
// relative link and image in the tree's Markdown files (README.md, docs/,
// deploy/, loadtest/, game/RULES.md...) must name a file or folder that
// exists (and a heading that exists, for a #fragment into a
// Markdown file), and every `make TARGET VAR=...` they show must name a
// target and variables the Makefile has.
//
// The names they write as code must exist too (names_test.go, read from
// the tree by tree_test.go): a file or folder (`cmd/gameserver/run.go`,
// `./game/...`, `live.js`), a flag of one of our commands
// (`bin/gameserver -workers 2`, `-max-players 0`), a route, page or
// action of the game (`GET /game/events`, `/game?function=hq`) and a
// metric (`gameserver_loop_lag_seconds`). The handlers package doc's
// route list must be registerRoutes' patterns, its pages and actions
// those of handlers/game.go and handlers/actions.go. TestNamesPlanted
// shows each check failing on a wrong name.
package docscheck
