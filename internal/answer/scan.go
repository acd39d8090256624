package answer

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/m3bench/m3eval/internal/chars"
)

// Fold is the form every text and word list is compared in: full-width to half-width
// (golang.org/x/text/width), lower case, curly quotes straightened, white space collapsed;
// punctuation and Chinese numerals kept (the reader reads 三个 with its measure word, and
// its claims' offsets point into the folded text). The rule judge folds with it too and then
// writes Chinese numerals as digits, which its token comparisons need.
func Fold(s string) string { return fold(s) }

func fold(s string) string {
	if f, ok := foldASCII(s); ok {
		return f
	}
	if folded(s) {
		return s
	}
	return foldRunes(s)
}

// foldRunes is fold rune by rune, without the shortcuts.
func foldRunes(s string) string {
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
	return b.String()
}

// folded tells a text fold would return unchanged (most Chinese answers): no upper case, no
// white space but single spaces inside, no curly quotes, no full-width forms.
func folded(s string) bool {
	prevSpace := true
	for _, r := range s {
		switch {
		case r == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		case r == 0x3000 || (r >= 0xFF00 && r <= 0xFFEF), r == '\u2018', r == '\u2019', r == '\u02bc', r == '\u201c', r == '\u201d':
			return false
		case r < 0x80 && ('A' <= r && r <= 'Z' || r < ' '):
			return false
		case r >= 0x80 && (unicode.ToLower(r) != r || unicode.IsSpace(r)):
			// Not IsUpper: a title-case letter (ǅ) or a circled capital (Ⓐ) is not upper case
			// but lowers all the same.
			return false
		}
		prevSpace = false
	}
	return !prevSpace || s == ""
}

// foldASCII is fold for ASCII text, byte by byte (most English answers); ok is false when s
// holds anything else.
func foldASCII(s string) (string, bool) {
	clean := true // already lower case, single spaces, no leading or trailing space
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return "", false
		case 'A' <= c && c <= 'Z', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			clean = false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			clean = false
		}
	}
	if clean {
		return s, true
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = true
			continue
		}
		if space && len(b) > 0 {
			b = append(b, ' ')
		}
		space = false
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b), true
}

func isWordRune(r rune) bool {
	return r == '\'' || r == '-' || (!chars.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

// unit is one word of Latin text or one CJK character, or a punctuation mark.
type unit struct {
	s, e  int
	text  string
	cjk   bool
	punct rune // the mark, for punctuation units
}

// units cuts folded text into words, CJK characters and punctuation; white space separates.
func units(s string) []unit { return unitsInto(make([]unit, 0, len(s)/4), s) }

// unitsInto is units appending to out.
func unitsInto(out []unit, s string) []unit {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ' ':
			i += n
		case chars.IsCJK(r):
			out = append(out, unit{s: i, e: i + n, text: s[i : i+n], cjk: true})
			i += n
		case isWordRune(r) && r != '\'' && r != '-':
			j := i
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) || chars.IsCJK(r2) {
					break
				}
				j += n2
			}
			w := strings.TrimRight(s[i:j], "'-")
			j = i + len(w)
			if strings.HasSuffix(w, "'s") && len(w) > 2 { // "apples's", "it's": two units
				out = append(out, unit{s: i, e: j - 2, text: w[:len(w)-2]}, unit{s: j - 2, e: j, text: "'s"})
			} else if strings.HasSuffix(w, "n't") && len(w) > 3 {
				out = append(out, unit{s: i, e: j, text: w})
			} else {
				out = append(out, unit{s: i, e: j, text: w})
			}
			i = j
			if i < len(s) && (s[i] == '\'' || s[i] == '-') {
				i++
			}
		default:
			out = append(out, unit{s: i, e: i + n, text: s[i : i+n], punct: r})
			i += n
		}
	}
	return out
}

// kind is what a phrase of the vocabulary is.
type kind uint8

const (
	kValue  kind = iota + 1 // a value of an attribute
	kObject                 // a scene object or a vocabulary noun
	kNumber                 // an English number word
	kCue                    // a cue word
	kImage                  // "image", "picture"
	kOrd                    // an ordinal
	kStop                   // a word that holds an object's name without naming it
)

// entry is one meaning of a phrase.
type entry struct {
	kind      kind
	attr, key string // value: attribute and canonical value; object: its ID
	known     bool   // object: a scene object (not a vocabulary noun)
	n         int    // number, ordinal
	cue       cue
}

// table maps phrases (units joined: Latin words by a space, CJK characters by nothing) to
// their meanings. maxLen is the longest phrase in units.
type table struct {
	phrases map[string][]entry
	maxLen  int
	// firstMax is, per first unit of a phrase, the longest phrase starting with it.
	firstMax map[string]int
}

func (t *table) add(phrase string, e entry) {
	us := units(fold(strings.TrimSpace(phrase)))
	if len(us) == 0 {
		return
	}
	var b strings.Builder
	p := joinUnits(us, &b)
	if phrase == "'s" { // the clitic is one unit of a text (see units)
		us, p = []unit{{text: "'s"}}, "'s"
	}
	for _, x := range t.phrases[p] {
		if x == e {
			return
		}
	}
	t.phrases[p] = append(t.phrases[p], e)
	if len(us) > t.maxLen {
		t.maxLen = len(us)
	}
	if len(us) > t.firstMax[us[0].text] {
		t.firstMax[us[0].text] = len(us)
	}
}

// builtinTable is the built-in vocabulary, compiled once.
var builtinTable = sync.OnceValue(func() *table {
	t := &table{phrases: map[string][]entry{}, firstMax: map[string]int{}}
	for _, v := range builtinValues {
		for _, w := range v.words {
			t.add(w, entry{kind: kValue, attr: v.attr, key: v.key})
		}
	}
	for w, n := range enNumbers {
		t.add(w, entry{kind: kNumber, n: n})
	}
	for w, n := range ordinals {
		t.add(w, entry{kind: kOrd, n: n})
	}
	t.add("last", entry{kind: kOrd, n: -1})
	for _, w := range imageWords {
		t.add(w, entry{kind: kImage})
		t.add(w+"s", entry{kind: kImage})
	}
	for c, words := range cueWords {
		for _, w := range words {
			t.add(w, entry{kind: kCue, cue: c})
		}
	}
	for _, w := range []string{"and", "as well as", "plus", "和", "与", "以及", "还有", "及"} {
		t.add(w, entry{kind: kCue, cue: cueAnd})
	}
	return t
})

// cueAnd joins values that hold together ("red and white").
const cueAnd cue = 100

// Reader reads responses against one compiled scope.
type Reader struct {
	sc       Scope
	local    *table         // the scope's objects and values
	objImage map[string]int // object ID → its image
	// valueStarts are the first units of the values and number words (Plain, Valued).
	valueStarts map[string]bool
}

// NewReader compiles a scope's vocabulary.
func NewReader(sc Scope) *Reader {
	rd := &Reader{sc: sc, local: &table{phrases: map[string][]entry{}, firstMax: map[string]int{}}, objImage: map[string]int{}}
	for _, o := range sc.Objects {
		rd.objImage[o.ID] = o.Image
		names := append([]string{o.ID}, o.Names...)
		for _, n := range names {
			n = strings.ReplaceAll(n, "_", " ")
			rd.local.add(n, entry{kind: kObject, key: o.ID, known: true})
			if !chars.HasCJK(n) && !strings.HasSuffix(n, "s") {
				rd.local.add(n+"s", entry{kind: kObject, key: o.ID, known: true})
			}
		}
		for a, v := range o.Attributes {
			if a == Count {
				continue
			}
			rd.local.add(v, entry{kind: kValue, attr: a, key: canonicalScene(a, v)})
		}
	}
	for a, vs := range sc.Values {
		for _, v := range vs {
			key, sp, ok := strings.Cut(v, "=")
			if !ok {
				key, sp = v, v
			}
			rd.local.add(sp, entry{kind: kValue, attr: a, key: canonicalScene(a, key)})
		}
	}
	for _, w := range sc.Stop {
		rd.local.add(w, entry{kind: kStop})
	}
	// The built-in vocabulary joins the scope's (after it: the scene's meanings come first),
	// so that a lookup is one map access.
	bt := builtinTable()
	for k, es := range bt.phrases {
		rd.local.phrases[k] = append(slices.Clip(rd.local.phrases[k]), es...)
	}
	for k, n := range bt.firstMax {
		rd.local.firstMax[k] = max(rd.local.firstMax[k], n)
	}
	rd.local.maxLen = max(rd.local.maxLen, bt.maxLen)
	rd.valueStarts = map[string]bool{}
	for k, es := range rd.local.phrases {
		for _, e := range es {
			if e.kind == kValue || e.kind == kNumber {
				rd.valueStarts[units(k)[0].text] = true
				break
			}
		}
	}
	return rd
}

// canonicalScene is a scene value's canonical form: the built-in one when the built-in
// vocabulary knows the spelling for that attribute, else the value folded.
func canonicalScene(attr, v string) string {
	f := fold(strings.TrimSpace(v))
	for _, e := range builtinTable().phrases[phraseKey(f)] {
		if e.kind == kValue && e.attr == attr {
			return e.key
		}
	}
	return f
}

// joinUnits joins units the way the table's phrases are written.
func joinUnits(us []unit, b *strings.Builder) string {
	b.Reset()
	for i, u := range us {
		if i > 0 && !u.cjk && !us[i-1].cjk {
			b.WriteByte(' ')
		}
		b.WriteString(u.text)
	}
	return b.String()
}

// zhDigit is the value of a Chinese numeral character, -1 for none.
func zhDigit(r rune) int {
	switch r {
	case '零', '〇':
		return 0
	case '一':
		return 1
	case '二', '两':
		return 2
	case '三':
		return 3
	case '四':
		return 4
	case '五':
		return 5
	case '六':
		return 6
	case '七':
		return 7
	case '八':
		return 8
	case '九':
		return 9
	case '十':
		return 10
	case '百':
		return 100
	}
	return -1
}

// zhNumber reads a Chinese numeral ("三", "十二", "二十五", "一百") or digits from the
// characters of us; used is how many units it took, 0 when none.
func zhNumber(us []unit) (n, used int) {
	total, cur := 0, 0
	for used < len(us) && us[used].cjk {
		r, _ := utf8.DecodeRuneInString(us[used].text)
		d := zhDigit(r)
		if d < 0 {
			break
		}
		switch d {
		case 10, 100:
			if cur == 0 {
				cur = 1
			}
			total += cur * d
			cur = 0
		default:
			cur = cur*10 + d
		}
		used++
	}
	if used == 0 {
		return 0, 0
	}
	return total + cur, used
}

// parseCount reads a count written in digits, an English number word or a Chinese numeral.
func parseCount(v string) (string, bool) {
	if n, err := strconv.Atoi(v); err == nil {
		return strconv.Itoa(n), true
	}
	if n, ok := enNumbers[v]; ok && n >= 0 {
		return strconv.Itoa(n), true
	}
	us := units(v)
	if n, used := zhNumber(us); used > 0 && used == len(us) {
		return strconv.Itoa(n), true
	}
	return "", false
}

// singular drops an English plural ending from the last word of a noun phrase.
func singular(p string) string {
	if chars.HasCJK(p) {
		return p
	}
	n := len(p)
	switch {
	case n > 4 && strings.HasSuffix(p, "ies"):
		return p[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(p, "ches") || strings.HasSuffix(p, "shes") || strings.HasSuffix(p, "xes") || strings.HasSuffix(p, "sses")):
		return p[:n-2]
	case n > 3 && strings.HasSuffix(p, "s") && !strings.HasSuffix(p, "ss") && !strings.HasSuffix(p, "us") && !strings.HasSuffix(p, "is"):
		return p[:n-1]
	}
	switch p {
	case "people", "men", "women", "children":
		return map[string]string{"people": "person", "men": "man", "women": "woman", "children": "child"}[p]
	}
	return p
}
