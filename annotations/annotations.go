// Package annotations embeds the data m3eval ships with: the default rubric that encodes the
// M3Bench annotation guide, the action-type catalogue of the action-space document, and the
// demo conversations that `make demo` imports.
package annotations

import (
	"embed"
	_ "embed"
)

// DefaultRubric is the rubric file of the M3Bench annotation guide.
//
//go:embed rubric.json
var DefaultRubric []byte

// Actions is the action-type catalogue of the action-space document.
//
//go:embed actions.json
var Actions []byte

// Maps holds the --map files shipped for layouts users bring often (maps/NAME.map), which
// import --map-file NAME finds when no file of that name exists.
//
//go:embed maps
var Maps embed.FS

// GuideCases is the annotation guide's edge cases (案例1–4) and its advice on comments, in
// English and Chinese, as the annotator's help screen (?) shows them.
//
//go:embed guide/edge_cases.txt
var GuideCases string

// Demo holds the demo episodes (demo/episodes.jsonl) and their images.
//
//go:embed demo
var Demo embed.FS
