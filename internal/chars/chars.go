// Package chars holds the character classes the text readers share (the rule judge, the
// answer reader, the simulator, the IllusionBench scorer), so that they draw the line between
// scripts, and between digits and the rest, in one place (#42: each had its own, and they
// disagreed on Hangul and on where the CJK range starts).
package chars

import "unicode"

// IsCJK reports a character of a script written without spaces between words: Han,
// Hiragana or Katakana. The readers take each as one token. Hangul is not one of them:
// Korean puts spaces between words, which are read as words (and a reader that took
// Hangul syllables for CJK characters would read spaced Korean as Chinese characters set
// apart, a sign of a word salad).
func IsCJK(r rune) bool {
	if r < 0x2E80 { // below the CJK Radicals Supplement: none (the common case, checked first)
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// HasCJK reports whether s holds a character IsCJK reports.
func HasCJK(s string) bool {
	for _, r := range s {
		if IsCJK(r) {
			return true
		}
	}
	return false
}

// IsDigits reports a non-empty string of ASCII digits only.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
