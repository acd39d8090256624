// Package textsafe makes text from data safe to print to a terminal. Imported responses,
// messages, names and paths are untrusted: an escape sequence in them could retitle the
// window (OSC 0), write the clipboard (OSC 52), clear the screen (CSI 2J) or draw fake text
// over the annotator. Every C0 and C1 control character, DEL and ESC included, is replaced
// by a visible stand-in (ESC becomes ␛, BEL ␇, U+009B ␛[), so a whole sequence shows as
// harmless text such as "␛]0;title␇" and the terminal never acts on it. Newlines and tabs
// stay layout; invalid UTF-8 becomes U+FFFD.
//
// Written by hand on purpose: charmbracelet/x/ansi parses sequences to strip or measure
// them, but neutralizing needs no parser. Replacing the control characters one by one leaves
// no byte a terminal would treat as the start or end of a sequence, whatever follows, which
// is the safety property; a parser could only decide how to draw the rest.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with its control characters made visible. Newlines and tabs are kept.
func String(s string) string { return clean(s, true) }

// Line returns s made safe for one line of a table or a status line. It is like String, but
// a newline shows as ⏎ and a tab as a space, so a cell never breaks its row.
func Line(s string) string { return clean(s, false) }

// Safe reports whether s prints as itself. That is valid UTF-8 without control characters
// other than newline and tab.
func Safe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isC1(r) || isBidi(r) {
			return false
		}
		i += n
	}
	return true
}

func clean(s string, layout bool) string {
	if Safe(s) && (layout || !strings.ContainsAny(s, "\n\t")) {
		return s // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			switch {
			case layout:
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(" ⏎ ")
			default:
				b.WriteByte(' ')
			}
		case r == '\r' && layout && i+1 < len(s) && s[i+1] == '\n':
			// CRLF line ends lay out as the newline that follows.
		case r < 0x20:
			b.WriteRune(0x2400 + r) // Unicode's Control Pictures: ␀ … ␟, ␛ for ESC
		case r == 0x7f:
			b.WriteRune('␡')
		case isC1(r):
			// A C1 control is the 7-bit ESC sequence ESC (r-0x40): U+009B is CSI, "␛[".
			b.WriteRune('␛')
			b.WriteRune(r - 0x40)
		case isBidi(r):
			// An override or isolate reorders the rest of the line ("exe.txt" shown for
			// "txt.exe"): shown by its code point instead.
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi tells the invisible characters that change the direction of the text around them:
// the marks, embeddings, overrides and isolates of the Unicode bidirectional algorithm.
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
