package judge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/answer"
	"github.com/m3bench/m3eval/internal/chars"
)

// foldText is the first step of every comparison: the answer reader's fold (full-width to
// half-width, lower case, curly quotes straightened, white space collapsed, punctuation
// kept: clause boundaries and cues such as "no," need it), then Chinese numerals written as
// digits, so that 三 meets 3 in the token comparisons.
func foldText(s string) string {
	return zhNumeralsToDigits(answer.Fold(s))
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
		end := len(s)
		for i, c := range s {
			if !isWordRune(c) {
				end = i
				break
			}
		}
		// s[:end] is the word firstKey(s) finds: the key of the numbers it starts.
		info := lr.words[s[:end]]
		if num, used := numberWordIn(s, info.numbers); used > 0 {
			return strconv.Itoa(num), s[used:], true
		}
		w := strings.Trim(s[:end], "'")
		w = strings.TrimSuffix(w, "'s")
		if len(w) != end {
			info = lr.words[w]
		}
		if w == "" || info.dropped {
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

// numberWordIn reads an English number word ("five", "a dozen") at the start of s, on word
// boundaries, among nws (the numbers s's first word starts: LangRules.words); used is 0 when
// there is none.
func numberWordIn(s string, nws []numberWord) (n, used int) {
	for _, nw := range nws {
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
