package tui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// wrapText wraps plain text (no escape sequences: text from data goes through shownString
// first) to width cells, line by line, the way a reader expects a conversation to wrap:
//
//   - lines break only where Unicode's line-breaking rules (UAX #14, from uniseg, the
//     library lipgloss itself stands on) allow, so a Chinese line never starts with closing
//     punctuation (，。）」) and never ends with opening punctuation (（「), the usual
//     kinsoku rules, and English breaks between words;
//   - a wrapped list item or indented code line keeps its indent: its continuation lines
//     start under the item's text (a hanging indent), not at the margin.
//
// lipgloss and x/ansi wrap by words and cells but know neither rule, hence this by hand;
// the break opportunities themselves come from uniseg. A piece wider than the line (a URL,
// a long identifier) is cut between graphemes.
func wrapText(text string, width int) []string {
	width = max(1, width)
	text = strings.ReplaceAll(text, "\t", "    ")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		out = append(out, wrapLine(strings.TrimRight(line, " "), width)...)
	}
	return out
}

// listMarker matches the start of a list item: indent, a bullet or a number, and the space
// after it ("- ", "  * ", "3. ", "b) ", "（2）").
var listMarker = regexp.MustCompile(`^[ ]*(?:[-*+•·]|[0-9]{1,3}[.)]|[a-zA-Z][.)]|\([0-9]{1,3}\)|（[0-9]{1,3}）)[ ]+`)

// hangingIndent is where a line's continuation lines start: under the text of a list item,
// or under the first character of an indented line.
func hangingIndent(line string) int {
	if m := listMarker.FindString(line); m != "" {
		return ansi.StringWidth(m)
	}
	return len(line) - len(strings.TrimLeft(line, " "))
}

// wrapLine wraps one line (no newline in it).
func wrapLine(line string, width int) []string {
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	indent := hangingIndent(line)
	if indent > width/2 {
		indent = 0 // deep indents on a narrow pane would leave no room for the text
	}
	var lines []string
	var cur strings.Builder
	curW, start := 0, 0 // start: the width of the line's indent (0 on the first line)
	newLine := func() {
		lines = append(lines, strings.TrimRight(cur.String(), " "))
		cur.Reset()
		cur.WriteString(strings.Repeat(" ", indent))
		curW, start = indent, indent
	}
	state := -1
	rest := line
	for len(rest) > 0 {
		var seg string
		seg, rest, _, state = uniseg.FirstLineSegmentInString(rest, state)
		if curW == start && start > 0 {
			seg = strings.TrimLeft(seg, " ") // a continuation line starts at its indent
		}
		segW := ansi.StringWidth(seg)
		// Spaces at the end of a segment may hang past the edge: they are trimmed.
		fitW := ansi.StringWidth(strings.TrimRight(seg, " "))
		if curW+fitW > width && curW > start {
			newLine()
			seg = strings.TrimLeft(seg, " ")
			segW, fitW = ansi.StringWidth(seg), ansi.StringWidth(strings.TrimRight(seg, " "))
		}
		if curW+fitW <= width {
			cur.WriteString(seg)
			curW += segW
			continue
		}
		// Wider than a whole line: cut between graphemes.
		g := uniseg.NewGraphemes(seg)
		for g.Next() {
			c := g.Str()
			w := ansi.StringWidth(c)
			if curW+w > width && curW > start {
				newLine()
				if c == " " {
					continue
				}
			}
			cur.WriteString(c)
			curW += w
		}
	}
	if s := strings.TrimRight(cur.String(), " "); s != "" || len(lines) == 0 {
		lines = append(lines, s)
	}
	return lines
}
