package judge

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/answer"
)

// text is one folded message with what the rules ask of it, computed once.
type text struct {
	raw    string
	folded string
	// afold is the answer reader's fold of raw (folded before Chinese numerals become
	// digits): the judge reads it into claims, and the reader, given it, finds nothing left to
	// fold instead of folding raw again for each of its looks (fold is idempotent).
	afold string
	lang  string
	lr    *LangRules
	toks  []string
	// hits are the phrases of every word list found in folded, in position order.
	hits []hit
	ms   []mention    // mentions, once computed
	objs []objMention // objects, once computed
	// clauses are byte ranges of folded split at punctuation and clause breaks.
	clauses [][2]int
}

func newText(raw, lang string, r *Rules) *text {
	af := answer.Fold(raw)
	t := &text{raw: raw, folded: zhNumeralsToDigits(af), afold: af, lang: lang, lr: r.lang(lang)}
	// About a token per four bytes of English and per three of Chinese: one allocation.
	t.toks = tokens(t.folded, t.lr, make([]string, 0, len(t.folded)/3+1))
	t.hits = t.lr.index.scan(t.folded, nil)
	t.clauses = t.splitClauses()
	return t
}

// isClausePunct ends a clause.
func isClausePunct(r rune) bool {
	switch r {
	case '.', ',', ';', ':', '!', '?', '。', '，', '；', '：', '！', '？', '、', '\n', '(', ')', '（', '）', '—':
		return true
	}
	return false
}

// splitClauses cuts at punctuation and before clause-break words ("but", "而是").
func (t *text) splitClauses() [][2]int {
	s := t.folded
	var out [][2]int
	start := 0
	h := 0
	for i, r := range s {
		if isClausePunct(r) {
			if r == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				continue // 3.5
			}
			out = append(out, [2]int{start, i})
			start = i + utf8.RuneLen(r)
			continue
		}
		for h < len(t.hits) && int(t.hits[h].at) < i {
			h++
		}
		for k := h; k < len(t.hits) && int(t.hits[k].at) == i; k++ {
			if t.hits[k].cat == catClauseBreak && i > start {
				out = append(out, [2]int{start, i})
				start = i
				break
			}
		}
	}
	out = append(out, [2]int{start, len(s)})
	return out
}

// boundaryAt tells whether s[i:j] (which equals w) stands as a word: Latin words need
// non-letters on both sides, CJK phrases do not.
func boundaryAt(s string, i, j int, w string) bool {
	if w == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(w)
	last, _ := utf8.DecodeLastRuneInString(w)
	if isWordRune(first) && i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWordRune(r) {
			return false
		}
	}
	if isWordRune(last) && j < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[j:]); isWordRune(r) {
			return false
		}
	}
	return true
}

// find returns the byte offsets of every occurrence of w in s as a word.
func find(s, w string, dst []int) []int {
	if w == "" {
		return dst
	}
	off := 0
	for {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return dst
		}
		i += off
		if boundaryAt(s, i, i+len(w), w) {
			dst = append(dst, i)
		}
		off = i + len(w)
	}
}

// leadingCue returns the first phrase of list that opens the text (its first clause).
func (t *text) leadingCue(list []string) string {
	s := strings.TrimLeft(t.folded, " \"'")
	for _, w := range list {
		if strings.HasPrefix(s, w) && boundaryAt(s, 0, len(w), w) {
			return w
		}
		// "yes" also opens "yes," and "yes." — the list spells the bare word.
		if n := len(w); n == 0 || w[n-1] != ',' && w[n-1] != '.' && w[n-1] != ' ' {
			continue // nothing to trim (TrimRight would give w)
		}
		if wt := strings.TrimRight(w, ",. "); wt != w && strings.HasPrefix(s, wt) && boundaryAt(s, 0, len(wt), wt) {
			return w
		}
	}
	return ""
}

// clauseOf returns the clause that holds byte offset i.
func (t *text) clauseOf(i int) [2]int {
	for _, c := range t.clauses {
		if i >= c[0] && i < c[1] {
			return c
		}
	}
	return [2]int{i, i}
}

// negatedAt returns the negation cue that stands before offset i in its clause, if any.
func (t *text) negatedAt(i int) string {
	c := t.clauseOf(i)
	return t.lastIn(catNegation, c[0], i)
}

// hedgedAt returns the hedge that stands before offset i in its clause, if any.
func (t *text) hedgedAt(i int) string {
	c := t.clauseOf(i)
	return t.lastIn(catHedge, c[0], i)
}

// mention is one attribute value, count or image index found in a text.
type mention struct {
	class, value string // class "color", "side", …, "number", "image"
	at           int    // byte offset in folded
	spelling     string
	negated      string // the negation cue before it in its clause, if any
	hedged       string
}

// mentions finds the attribute values (rules' value classes), the numbers and the image
// indices of the text.
func (t *text) mentions(r *Rules) []mention {
	if t.ms != nil {
		return t.ms
	}
	out := []mention{}
	taken := make([]bool, len(t.folded))
	for _, h := range t.claim(catValue, taken) {
		vw := r.values[h.payload]
		out = append(out, mention{class: vw.class, value: vw.value, at: int(h.at), spelling: vw.spelling})
	}
	out = append(out, t.imageMentions(r, taken)...)
	out = append(out, patternMentions(t.folded, taken)...)
	// Counts: digits not already taken as an image index.
	s := t.folded
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' || taken[i] {
			continue
		}
		if i > 0 && (isWordRune(rune(s[i-1])) || s[i-1] == '.') {
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j < len(s) && (s[j] == '.' || s[j] == '%') && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
			i = j + 1
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			continue // decimals are measurements, not counts
		}
		out = append(out, mention{class: "number", value: s[i:j], at: i, spelling: s[i:j]})
		i = j
	}
	for _, h := range t.hits {
		if h.cat == catNumberWord && !taken[h.at] {
			out = append(out, mention{class: "number", value: strconv.Itoa(int(h.payload)), at: int(h.at), spelling: t.folded[h.at:h.end]})
		}
	}
	kept := out[:0]
	for _, m := range out {
		if m.class == "number" {
			// A share is not a count: "one" in "each child gets one apple".
			if c := t.clauseOf(m.at); t.lastIn(catDistributive, c[0], m.at) != "" {
				continue
			}
		}
		m.negated = t.negatedAt(m.at)
		m.hedged = t.hedgedAt(m.at)
		kept = append(kept, m)
	}
	t.ms = kept
	return kept
}

// imageMentions finds "image 2", "the second image", "图片2", "第2张", "图2".
func (t *text) imageMentions(r *Rules, taken []bool) []mention {
	var out []mention
	s := t.folded
	var buf [8]int
	mark := func(i, j int) {
		for k := i; k < j && k < len(taken); k++ {
			taken[k] = true
		}
	}
	for _, h := range t.hits {
		if h.cat != catImageWord {
			continue
		}
		{
			i, j := int(h.at), int(h.end)
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '#') {
				k++
			}
			e := k
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			if e > k {
				out = append(out, mention{class: "image", value: s[k:e], at: i, spelling: s[i:e]})
				mark(i, e)
				continue
			}
			// "the second image": an ordinal just before.
			before := strings.TrimRight(s[:i], " ")
			for word, n := range r.Ordinals {
				if strings.HasSuffix(before, word) {
					st := len(before) - len(word)
					if boundaryAt(s, st, len(before), word) {
						out = append(out, mention{class: "image", value: strconv.Itoa(n), at: st, spelling: s[st:j]})
						mark(st, j)
					}
				}
			}
		}
	}
	if t.lang == "zh" { // 第2张
		for _, i := range find(s, "第", buf[:0]) {
			k := i + len("第")
			e := k
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			if e > k && strings.HasPrefix(s[e:], "张") {
				out = append(out, mention{class: "image", value: s[k:e], at: i, spelling: s[i : e+len("张")]})
				mark(i, e+len("张"))
			}
		}
	}
	return out
}

// content returns the tokens of the text, a set for look-ups.
func tokenSet(toks []string) map[string]int {
	m := make(map[string]int, len(toks))
	for _, t := range toks {
		m[t]++
	}
	return m
}
