package judge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/m3bench/m3eval/internal/chars"
)

// foldText is the first step of every comparison: full-width to half-width (golang.org/x/text),
// lower case, curly quotes straightened, Chinese numerals to digits, white space collapsed.
// Punctuation is kept: clause boundaries and cues such as "no," need it.
func foldText(s string) string {
	if foldedASCII(s) {
		return s // nothing to fold (most English texts): no copy
	}
	return foldSlow(s)
}

// foldSlow is foldText rune by rune.
func foldSlow(s string) string {
	// Only the ideographic space and the Halfwidth and Fullwidth Forms block have a width
	// variant to fold to; most texts have none and skip the transformer's copy.
	if strings.ContainsFunc(s, func(r rune) bool { return r == 0x3000 || (r >= 0xFF00 && r <= 0xFFEF) }) {
		s = width.Fold.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case '\u2018', '\u2019', '\u02bc':
			r = '\''
		case '\u201c', '\u201d':
			r = '"'
		case '\u3002':
			r = '。' // stays: the ideographic full stop has no half-width form
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return zhNumeralsToDigits(b.String())
}

// foldedASCII tells an ASCII text that foldText leaves as it is: no capital letter, no white
// space but single spaces between words. A Chinese numeral is never ASCII.
func foldedASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80, 'A' <= c && c <= 'Z', c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// DetectLanguage guesses "zh" when at least a fifth of the letters are CJK, else "en".
func DetectLanguage(texts ...string) string {
	cjk, letters := 0, 0
	for _, t := range texts {
		for _, r := range t {
			switch {
			case chars.IsCJK(r):
				cjk++
				letters++
			case unicode.IsLetter(r):
				letters++
			}
		}
	}
	if letters > 0 && cjk*5 >= letters {
		return "zh"
	}
	return "en"
}

// isWordByte tells letters and digits of Latin words apart from what separates them.
func isWordRune(r rune) bool {
	if r < 0x80 {
		return r == '\'' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}
	return r == '\'' || r == '_' || (!chars.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

// tokens splits folded text into comparison tokens: Latin words (articles and stop words
// dropped, English number words turned into digits, a plural s dropped) and single CJK
// characters (stop characters dropped). Punctuation separates and is dropped.
func tokens(folded string, lr *LangRules, dst []string) []string {
	for s := folded; len(s) > 0; {
		var tok string
		var ok bool
		tok, s, ok = nextToken(s, lr)
		if ok {
			dst = append(dst, tok)
		}
	}
	return dst
}

// countTokens is len(tokens(folded, lr, nil)), up to limit (counting stops there), without
// building the list: the reasoning rules only count.
func countTokens(folded string, lr *LangRules, limit int) int {
	n := 0
	for s := folded; len(s) > 0 && n < limit; {
		var ok bool
		_, s, ok = nextToken(s, lr)
		if ok {
			n++
		}
	}
	return n
}

// nextToken reads the token at the start of s, returning the rest; ok is false when what
// was read is no token (punctuation, a stop word).
func nextToken(s string, lr *LangRules) (tok, rest string, ok bool) {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case chars.IsCJK(r):
		w := s[:n]
		return w, s[n:], !lr.stop[w]
	case isWordRune(r):
		if num, used := numberWordAt(s, lr); used > 0 {
			return strconv.Itoa(num), s[used:], true
		}
		end := len(s)
		for i, c := range s {
			if !isWordRune(c) {
				end = i
				break
			}
		}
		w := strings.Trim(s[:end], "'")
		w = strings.TrimSuffix(w, "'s")
		if w == "" || lr.stop[w] || lr.articles[w] {
			return "", s[end:], false
		}
		return stem(w), s[end:], true
	}
	return "", s[n:], false
}

// stem is a light English stemmer applied to both sides of every comparison: it drops -ing,
// -ed, a plural s and a final e, so "rising" meets "rise" and "apples" meets "apple".
// Irregular forms are left to the synonym lists.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ied"):
		w = w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = w[:n-2]
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// numberWordAt reads an English number word ("five", "a dozen") at the start of s, on word
// boundaries; used is 0 when there is none.
func numberWordAt(s string, lr *LangRules) (n, used int) {
	for _, nw := range lr.numberKeys[firstKey(s)] {
		if len(s) >= len(nw.word) && s[:len(nw.word)] == nw.word {
			if len(s) == len(nw.word) {
				return nw.n, len(nw.word)
			}
			if r, _ := utf8.DecodeRuneInString(s[len(nw.word):]); !isWordRune(r) {
				return nw.n, len(nw.word)
			}
		}
	}
	return 0, 0
}
