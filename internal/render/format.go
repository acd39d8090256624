package render

import (
	"fmt"
	"strings"
)

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

// ParseFormat checks a --format value against the formats allowed.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	for _, f := range allowed {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("--format %q: use one of %s", s, strings.Join(Strings(allowed...), ", "))
}

// Strings returns the names of formats, for help text and completion.
func Strings(fs ...Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// EstimateFormats are the formats of m3eval estimate: its table (estimate.WriteTable), or
// the estimate.Result as JSON.
var EstimateFormats = []Format{Table, JSON}
