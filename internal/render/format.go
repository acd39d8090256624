package render

import "strings"

// Format names an output format: the value of a command's --format flag.
type Format string

// The output formats. Each command offers some of them (its flag lists which).
const (
	Table    Format = "table"
	JSON     Format = "json"
	JSONL    Format = "jsonl"
	Markdown Format = "md"
	CSV      Format = "csv"
	LaTeX    Format = "latex"
	HTML     Format = "html"
)

// list names formats for a message: "table, json".
func list(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// EstimateFormats are the output formats of m3eval estimate. They are its table
// (estimate.WriteTable) and the estimate.Result as JSON.
var EstimateFormats = []Format{Table, JSON}
