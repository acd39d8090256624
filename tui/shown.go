package tui

import (
	"strings"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// Text from data is drawn through these: textsafe's (escape sequences shown, never obeyed),
// and without the emoji modifiers terminals disagree on. uniseg (lipgloss, x/ansi) measures
// 👍🏽 as one cluster two cells wide; tmux 3.3 draws it four cells wide (the skin tone as a
// wide rune of its own), and a joined family 👨‍👩‍👧 six: every such line overflowed its pane
// and the terminal scrolled the screen apart. Without skin tones (U+1F3FB–U+1F3FF) and
// zero-width joiners every terminal and the layout agree (👍 two cells, 👨👩👧 six). Only the
// screen drops them; the database and the exports keep the text as it came.

// shownString is a multi-line text from data as the screen draws it.
func shownString(s string) string { return dropEmojiJoins(textsafe.String(s)) }

// shownLine is a one-line text from data as the screen draws it.
func shownLine(s string) string { return dropEmojiJoins(textsafe.Line(s)) }

func dropEmojiJoins(s string) string {
	if !strings.ContainsFunc(s, isEmojiJoin) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isEmojiJoin(r) {
			return -1
		}
		return r
	}, s)
}

func isEmojiJoin(r rune) bool { return r == '\u200d' || (r >= 0x1F3FB && r <= 0x1F3FF) }
