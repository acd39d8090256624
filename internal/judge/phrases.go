package judge

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// A text is matched against every word list of its language in one pass: the phrases are
// indexed by their first word (Latin) or first character (CJK, digits' neighbours), so each
// position of the text costs one map look-up, whatever the number of lists. (Searching each
// phrase with strings.Index cost about 150 µs a turn; the one-pass scan keeps m3eval judge
// within its 1,000,000-turns-a-minute budget.)

// cat is the list a phrase comes from.
type cat uint8

const (
	catNegation cat = iota
	catClauseBreak
	catReject
	catAccept
	catHedge
	catObservation
	catInference
	catEvidence
	catMissing
	catAcknowledge
	catClarify
	catRedundancy
	catSpecific
	catCopula
	catPart
	catImageWord
	catValue      // payload: index into Rules.values
	catObject     // payload: index into Rules.objects
	catObjectStop // words that hold an object's spelling without naming it
	catNumberWord // payload: the number
	catDistributive
	nCats
)

type phrase struct {
	text    string
	cat     cat
	payload int32
}

// hit is a phrase found at folded[at:end].
type hit struct {
	at, end int32
	cat     cat
	payload int32
}

// phraseIndex maps a first word or first character to the phrases that start with it,
// longest first.
type phraseIndex struct {
	byKey map[string][]phrase
	// punct marks the ASCII characters other than word characters that start a phrase
	// ("?"): scan looks up the other spaces and marks, most of a text's non-word positions,
	// in this table rather than in byKey.
	punct [utf8.RuneSelf]bool
	// cjk marks the characters of cjkLo–cjkHi (CJK punctuation, kana, the unified ideographs)
	// that start a phrase, a bit each: most characters of a Chinese text start none, and the
	// bit spares their map look-up.
	cjk [(cjkHi - cjkLo) / 64]uint64
}

// The range of characters phraseIndex.cjk covers.
const cjkLo, cjkHi = 0x3000, 0xA000

// firstKey is the key of a phrase or of a text position: the Latin word that starts there,
// or the one character.
func firstKey(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if !isWordRune(r) {
		return s[:n]
	}
	j := n
	for j < len(s) {
		r2, n2 := utf8.DecodeRuneInString(s[j:])
		if !isWordRune(r2) {
			break
		}
		j += n2
	}
	return s[:j]
}

func (px *phraseIndex) add(text string, c cat, payload int32) {
	if text == "" {
		return
	}
	if px.byKey == nil {
		px.byKey = map[string][]phrase{}
	}
	k := firstKey(text)
	if r := rune(k[0]); len(k) == 1 && r < utf8.RuneSelf && !isWordRune(r) {
		px.punct[r] = true
	}
	if r, n := utf8.DecodeRuneInString(k); n == len(k) && r >= cjkLo && r < cjkHi {
		px.cjk[(r-cjkLo)/64] |= 1 << ((r - cjkLo) % 64)
	}
	list := append(px.byKey[k], phrase{text, c, payload})
	// Longest first, so that a caller that takes the first hit at a position takes the
	// longest ("traffic light" before "traffic").
	for i := len(list) - 1; i > 0 && len(list[i].text) > len(list[i-1].text); i-- {
		list[i], list[i-1] = list[i-1], list[i]
	}
	px.byKey[k] = list
}

// scan finds every phrase of the index in s, standing as words, in position order.
func (px *phraseIndex) scan(s string, dst []hit) []hit {
	prevWord := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		w := isWordRune(r)
		if w && prevWord {
			i += n
			continue
		}
		prevWord = w
		if r < utf8.RuneSelf && !w && !px.punct[r] {
			i += n
			continue // no phrase starts with this space or mark
		}
		if !w && r >= cjkLo && r < cjkHi && px.cjk[(r-cjkLo)/64]&(1<<((r-cjkLo)%64)) == 0 {
			i += n
			continue // nor with this character
		}
		for _, p := range px.byKey[firstKey(s[i:])] {
			if strings.HasPrefix(s[i:], p.text) && boundaryAt(s, i, i+len(p.text), p.text) {
				dst = append(dst, hit{int32(i), int32(i + len(p.text)), p.cat, p.payload})
			}
		}
		i += n
	}
	return dst
}

// buildIndex indexes the word lists of one language and the language-free lists (values,
// objects).
func (r *Rules) buildIndex(lang string, lr *LangRules) {
	px := &phraseIndex{}
	lists := []struct {
		c    cat
		list []string
	}{
		{catNegation, lr.Negation}, {catClauseBreak, lr.ClauseBreaks}, {catReject, lr.Reject},
		{catAccept, lr.Accept}, {catHedge, lr.Hedge}, {catObservation, lr.Observation},
		{catInference, lr.Inference}, {catEvidence, lr.Evidence}, {catMissing, lr.Missing},
		{catAcknowledge, lr.Acknowledge}, {catClarify, lr.Clarify}, {catRedundancy, lr.Redundancy},
		{catSpecific, lr.Specific}, {catCopula, lr.Copula}, {catPart, r.PartCues[lang]},
		{catObjectStop, r.ObjectStop}, {catDistributive, lr.Distributive},
	}
	for _, l := range lists {
		for _, w := range l.list {
			px.add(w, l.c, 0)
		}
	}
	for _, w := range r.ImageWords[lang] {
		px.add(foldText(w), catImageWord, 0)
	}
	for i, vw := range r.values {
		px.add(vw.spelling, catValue, int32(i))
	}
	for i, ow := range r.objects {
		px.add(ow.spelling, catObject, int32(i))
		if !ow.cjk { // plurals: "books", "boxes"
			px.add(ow.spelling+"s", catObject, int32(i))
			px.add(ow.spelling+"es", catObject, int32(i))
		}
	}
	for _, nw := range lr.numbers {
		px.add(nw.word, catNumberWord, int32(nw.n))
	}
	lr.index = px
}

// has tells whether a phrase of category c stands in folded[from:to].
func (t *text) has(c cat, from, to int) bool {
	for _, h := range t.hits {
		if h.cat == c && int(h.at) >= from && int(h.end) <= to {
			return true
		}
	}
	return false
}

// cues returns the distinct phrases of category c in the text, in text order.
func (t *text) cues(c cat) []string {
	var out []string
	for _, h := range t.hits {
		if h.cat != c {
			continue
		}
		w := t.folded[h.at:h.end]
		dup := false
		for _, o := range out {
			dup = dup || o == w
		}
		if !dup {
			out = append(out, w)
		}
	}
	return out
}

// lastIn returns the text of the last phrase of category c in folded[from:to], or "".
func (t *text) lastIn(c cat, from, to int) string {
	w := ""
	for _, h := range t.hits {
		if h.cat == c && int(h.at) >= from && int(h.end) <= to {
			w = t.folded[h.at:h.end]
		}
	}
	return w
}

// claim returns the hits of category c that overlap no position already taken, the longest
// first where two overlap ("粉红色" over "红色", "traffic light" over "light"), and marks
// their positions taken.
func (t *text) claim(c cat, taken []bool) []hit {
	var hs []hit
	for _, h := range t.hits {
		if h.cat == c {
			hs = append(hs, h)
		}
	}
	slices.SortStableFunc(hs, func(a, b hit) int { return int(b.end-b.at) - int(a.end-a.at) })
	out := hs[:0]
	for _, h := range hs {
		if taken[h.at] || taken[h.end-1] {
			continue
		}
		for k := h.at; k < h.end; k++ {
			taken[k] = true
		}
		out = append(out, h)
	}
	return out
}
