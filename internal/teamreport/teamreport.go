// Package teamreport writes what the team commands show — status, samples, assignments, quality
// control — as aligned tables, JSON or Markdown. Text that comes from data (stratum values,
// names) is escaped before it reaches a terminal.
package teamreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// Format is an output format.
type Format string

// The formats; not every writer offers Markdown.
const (
	Table    Format = "table"
	JSON     Format = "json"
	Markdown Format = "md"
)

// ParseFormat checks a --format value against the formats allowed.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	var names []string
	for _, f := range allowed {
		if string(f) == s {
			return f, nil
		}
		names = append(names, string(f))
	}
	return "", fmt.Errorf("--format %q: use one of %s", s, strings.Join(names, ", "))
}

// clean makes a value from data safe for one cell or line: escape sequences show as text.
func clean(s string) string { return textsafe.Line(s) }

// grid renders rows under headers as a bordered table whose columns fit the widest cell
// (wide characters count two). Numeric columns (right) are aligned right.
func grid(w io.Writer, headers []string, rows [][]string, right map[int]bool) error {
	re := lipgloss.NewRenderer(w)
	re.SetColorProfile(termenv.Ascii)
	cell := re.NewStyle().Padding(0, 1)
	t := table.New().Border(lipgloss.NormalBorder()).Headers(headers...).Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			if right[col] && row != table.HeaderRow {
				return cell.Align(lipgloss.Right)
			}
			return cell
		})
	_, err := fmt.Fprintln(w, t.Render())
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// mdRow is one Markdown table row; pipes in cells are escaped.
func mdRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(clean(c), "|", `\|`)
	}
	return "| " + strings.Join(esc, " | ") + " |"
}
