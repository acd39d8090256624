package answer

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/chars"
)

// phraseKey is the table key of a phrase.
func phraseKey(s string) string {
	var b strings.Builder
	return joinUnits(units(fold(strings.TrimSpace(s))), &b)
}

// tkind is what a token of a response is.
type tkind uint8

const (
	tWord   tkind = iota // a word or character the vocabulary does not know
	tPunct               // punctuation
	tEntry               // a phrase of the vocabulary (ents)
	tObject              // an object: a vocabulary phrase or an unknown noun phrase
	tNumber              // a count
	tImage               // an image reference
)

// tok is one token of a response.
type tok struct {
	kind  tkind
	s, e  int
	text  string
	ents  []entry
	punct rune
	cjk   bool
	// object: key and whether it is a scene object; number and image: n.
	key   string
	known bool
	n     int
}

func (t *tok) has(c cue) bool {
	for _, e := range t.ents {
		if e.kind == kCue && e.cue == c {
			return true
		}
	}
	return false
}

func (t *tok) value() (entry, bool) {
	for _, e := range t.ents {
		if e.kind == kValue {
			return e, true
		}
	}
	return entry{}, false
}

func (t *tok) isValue() bool {
	if t.kind == tNumber {
		return true
	}
	_, ok := t.value()
	return t.kind == tEntry && ok
}

func (t *tok) plainLatin() bool { return t.kind == tWord && !t.cjk && !fnWords[t.text] }

// lookup returns the meanings of the longest phrase at us[i:] (local vocabulary first) and its
// length in units; 0 when none. A phrase never spans punctuation unless it is spelled with it.
// Only the lengths some phrase starting with the unit has are tried, joined into buf (a map
// index by string(buf) does not allocate).
func (rd *Reader) lookup(us []unit, i int, buf *[]byte) ([]entry, int) {
	maxN := min(rd.local.firstMax[us[i].text], len(us)-i)
	for n := maxN; n >= 1; n-- {
		*buf = joinInto((*buf)[:0], us[i:i+n])
		if es := rd.local.phrases[string(*buf)]; len(es) > 0 {
			return es, n
		}
	}
	return nil, 0
}

// joinInto appends units joined the way the table's phrases are written (joinUnits).
func joinInto(b []byte, us []unit) []byte {
	for i, u := range us {
		if i > 0 && !u.cjk && !us[i-1].cjk {
			b = append(b, ' ')
		}
		b = append(b, u.text...)
	}
	return b
}

// tokenize turns units into tokens: image references, counts, vocabulary phrases, words.
func (rd *Reader) tokenize(us []unit, out []tok) []tok {
	var b strings.Builder
	buf := make([]byte, 0, 64)
	for i := 0; i < len(us); {
		u := us[i]
		if u.punct != 0 {
			out = append(out, tok{kind: tPunct, s: u.s, e: u.e, text: u.text, punct: u.punct})
			i++
			continue
		}
		if !imageStarts[u.text] {
			// no image reference starts here
		} else if t, n := rd.imageRef(us, i); n > 0 {
			out = append(out, t)
			i += n
			continue
		}
		// Chinese counts: a numeral or digits with a measure word ("三个", "2只").
		if num, used := zhNumber(us[i:]); used > 0 || chars.IsDigits(u.text) {
			if used == 0 {
				num, _ = strconv.Atoi(u.text)
				used = 1
			}
			if i+used < len(us) && us[i+used].cjk && strings.Contains(zhMeasure, us[i+used].text) {
				out = append(out, tok{kind: tNumber, s: u.s, e: us[i+used].e, text: u.text, n: num, cjk: true})
				i += used + 1
				continue
			}
		}
		if chars.IsDigits(u.text) {
			// A decimal or a percentage is a measurement, not a count.
			if i+2 < len(us) && (us[i+1].punct == '.' || us[i+1].punct == ',') && chars.IsDigits(us[i+2].text) && us[i+1].e == us[i+2].s {
				out = append(out, tok{kind: tWord, s: u.s, e: us[i+2].e, text: u.text})
				i += 3
				continue
			}
			if i+1 < len(us) && us[i+1].cjk && us[i+1].s == u.e {
				// "5月12日", "3米": digits with a Chinese unit that is no measure word.
				out = append(out, tok{kind: tWord, s: u.s, e: us[i+1].e, text: u.text})
				i += 2
				continue
			}
			if i+1 < len(us) && us[i+1].punct == '%' {
				out = append(out, tok{kind: tWord, s: u.s, e: us[i+1].e, text: u.text})
				i += 2
				continue
			}
			n, _ := strconv.Atoi(u.text)
			out = append(out, tok{kind: tNumber, s: u.s, e: u.e, text: u.text, n: n})
			i++
			continue
		}
		if ents, n := rd.lookup(us, i, &buf); n > 0 {
			text := u.text
			if n > 1 {
				text = joinUnits(us[i:i+n], &b)
			}
			t := tok{kind: tEntry, s: u.s, e: us[i+n-1].e, text: text, ents: ents, cjk: u.cjk}
			for _, e := range ents {
				switch e.kind {
				case kObject:
					if _, isVal := t.value(); !isVal {
						t.kind, t.key, t.known = tObject, e.key, e.known
					}
				case kNumber:
					if _, isVal := t.value(); !isVal {
						t.kind, t.n = tNumber, e.n
					}
				}
			}
			out = append(out, t)
			i += n
			continue
		}
		out = append(out, tok{kind: tWord, s: u.s, e: u.e, text: u.text, cjk: u.cjk})
		i++
	}
	return nounPhrases(demote(out))
}

// placeSuffix are characters that make a place or a part of a Chinese object word: 咖啡馆 is
// no coffee, 火车站 no train.
const placeSuffix = "馆店厅场站室园架库间"

// zhParticles may follow a one-character value: 黑的, 黑色, 坐着, 坐在, 湿了.
const zhParticles = "的色着在了地"

// demote turns back into plain words the vocabulary matches that are parts of longer Chinese
// words: an object followed by a place suffix (咖啡馆), a one-character built-in value not
// followed by a particle, an object or the end of its clause (黑板, 大象, 公交站).
func demote(ts []tok) []tok {
	for i := range ts {
		t := &ts[i]
		if !t.cjk || (t.kind != tObject && t.kind != tEntry) {
			continue
		}
		var next *tok
		if i+1 < len(ts) {
			next = &ts[i+1]
		}
		if t.kind == tObject && !t.known {
			continue
		}
		if t.kind == tObject && next != nil && next.cjk && next.kind == tWord && strings.Contains(placeSuffix, next.text) {
			t.kind, t.ents = tWord, nil
			continue
		}
		if _, isVal := t.value(); isVal && utf8.RuneCountInString(t.text) == 1 {
			ok := next == nil || next.kind == tPunct || next.kind == tObject || strings.Contains(zhParticles, next.text) || !next.cjk
			if !ok {
				t.kind, t.ents = tWord, nil
			}
		}
	}
	return ts
}

// imageStarts are the units an image reference can start with.
var imageStarts = func() map[string]bool {
	m := map[string]bool{"last": true, "图": true, "第": true, "最": true}
	for _, w := range imageWords {
		m[w], m[w+"s"] = true, true
	}
	for w := range ordinals {
		m[w] = true
	}
	return m
}()

// imageRef reads "image 2", "picture #3", "the second image", "the last photo", "图2",
// "图片2", "第二张图", "第2张", "最后一张图" at us[i:]; n is the units it took.
func (rd *Reader) imageRef(us []unit, i int) (tok, int) {
	u := us[i]
	isImg := func(j int) bool {
		if j >= len(us) || us[j].cjk {
			return false
		}
		for _, w := range imageWords {
			if us[j].text == w || us[j].text == w+"s" {
				return true
			}
		}
		return false
	}
	last := rd.sc.Images
	if isImg(i) {
		j := i + 1
		if j < len(us) && us[j].punct == '#' {
			j++
		}
		if j < len(us) && chars.IsDigits(us[j].text) {
			n, _ := strconv.Atoi(us[j].text)
			return tok{kind: tImage, s: u.s, e: us[j].e, text: u.text, n: n}, j + 1 - i
		}
		return tok{}, 0
	}
	if n, ok := ordinals[u.text]; ok || u.text == "last" {
		if !ok {
			n = last
		}
		j := i + 1
		if j < len(us) && us[j].text == "one" {
			j++
		}
		if isImg(j) && n > 0 {
			return tok{kind: tImage, s: u.s, e: us[j].e, text: u.text, n: n}, j + 1 - i
		}
		return tok{}, 0
	}
	if !u.cjk {
		return tok{}, 0
	}
	// 图2, 图片2, 图片二
	if u.text == "图" {
		j := i + 1
		if j < len(us) && (us[j].text == "片" || us[j].text == "像") {
			j++
		}
		if j < len(us) && chars.IsDigits(us[j].text) {
			n, _ := strconv.Atoi(us[j].text)
			return tok{kind: tImage, s: u.s, e: us[j].e, text: "图", n: n}, j + 1 - i
		}
		if n, used := zhNumber(us[j:]); used > 0 && j > i+1 {
			return tok{kind: tImage, s: u.s, e: us[j+used-1].e, text: "图", n: n}, j + used - i
		}
		return tok{}, 0
	}
	// 第二张（图）, 第2幅, 最后一张
	n, j := 0, i+1
	switch {
	case u.text == "第":
		if j < len(us) && chars.IsDigits(us[j].text) {
			n, _ = strconv.Atoi(us[j].text)
			j++
		} else if v, used := zhNumber(us[j:]); used > 0 {
			n = v
			j += used
		} else {
			return tok{}, 0
		}
	case u.text == "最" && j+2 < len(us) && us[j].text == "后" && us[j+1].text == "一":
		n, j = last, j+2
		if n <= 0 {
			return tok{}, 0
		}
	default:
		return tok{}, 0
	}
	if j >= len(us) || (us[j].text != "张" && us[j].text != "幅") {
		return tok{}, 0
	}
	j++
	if j < len(us) && (us[j].text == "图" || us[j].text == "照") {
		j++
		if j < len(us) && (us[j].text == "片" || us[j].text == "像") {
			j++
		}
	}
	return tok{kind: tImage, s: u.s, e: us[j-1].e, text: "第", n: n}, j - i
}

// nounPhrases joins English words after a determiner, a count or a value into one unknown
// noun phrase ("the lawn mower", "six apples", "a red coat" → "coat"), and Chinese characters
// after a count ("三个苹果" → "苹果", up to four characters).
func nounPhrases(ts []tok) []tok {
	out := ts[:0] // in place: a phrase is never longer than the words it joins
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		out = append(out, t)
		opens := t.has(cueDet) || t.kind == tNumber || t.isValue()
		if !opens {
			continue
		}
		j := i + 1
		for j < len(ts) && ts[j].isValue() && ts[j].kind != tNumber {
			out = append(out, ts[j])
			j++
		}
		k := j
		if t.cjk {
			for k < len(ts) && k-j < 4 && ts[k].kind == tWord && ts[k].cjk && ts[k].text != "的" {
				k++
			}
		} else {
			for k < len(ts) && k-j < 3 && ts[k].plainLatin() {
				k++
			}
		}
		if k == j {
			i = j - 1
			continue
		}
		var b strings.Builder
		for x := j; x < k; x++ {
			if x > j && !ts[x].cjk {
				b.WriteByte(' ')
			}
			b.WriteString(ts[x].text)
		}
		out = append(out, tok{kind: tObject, s: ts[j].s, e: ts[k-1].e, text: b.String(), key: singular(b.String()), cjk: t.cjk})
		i = k - 1
	}
	return out
}

// scratch is the working memory of one reading.
type scratch struct {
	us []unit
	ts []tok
}

var scratchPool = sync.Pool{New: func() any { return &scratch{us: make([]unit, 0, 64), ts: make([]tok, 0, 64)} }}

// vacuous are nouns that name nothing in a scene.
var vacuous = map[string]bool{
	"evidence": true, "image": true, "picture": true, "photo": true, "thing": true, "things": true,
	"answer": true, "detail": true, "scene": true, "something": true, "everything": true,
	"question": true, "fact": true, "reason": true, "conclusion": true, "observation": true,
	"way": true, "part": true, "kind": true, "information": true, "context": true, "clue": true,
	"aspect": true, "element": true, "feature": true, "point": true, "step": true, "analysis": true,
	"view": true, "look": true, "case": true, "result": true, "situation": true,
}

// clause is a run of tokens between clause breaks.
type clause struct {
	toks     []tok
	sentence int
	lo, hi   int // toks is flat[lo:hi]
}

func isClauseBreak(r rune) bool {
	switch r {
	case '.', ',', ';', ':', '!', '?', '。', '，', '；', '：', '！', '？', '\n', '(', ')', '（', '）', '—', '…':
		return true
	}
	return false
}

func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '。', '！', '？', ';', '；', '\n', '…':
		return true
	}
	return false
}

// Read reads one response into claims.
func (rd *Reader) Read(text string) Reading {
	f := fold(text)
	r := Reading{Folded: f}
	// The units and tokens are scratch space, reused across readings (a Reading keeps only
	// strings and claims): the judge reads millions of texts.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.us = unitsInto(sc.us[:0], f)
	ts := rd.tokenize(sc.us, sc.ts[:0])
	sc.ts = ts[:0]

	// Clauses and sentences.
	// The clauses are subslices of flat: the tokens without punctuation.
	flat := ts[:0] // in place: ts is read ahead of what is written
	cls := make([]clause, 0, 8)
	qs := make([]bool, 0, 4) // per sentence: ends with a question mark
	sent, start := 0, 0
	flush := func() {
		if len(flat) > start {
			cls = append(cls, clause{toks: flat[start:len(flat):len(flat)], sentence: sent, lo: start, hi: len(flat)})
		}
		start = len(flat)
	}
	for ti := range ts {
		t := &ts[ti]
		if t.kind == tPunct && isClauseBreak(t.punct) {
			flush()
			if isSentenceEnd(t.punct) {
				for len(qs) <= sent {
					qs = append(qs, false)
				}
				qs[sent] = t.punct == '?' || t.punct == '？'
				sent++
			}
			continue
		}
		if t.kind == tPunct {
			continue
		}
		if t.has(cueContrast) || t.has(cueRetract) || t.has(cueTotal) || t.text == "actually" || t.text == "so" || t.text == "所以" {
			r.Pivots = append(r.Pivots, t.s)
		}
		if (t.has(cueContrast) || t.has(cueRetract)) && len(flat) > start {
			flush()
		}
		flat = append(flat, *t)
	}
	flush()
	for len(qs) <= sent {
		qs = append(qs, false)
	}

	// Sentence flags.
	nSent := sent + 1
	sentEnd := make([]int, nSent)
	for i := range sentEnd {
		sentEnd[i] = len(f)
	}
	for _, c := range cls {
		if c.sentence > 0 && len(c.toks) > 0 && c.toks[0].s < sentEnd[c.sentence-1] {
			sentEnd[c.sentence-1] = c.toks[0].s
		}
	}
	uncertain := make([]string, nSent)
	salad := make([]bool, nSent)
	words := make([]int, nSent)
	sentLo, sentHi := make([]int, nSent), make([]int, nSent) // the sentence's tokens: flat[lo:hi]
	for i := range sentLo {
		sentLo[i] = -1
	}
	for _, c := range cls {
		for k := range c.toks {
			if t := &c.toks[k]; t.has(cueUncertain) && uncertain[c.sentence] == "" {
				uncertain[c.sentence] = t.text
			}
		}
		words[c.sentence] += len(c.toks)
		if sentLo[c.sentence] < 0 {
			sentLo[c.sentence] = c.lo
		}
		sentHi[c.sentence] = c.hi
	}
	allSalad, worded := true, 0
	for s := range nSent {
		if words[s] == 0 {
			continue
		}
		worded++
		salad[s] = isSalad(flat[sentLo[s]:sentHi[s]], f)
		allSalad = allSalad && salad[s]
	}
	r.Salad = worded > 0 && allSalad
	r.Sentences = worded
	r.Clauses = len(cls)

	img := rd.sc.Image
	lastSubj, lastKnown := "", false
	attributed, attribSent := "", -1
	var seen, counted []string // objects mentioned; objects with a count
	for ci, c := range cls {
		if c.sentence != attribSent {
			attributed = ""
		}
		// The clause's image, subject and cues.
		var clauseImg []tok
		subj, known := "", false
		pron, pronKnown, hasPron := "", false, false
		prevPrep := false
		copulaAt := -1
		for k := range c.toks {
			t := &c.toks[k]
			switch {
			case t.kind == tImage:
				clauseImg = append(clauseImg, *t)
			case t.kind == tObject && k >= 2 && c.toks[k-1].text == "'s" && c.toks[k-2].kind == tObject && subj == c.toks[k-2].key:
				// "the man's coat": the possessed noun is the head.
				subj, known = t.key, t.known
			case t.kind == tObject:
				if t.known {
					r.known++
				}
				if !isVacuous(t) && !slices.Contains(seen, t.key) {
					seen = append(seen, t.key)
					r.Objects = append(r.Objects, t.key)
				}
				if attrNouns[t.key] != "" || isVacuous(t) {
					break
				}
				if t.cjk || chars.HasCJK(t.key) {
					if copulaAt < 0 { // Chinese: the head noun before the copula
						subj, known = t.key, t.known
					}
				} else if subj == "" && !prevPrep {
					subj, known = t.key, t.known
				}
			}
			if t.has(cueCopula) && copulaAt < 0 {
				copulaAt = k
			}
			possessive := k+1 < len(c.toks) && (c.toks[k+1].text == "的" || c.toks[k+1].text == "'s")
			if t.has(cuePronoun) && subj == "" && !hasPron && !possessive && (k+1 >= len(c.toks) || c.toks[k+1].kind != tObject) {
				// "it is red": the last subject, unless the clause names its own ("it is
				// the coat that is red").
				pron, pronKnown, hasPron = lastSubj, lastKnown, true
			}
			if t.kind == tWord && t.text == "的" && copulaAt < 0 {
				subj, known = "", false // Chinese: "苹果旁边的杯子": what follows 的 is the head
			}
			if t.has(cuePrep) {
				prevPrep = true
			} else if t.kind != tWord || !fnWords[t.text] {
				if !t.has(cueDet) {
					prevPrep = false
				}
			}
			if t.has(cueAttrib) && attributed == "" {
				attributed, attribSent = t.text, c.sentence
				subj, known, hasPron = "", false, false // the subject is the one they talk about
			}
			if attributed == "" && sayVerbs[t.text] && othersBefore(c.toks, k) {
				attributed, attribSent = t.text, c.sentence
				subj, known, hasPron = "", false, false
			}
		}
		if len(c.toks) > 0 && c.toks[0].has(cueContrast) {
			attributed = ""
		}
		ownSubj := subj
		if subj == "" && hasPron {
			subj, known = pron, pronKnown
		}
		if subj == "" {
			// No subject of its own: the first object of the clause, else the last subject.
			for ti := range c.toks {
				t := &c.toks[ti]
				if t.kind == tObject && attrNouns[t.key] == "" && !isVacuous(t) {
					subj, known = t.key, t.known
					break
				}
			}
		}
		if subj == "" {
			subj, known = lastSubj, lastKnown
		}
		if len(clauseImg) > 0 {
			img = clauseImg[len(clauseImg)-1].n
		}
		stance := func(at int) (Stance, string) {
			switch {
			case salad[c.sentence]:
				return Uncertain, "word salad"
			case uncertain[c.sentence] != "":
				return Uncertain, uncertain[c.sentence]
			case attributed != "":
				return Attributed, attributed
			}
			for k := 0; k < at; k++ {
				t := &c.toks[k]
				if t.has(cueNegation) && !(t.text == "not" && k+1 < len(c.toks) && c.toks[k+1].text == "only") {
					return Negated, t.text
				}
			}
			for ti := range c.toks {
				t := &c.toks[ti]
				if t.has(cueQuestion) {
					return Questioned, t.text
				}
			}
			if qs[c.sentence] {
				return Questioned, "?"
			}
			for ti := range c.toks {
				t := &c.toks[ti]
				if t.has(cueHedge) {
					return Hedged, t.text
				}
			}
			return Asserted, ""
		}
		claimImg := func(objKnown bool, obj string) int {
			if len(clauseImg) == 0 && objKnown && rd.objImage[obj] > 0 {
				return rd.objImage[obj]
			}
			return img
		}
		past := false
		for ti := range c.toks {
			t := &c.toks[ti]
			if t.has(cuePast) {
				past = true
			}
		}
		add := func(k int, attr, val, text, obj string, objKnown bool) {
			st, cue := stance(k)
			r.Claims = append(r.Claims, Claim{Image: claimImg(objKnown, obj), Object: obj, Known: objKnown, Attribute: attr,
				Value: val, Text: text, Stance: st, Cue: cue, Past: past, Sentence: c.sentence, Clause: ci, At: c.toks[k].s})
		}
		for k := range c.toks {
			t := &c.toks[k]
			var attr, val string
			switch {
			case t.kind == tNumber:
				if t.n < 0 || distributive(c.toks, k, f) || notCount(c.toks, k) {
					continue
				}
				attr, val = Count, strconv.Itoa(t.n)
			case t.kind == tEntry:
				e, ok := t.value()
				if !ok {
					continue
				}
				attr, val = e.attr, e.key
			case t.kind == tImage:
				// "the truck is in image 2": a placement, when a preposition puts the clause's
				// object there; "Image 2." alone answers which image. "Image 1 shows…" names
				// the topic and places nothing.
				inPrep := k > 0 && (c.toks[k-1].has(cuePrep) || (k > 1 && c.toks[k-1].has(cueDet) && c.toks[k-2].has(cuePrep)))
				switch {
				case subj != "" && inPrep:
					add(k, Image, strconv.Itoa(t.n), t.text, subj, known)
				case len(c.toks) <= 2:
					add(k, Image, strconv.Itoa(t.n), t.text, subj, known)
				}
				continue
			default:
				continue
			}
			// Attributive: the value modifies the noun after it.
			obj, objKnown := "", false
			for j := k + 1; j < len(c.toks) && j <= k+3; j++ {
				n := &c.toks[j]
				if n.kind == tObject {
					if attrNouns[n.key] == "" && !isVacuous(n) {
						obj, objKnown = n.key, n.known
					}
					break
				}
				if n.isValue() || (n.kind == tWord && n.text == "的") || n.has(cueAnd) {
					continue
				}
				break
			}
			if obj == "" {
				if t.kind == tNumber && !t.cjk && t.text == "one" {
					continue // "the one on the left", "one of them": not a count
				}
				obj, objKnown = subj, known
				if t.kind == tNumber && ownSubj == "" && slices.Contains(counted, obj) {
					// "三位顾客，两位坐在窗边": a bare count of an object already counted
					// is a part of it, not its number.
					continue
				}
			}
			add(k, attr, val, t.text, obj, objKnown)
			if attr == Count && obj != "" {
				counted = append(counted, obj)
			}
		}
		if subj != "" {
			lastSubj, lastKnown = subj, known
		}
		// A retraction takes back everything said before it.
		for ti := range c.toks {
			t := &c.toks[ti]
			if t.has(cueRetract) {
				r.Retraction = t.text
				for i := range r.Claims {
					cl := &r.Claims[i]
					if cl.At < t.s && (cl.Stance == Asserted || cl.Stance == Hedged || cl.Stance == Alternative) {
						cl.Stance, cl.Cue = Retracted, t.text
					}
				}
			}
		}
	}
	bindForward(&r)
	markAlternatives(&r, ts, sentEnd)
	return r
}

// bindForward binds a claim that found no object to the object of the next claim of the same
// attribute in its sentence: a fragment before the subject is about it ("Black at first sight,
// but the umbrella is actually red").
func bindForward(r *Reading) {
	for i := range r.Claims {
		c := &r.Claims[i]
		if c.Object != "" {
			continue
		}
		for j := i + 1; j < len(r.Claims) && r.Claims[j].Sentence == c.Sentence; j++ {
			if n := r.Claims[j]; n.Attribute == c.Attribute && n.Object != "" {
				c.Object, c.Known = n.Object, n.Known
				break
			}
		}
	}
}

// markAlternatives marks the values a sentence lists for one attribute of one object without
// committing to one: three or more distinct values, or two joined by "or" (或, 还是). A count
// followed by a total ("…so five apples in total") is a sum, not a list.
func markAlternatives(r *Reading, ts []tok, sentEnd []int) {
	if len(r.Claims) < 2 {
		return
	}
	type key struct {
		sent, img int
		obj, attr string
	}
	groups := map[key][]int{}
	var order []key
	for i, c := range r.Claims {
		if c.Stance != Asserted && c.Stance != Hedged {
			continue
		}
		k := key{c.Sentence, c.Image, c.Object, c.Attribute}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		vals := map[string]bool{}
		for _, i := range idx {
			vals[r.Claims[i].Value] = true
		}
		if len(vals) < 2 {
			continue
		}
		lo, hi := r.Claims[idx[0]].At, r.Claims[idx[len(idx)-1]].At
		or, total := "", false
		end := sentEnd[k.sent]
		for _, t := range ts {
			if t.s > lo && t.s < hi && t.has(cueOr) && or == "" {
				or = t.text
			}
			if t.s > lo && t.s < end && t.has(cueTotal) {
				total = true
			}
		}
		if total && k.attr == Count {
			continue
		}
		if (len(vals) >= 3 && listed(r.Claims, idx, ts)) || (len(vals) == 2 && or != "") {
			cue := or
			if cue == "" {
				cue = "list of " + strconv.Itoa(len(vals)) + " values"
			}
			for _, i := range idx {
				r.Claims[i].Stance, r.Claims[i].Cue = Alternative, cue
			}
		}
	}
}

// isSalad tells whether the tokens of one sentence string words together without grammar:
// English that ends on a function word ("…under the on") or puts a determiner before a
// preposition ("the on"), or runs three bare nouns together with no verb; Chinese characters
// separated by spaces.
func isSalad(ts []tok, folded string) bool {
	latin, cjk := 0, 0
	for _, t := range ts {
		if t.cjk {
			cjk++
		} else if t.kind != tPunct {
			latin++
		}
	}
	if cjk >= 3 && latin == 0 {
		spaced := 0
		for i := 1; i < len(ts); i++ {
			if ts[i].cjk && ts[i-1].cjk && ts[i].s > ts[i-1].e && folded[ts[i-1].e] == ' ' {
				spaced++
			}
		}
		return spaced*2 >= len(ts)
	}
	if latin < 4 {
		return false
	}
	last := ts[len(ts)-1]
	if last.kind == tWord || last.kind == tEntry {
		switch last.text {
		case "the", "a", "an", "on", "in", "under", "of", "to", "with", "at", "by", "and", "or", "from", "into":
			return true
		}
	}
	for i := 1; i < len(ts); i++ {
		if ts[i-1].has(cueDet) && ts[i].has(cuePrep) && !ts[i].has(cueDet) {
			return true
		}
	}
	// A list of nouns ("Bananas, oranges and strawberries.") is an answer, not a salad: bare
	// words alone do not make one.
	return false
}

// saladEnds are the function words a salad ends on ("…under the on").
var saladEnds = map[string]bool{"the": true, "a": true, "an": true, "on": true, "in": true, "under": true, "of": true,
	"to": true, "with": true, "at": true, "by": true, "and": true, "or": true, "from": true, "into": true}

// prepStarts are the first words of the prepositions.
var prepStarts = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range cueWords[cuePrep] {
		if us := units(p); len(us) > 0 {
			m[us[0].text] = true
		}
	}
	return m
}()

// Salad tells whether a text strings words together without a sentence's grammar, as
// Reading.Salad does, reading it whole only when a quick look at its words finds a sign of one
// (Chinese characters spaced apart, a sentence ending on a function word, a determiner before
// a preposition): much cheaper than Read for the texts that are not.
func (rd *Reader) Salad(text string) bool {
	f := fold(text)
	sc := scratchPool.Get().(*scratch)
	sign := saladSign(unitsInto(sc.us[:0], f))
	sc.us = sc.us[:0]
	scratchPool.Put(sc)
	if !sign {
		return false
	}
	r := rd.Read(text)
	return r.Salad
}

// saladSign is Salad's quick look at a text's units: a sign of a word salad.
func saladSign(us []unit) bool {
	for i, u := range us {
		var next *unit
		if i+1 < len(us) {
			next = &us[i+1]
		}
		switch {
		case u.cjk && next != nil && next.cjk && next.s > u.e:
			return true
		case u.punct == 0 && !u.cjk && saladEnds[u.text] && (next == nil || next.punct != 0):
			return true
		case next != nil && !next.cjk && prepStarts[next.text] && (u.text == "the" || u.text == "a" || u.text == "an" || u.text == "this" || u.text == "that" || u.text == "these" || u.text == "those"):
			return true
		}
	}
	return false
}

// Glance is what one pass over a text's words tells: Plain and Denies as those methods
// report them, and MaybeSalad, Salad's quick look (Salad is true only when MaybeSalad is and
// Read finds a salad). A caller that asks several of them of one text folds and splits it
// once instead of once each (the rule judge asked three or four a response, #43).
type Glance struct {
	Plain, Denies, MaybeSalad bool
}

// Glance looks at a text once for Plain, Denies and Salad's quick look.
func (rd *Reader) Glance(text string) Glance {
	f := fold(text)
	sc := scratchPool.Get().(*scratch)
	us := unitsInto(sc.us[:0], f)
	g := Glance{Plain: rd.plainUnits(us), Denies: deniesUnits(us), MaybeSalad: saladSign(us)}
	sc.us = us[:0]
	scratchPool.Put(sc)
	return g
}

// stanceCues are the cues that can change a claim's stance or make a later claim replace an
// earlier one, and the verbs of saying, each as its units' texts, by first unit.
var stanceCues = func() map[string][][]string {
	m := map[string][][]string{}
	add := func(w string) {
		us := units(w)
		if len(us) == 0 {
			return
		}
		p := make([]string, len(us))
		for i, u := range us {
			p[i] = u.text
		}
		m[p[0]] = append(m[p[0]], p)
	}
	for _, w := range []string{"actually", "so", "所以", "?", "？"} {
		add(w)
	}
	for _, c := range []cue{cueHedge, cueUncertain, cueAttrib, cueRetract, cueContrast, cueOr, cueQuestion, cueTotal, cuePast} {
		for _, w := range cueWords[c] {
			add(w)
		}
	}
	for w := range sayVerbs {
		add(w)
	}
	return m
}()

// stanceCueAt tells whether a stance cue starts at us[i].
func stanceCueAt(us []unit, i int) bool { return cueAt(stanceCues, us, i) }

// cueAt tells whether one of cues' phrases (indexed by their first unit) starts at us[i].
func cueAt(cues map[string][][]string, us []unit, i int) bool {
	for _, p := range cues[us[i].text] {
		if i+len(p) > len(us) {
			continue
		}
		match := true
		for j := 1; j < len(p) && match; j++ {
			match = us[i+j].text == p[j]
		}
		if match {
			return true
		}
	}
	return false
}

// Plain tells whether a text states what it says plainly: no word that could hedge, question,
// attribute, retract or replace a claim (no "but", "or", "might", "just kidding", "in total",
// "was", no question mark) and no list of three or more items. In a plain text every claim is
// asserted or negated and none replaces another, so a reader of final claims learns nothing a
// reader of values would not; Plain looks at the words only, far cheaper than Read.
func (rd *Reader) Plain(text string) bool {
	f := fold(text)
	sc := scratchPool.Get().(*scratch)
	us := unitsInto(sc.us[:0], f)
	plain := rd.plainUnits(us)
	sc.us = us[:0]
	scratchPool.Put(sc)
	return plain
}

// plainUnits is Plain over a text's units.
func (rd *Reader) plainUnits(us []unit) bool {
	run, last := 0, -10
	for i := range us {
		u := &us[i]
		if stanceCueAt(us, i) {
			return false
		}
		if rd.isValueUnit(u) {
			// A list: values separated by commas alone ("black, red, blue").
			if i == last+2 && (us[i-1].punct == ',' || us[i-1].punct == '，' || us[i-1].punct == '、') {
				run++
			} else {
				run = 1
			}
			last = i
			if run >= 3 {
				return false
			}
		}
	}
	return true
}

// isValueUnit tells a unit that starts a value of the vocabulary or a number word, or is a
// number.
func (rd *Reader) isValueUnit(u *unit) bool {
	if u.punct != 0 {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(u.text); chars.IsDigits(u.text) || zhDigit(r) >= 0 {
		return true
	}
	return rd.valueStarts[u.text]
}

// Valued tells whether a text holds a value word of the vocabulary, a number or an image
// reference anywhere: a text without one makes no claim, and Read can be skipped (cheaper
// than Read).
func (rd *Reader) Valued(text string) bool {
	f := fold(text)
	sc := scratchPool.Get().(*scratch)
	us := unitsInto(sc.us[:0], f)
	valued := false
	for i := range us {
		if rd.isValueUnit(&us[i]) || imageStarts[us[i].text] {
			valued = true
			break
		}
	}
	sc.us = us[:0]
	scratchPool.Put(sc)
	return valued
}

// distributive tells a share from a count: a number after "each", "every", "per", "每" in its
// clause ("each child gets one apple", "每排三个"), or 同一个 ("the same one").
func distributive(ts []tok, k int, folded string) bool {
	for j := 0; j < k; j++ {
		switch ts[j].text {
		case "each", "every", "per", "每":
			return true
		}
	}
	return ts[k].cjk && ts[k].s >= len("同") && folded[ts[k].s-len("同"):ts[k].s] == "同"
}

// sayVerbs report what someone says or believes.
var sayVerbs = map[string]bool{"say": true, "says": true, "said": true, "think": true, "thinks": true, "assume": true,
	"assumes": true, "believe": true, "believes": true, "claim": true, "claims": true, "suppose": true, "expect": true}

// othersBefore tells whether a verb of saying at k has others as its subject within the three
// words before it ("some people might say", "others would assume", "many believe"): what
// follows is attributed, not asserted. "I think" is a hedge, not this.
func othersBefore(ts []tok, k int) bool {
	for j := k - 1; j >= 0 && j >= k-3; j-- {
		switch ts[j].text {
		case "people", "some", "someone", "somebody", "others", "many", "one", "they", "you", "most":
			return true
		case "i", "we":
			return false
		}
		if ts[j].kind == tObject && (ts[j].key == "person" || ts[j].key == "people") {
			return true
		}
	}
	return false
}

// notCount tells a number that counts nothing here: a time ("ten past three", "three
// o'clock"), a partitive ("two of the five"), or a number after "the" with no noun ("the five":
// a reference to a count said before).
func notCount(ts []tok, k int) bool {
	if ts[k].cjk {
		return false
	}
	if k+1 < len(ts) {
		switch ts[k+1].text {
		case "past", "to", "o'clock", "am", "pm", "of", "percent", "times":
			return true
		}
	}
	if k > 0 {
		switch ts[k-1].text {
		case "past", "at", "to":
			return true
		}
	}
	if k > 0 && ts[k-1].text == "the" && (k+1 >= len(ts) || ts[k+1].kind != tObject) {
		return true
	}
	return false
}

// listed tells whether the claims idx stand in a list: nothing but commas, "or", "and",
// articles and hedges between each one and the next ("black, red, blue, or maybe white").
func listed(cl []Claim, idx []int, ts []tok) bool {
	for n := 1; n < len(idx); n++ {
		lo, hi := cl[idx[n-1]].At, cl[idx[n]].At
		for _, t := range ts {
			if t.s <= lo || t.s >= hi {
				continue
			}
			if t.kind == tPunct || t.has(cueOr) || t.has(cueAnd) || t.has(cueDet) || t.has(cueHedge) || t.has(cueCopula) {
				continue
			}
			if t.s < hi && t.e > lo && t.isValue() {
				continue
			}
			return false
		}
	}
	return true
}

// isVacuous tells an unknown noun phrase that names nothing in a scene: one of its words is
// such a noun ("the answer follows", "these observations").
func isVacuous(t *tok) bool {
	if t.known {
		return false
	}
	for _, w := range strings.Fields(t.key) {
		if vacuous[w] || vacuous[singular(w)] {
			return true
		}
	}
	return vacuous[t.key]
}

// negationCues are the negation cue words, each as its units' texts, by first unit.
var negationCues = func() map[string][][]string {
	m := map[string][][]string{}
	for _, w := range cueWords[cueNegation] {
		us := units(w)
		if len(us) == 0 {
			continue
		}
		p := make([]string, len(us))
		for i, u := range us {
			p[i] = u.text
		}
		m[p[0]] = append(m[p[0]], p)
	}
	return m
}()

// Denies tells whether a text holds a negation cue ("not", "isn't", "不"): a plain text (see
// Plain) that denies a value says something a reader of values alone gets backwards ("the
// door isn't closed" holds the word "closed"). Like Plain it looks at the words only.
func (rd *Reader) Denies(text string) bool {
	f := fold(text)
	sc := scratchPool.Get().(*scratch)
	us := unitsInto(sc.us[:0], f)
	found := deniesUnits(us)
	sc.us = us[:0]
	scratchPool.Put(sc)
	return found
}

// deniesUnits is Denies over a text's units.
func deniesUnits(us []unit) bool {
	for i := range us {
		if cueAt(negationCues, us, i) {
			return true
		}
	}
	return false
}
