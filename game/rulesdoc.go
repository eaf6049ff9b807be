package game

import _ "embed" // RulesMarkdown

// RulesMarkdown is RULES.md, the rules for players in Markdown (CommonMark
// with GitHub tables), generated from RULES.md.tmpl and the constants: the
// server renders it as its rules page.
//
//go:embed RULES.md
var RulesMarkdown string
