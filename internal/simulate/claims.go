package simulate

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/chars"

	"github.com/m3bench/m3eval/internal/answer"
)

// The simulator reads a model's answer through internal/answer, the reader the rule judge
// uses too: an answer becomes claims (image, object, attribute, value, stance), and only a
// final asserted claim is something the model said. This file is the thin adapter between
// the reader's claims and the simulator's knowledge: which scene object a claim means, which
// of the object's attributes it speaks of, and whether its value agrees with the scene.

// groupPrefix marks a scope object that stands for a name several images' objects share
// ("person" in a two-image street scene): the claim's image says which one it means.
const groupPrefix = "~"

// kwPrefix marks the pseudo-attribute of an evidence's keywords: the reader reads a keyword
// as a value, so it gets a stance like any claim ("Nobody is standing on the platform" does
// not assert "on the platform").
const kwPrefix = "evidence:"

// readerScope is the reader's vocabulary for the knowledge: every object under its own
// names, a name shared across images as one group object, every value the scene, its
// updates and its evidence give an attribute, and each evidence's keywords.
func (k *knowledge) readerScope() (answer.Scope, map[string][]int) {
	sc := answer.Scope{Language: answer.Language(k.lang), Images: len(k.sc.Images), Values: map[string][]string{}}
	owners := map[string][]int{}
	for oi, ts := range k.terms {
		for _, t := range ts {
			if !slices.Contains(owners[t], oi) {
				owners[t] = append(owners[t], oi)
			}
		}
	}
	// A value spelled as an object's name (the puddles' position "地面", which is the ground)
	// is read as the object: the reader prefers a value to an object of the same span, and
	// the ground would never be mentioned.
	isName := func(v string) bool { _, ok := owners[strings.ToLower(strings.TrimSpace(v))]; return ok }
	groups := map[string][]int{}
	for oi, o := range k.objs {
		attrs := map[string]string{}
		for a, v := range k.cur[oi] {
			if !isName(v) {
				attrs[a] = v
			}
		}
		obj := answer.Object{ID: o.ID, Image: k.image[oi] + 1, Attributes: attrs}
		for _, t := range k.terms[oi] {
			if len(owners[t]) == 1 {
				obj.Names = append(obj.Names, t)
			}
		}
		sc.Objects = append(sc.Objects, obj)
	}
	for _, t := range slices.Sorted(maps.Keys(owners)) {
		if os := owners[t]; len(os) > 1 {
			id := groupPrefix + t
			groups[id] = os
			sc.Objects = append(sc.Objects, answer.Object{ID: id, Names: []string{t}})
		}
	}
	for _, v := range k.values {
		if v.attr != "count" && !isName(v.word) && !slices.Contains(sc.Values[v.attr], v.word) {
			sc.Values[v.attr] = append(sc.Values[v.attr], v.word)
		}
	}
	// The opposite of a scene value is a value of the same attribute ("干燥" of the ground that
	// is 潮湿): the reader's built-in words may not hold the compound.
	for oi := range k.objs {
		for a, v := range k.cur[oi] {
			if o, ok := opposites[strings.ToLower(v)]; ok && a != "count" && !isName(o) && !slices.Contains(sc.Values[a], o) {
				sc.Values[a] = append(sc.Values[a], o)
			}
		}
	}
	for _, st := range k.evidence {
		if len(st.keywords) > 0 {
			sc.Values[kwPrefix+st.ev.ID] = slices.Clone(st.keywords)
		}
	}
	return sc, groups
}

// reader is the answer reader of the knowledge's current vocabulary, compiled once per
// version (an update or a new task changes the vocabulary).
func (k *knowledge) reader() *answer.Reader {
	if k.rd == nil || k.rdVersion != k.version {
		sc, groups := k.readerScope()
		k.rd, k.groups, k.rdVersion = cachedReader(sc), groups, k.version
		k.class = make([]map[string]string, len(k.objs))
		for oi := range k.objs {
			k.class[oi] = map[string]string{}
			for a, v := range k.cur[oi] {
				k.class[oi][a] = valueClass(a, v)
			}
		}
	}
	return k.rd
}

// readers are compiled readers by their scope: every episode of a scene starts from the same
// vocabulary (and its updates often lead to the same ones), and compiling one took a third of
// the simulator's time per turn. At most maxReaders are kept; then the cache starts afresh.
var (
	readersMu sync.Mutex
	readers   = map[string]*answer.Reader{}
)

const maxReaders = 1024

// cachedReader is the reader of the scope, compiled once.
func cachedReader(sc answer.Scope) *answer.Reader {
	key := sc.Key()
	readersMu.Lock()
	defer readersMu.Unlock()
	if rd, ok := readers[key]; ok {
		return rd
	}
	if len(readers) >= maxReaders {
		clear(readers)
	}
	rd := answer.NewReader(sc)
	readers[key] = rd
	return rd
}

// valueClass is the reader's attribute for a scene value: the built-in attribute the value
// is a spelling of (the scene's "height: tall" is a size), else the scene's attribute.
func valueClass(attr, v string) string {
	key := attr + "\x00" + v
	if c, ok := valueClasses.Load(key); ok {
		return c.(string)
	}
	class := attr
	for _, c := range builtinReader().Read(v).Claims {
		if c.Attribute != "" {
			class = c.Attribute
			break
		}
	}
	valueClasses.Store(key, class)
	return class
}

// builtinReader reads with the reader's built-in vocabulary only; valueClasses remembers
// the classes of the values seen (a scene has a few dozen).
var (
	builtinReader = sync.OnceValue(func() *answer.Reader { return answer.NewReader(answer.Scope{}) })
	valueClasses  sync.Map
)

// setValue changes an object's current value (an update) and the vocabulary with it.
func (k *knowledge) setValue(oi int, attr, v string) {
	k.cur[oi][attr] = v
	k.version++
}

// resolve is the scene object a claim means: its own, or the one of the claim's image among
// the objects sharing its name; -1 when the claim names no scene object or no image says
// which (a correction must name the object the model spoke about).
func (k *knowledge) resolve(c answer.Claim) int {
	if !c.Known || c.Object == "" {
		return -1
	}
	if os, ok := k.groups[c.Object]; ok {
		found := -1
		for _, oi := range os {
			if c.Image > 0 && k.image[oi] == c.Image-1 {
				if found >= 0 {
					return -1
				}
				found = oi
			}
		}
		return found
	}
	return k.index(c.Object)
}

// attrOf is the object's attribute a claim speaks of: the claim's own when the object has
// it, else the object's attribute whose value is of the claim's kind ("short" of a platform
// whose height is tall); "" when the object has none.
func (k *knowledge) attrOf(oi int, c answer.Claim) string {
	if _, ok := k.cur[oi][c.Attribute]; ok {
		return c.Attribute
	}
	for _, a := range slices.Sorted(maps.Keys(k.cur[oi])) {
		if k.class[oi][a] == c.Attribute {
			return a
		}
	}
	return ""
}

// countOf is a count's canonical digits: the reader's, after dropping a Chinese measure
// word it does not list ("三处" → 3); ok is false when the value is no count.
func countOf(v string) (string, bool) {
	c := answer.Canonical(answer.Count, v)
	if chars.IsDigits(c) {
		return c, true
	}
	if r, n := utf8.DecodeLastRuneInString(v); n > 0 && chars.IsCJK(r) {
		if c := answer.Canonical(answer.Count, v[:len(v)-n]); chars.IsDigits(c) {
			return c, true
		}
	}
	return "", false
}

// agrees tells whether a claimed value states the scene's value of the attribute: the same
// canonical value; for a count, the same number; for a place or a state written in words,
// one inside the other ("右边" of "树干右边", "left" of "top left"). Colors and counts must
// match exactly: 粉红色 holds 红色 and is another color.
func agrees(attr string, c answer.Claim, scene string) bool {
	if attr == "count" || c.Attribute == answer.Count {
		a, okA := countOf(c.Value)
		b, okB := countOf(scene)
		if okA && okB {
			return a == b
		}
	}
	sv := answer.Canonical(c.Attribute, scene)
	if sv == c.Value || answer.SameValue(attr, c.Text, scene) {
		return true
	}
	if attr == "color" || c.Attribute == answer.Color {
		return false
	}
	// A Chinese state in another wording of the same verb or adjective: 空着 and 空的, 躺着
	// and 躺, 撑开 and 撑着 (the first character carries the meaning).
	if attr == "state" || c.Attribute == answer.State {
		a, _ := utf8.DecodeRuneInString(strings.TrimSpace(scene))
		b, _ := utf8.DecodeRuneInString(c.Text)
		if chars.IsCJK(a) && a == b {
			return true
		}
	}
	f := strings.ToLower(strings.TrimSpace(scene))
	t := strings.ToLower(c.Text)
	return strings.Contains(f, t) || strings.Contains(t, f) || strings.Contains(sv, c.Value) || strings.Contains(c.Value, sv)
}

// coordRE finds an English " and " (or " but ") that joins a new subject to the clause
// before it: "the sofa is grey and the cat is black".
var coordRE = regexp.MustCompile(`(?i)\s+(and|but|while|whereas)\s+(the|a|an|its|their|his|her|this|that|some|two|three|four|five|six)\s`)

// predicateRE is a verb, or a preposition that carries a place, that makes what follows
// "and the …" a clause of its own ("and the cat is black", "and a cup on the right").
var predicateRE = regexp.MustCompile(`(?i)\b(is|are|was|were|wears|wear|looks|look|sits|sit|stands|stand|lies|lie|seems|seem|hangs|hang|has|have|on|in|at|to|under|behind|above|below|next)\b`)

// betweenRE: "between the plate and the cup" joins two objects, not two clauses.
var betweenRE = regexp.MustCompile(`(?i)\bbetween\b[^,.;:!?]*$`)

// splitCoordination puts a comma before an " and " that starts a clause with its own
// subject and verb ("the sofa is grey, and the cat is black"), where the reader would
// otherwise keep the first clause's subject for the second clause's value. Written by hand:
// it is one rule of English punctuation, which no segmentation library applies. A list of
// objects ("a plate on the left and the apples in the middle") has no verb after "and" and
// stays as it is.
func splitCoordination(text string) string {
	ms := coordRE.FindAllStringIndex(text, -1)
	if len(ms) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		rest := text[m[1]:]
		if i := strings.IndexAny(rest, ".,;:!?"); i >= 0 {
			rest = rest[:i]
		}
		before := text[last:m[0]]
		if !predicateRE.MatchString(rest) || strings.HasSuffix(strings.TrimSpace(before), ",") || betweenRE.MatchString(before) {
			continue
		}
		b.WriteString(text[last:m[0]])
		b.WriteString(",")
		last = m[0]
	}
	b.WriteString(text[last:])
	return b.String()
}

// clothingWords are garments: a color said of one is the wearer's ("人穿着蓝色衣服", "a
// person in a red jacket"), the way scenes give a person's color.
var clothingWords = map[string]bool{
	"衣服": true, "外套": true, "上衣": true, "衬衫": true, "裙子": true, "t恤": true, "大衣": true, "夹克": true,
	"clothes": true, "shirt": true, "jacket": true, "coat": true, "dress": true, "sweater": true, "top": true, "hoodie": true,
}

// zhLocativePronouns at the start of a clause point back at the last object ("长椅在右边，上面
// 空着": on the bench); they state no place of it.
var zhLocativePronouns = map[string]bool{"上面": true, "下面": true, "里面": true, "旁边": true, "上方": true, "下方": true}

// clauseStart reports whether only white space stands between the clause's start and at.
func clauseStart(folded string, at int) bool {
	head := strings.TrimRight(folded[:at], " ")
	if head == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(head)
	return strings.ContainsRune(".!?;:,\n。！？；：，", r)
}

// vagueNouns name nothing: a count of them ("there are five things") is no count of an object.
var vagueNouns = map[string]bool{"things": true, "items": true, "objects": true, "stuff": true, "pieces": true}

// mention is where the folded text names a scene object (or a name group).
type mention struct {
	at, end int
	id      string
}

// mentionsIn finds where the folded text names scene objects, longest name first, skipping
// names inside a claimed value ("树" in the keyword "树荫").
func (k *knowledge) mentionsIn(folded string, claims []answer.Claim) []mention {
	taken := make([]bool, len(folded))
	for _, c := range claims {
		for i := c.At; i < min(c.At+len(c.Text), len(folded)); i++ {
			taken[i] = true
		}
	}
	type name struct{ term, id string }
	var names []name
	for oi, ts := range k.terms {
		for _, t := range ts {
			id := k.objs[oi].ID
			for g, os := range k.groups {
				if strings.TrimPrefix(g, groupPrefix) == t && len(os) > 1 {
					id = g
				}
			}
			names = append(names, name{t, id})
		}
	}
	slices.SortStableFunc(names, func(a, b name) int { return len(b.term) - len(a.term) })
	var out []mention
	for _, n := range names {
		for from := 0; ; {
			i := strings.Index(folded[from:], n.term)
			if i < 0 {
				break
			}
			i += from
			from = i + len(n.term)
			if taken[i] || !hasCJKPrefix(n.term) && (i > 0 && isLatin(folded[i-1]) || from < len(folded) && isLatin(folded[from]) && folded[from] != 's') {
				continue
			}
			for j := i; j < from; j++ {
				taken[j] = true
			}
			out = append(out, mention{i, from, n.id})
		}
	}
	slices.SortFunc(out, func(a, b mention) int { return a.at - b.at })
	return out
}

func hasCJKPrefix(s string) bool { r, _ := utf8.DecodeRuneInString(s); return chars.IsCJK(r) }

func isLatin(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// rebind corrects, in place, claims the reader bound to what is not their object. Written by
// hand for this adapter (no library reads these constructions):
//   - a garment's color is its wearer's: the object named before it in the sentence ("人穿着
//     蓝色衣服"), else the first named after it ("穿黑色外套的人");
//   - a Chinese value bound to no scene object, or a state verb before 在 ("狗坐在长椅上"), is
//     the clause's subject's: the object named last before it in the clause;
//   - a count of "things" counts no object.
func (k *knowledge) rebind(r *answer.Reading) {
	ms := k.mentionsIn(r.Folded, r.Claims)
	breakIn := func(s string, ends string) bool { return strings.ContainsAny(s, ends) }
	const sentenceEnds, clauseEnds = ".!?;\n。！？；", ".!?;:,\n。！？；：，"
	before := func(at int, ends string) (mention, bool) {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].end <= at {
				if breakIn(r.Folded[ms[i].end:at], ends) {
					return mention{}, false
				}
				return ms[i], true
			}
		}
		return mention{}, false
	}
	after := func(at int) (mention, bool) {
		for _, m := range ms {
			if m.at >= at {
				if breakIn(r.Folded[at:m.at], sentenceEnds) {
					return mention{}, false
				}
				return m, true
			}
		}
		return mention{}, false
	}
	keep := r.Claims[:0]
	for _, c := range r.Claims {
		end := min(c.At+len(c.Text), len(r.Folded))
		next := strings.TrimSpace(r.Folded[end:])
		switch {
		case c.Attribute == answer.Count:
			if w, _, _ := strings.Cut(next, " "); vagueNouns[strings.Trim(w, ".,;!?")] {
				continue
			}
			if !c.Known { // a count right before an object's name counts it ("两处积水")
				for oi, ts := range k.terms {
					_, n := utf8.DecodeRuneInString(next) // past a measure word: 两处积水
					if slices.ContainsFunc(ts, func(t string) bool {
						return hasCJKPrefix(t) && (strings.HasPrefix(next, t) || strings.HasPrefix(next[n:], t))
					}) {
						c.Object, c.Known = k.objs[oi].ID, true
						break
					}
				}
			}
		case c.Attribute == answer.Position && zhLocativePronouns[c.Text] && clauseStart(r.Folded, c.At):
			continue // "上面没有人": "on it", not the object's place
		case !c.Known && clothingWords[c.Object]:
			m, ok := before(c.At, sentenceEnds)
			if !ok {
				m, ok = after(end)
			}
			if ok {
				c.Object, c.Known = m.id, true
			}
		case hasCJKPrefix(c.Text) && (!c.Known || strings.HasPrefix(next, "在")) && !strings.HasPrefix(c.Attribute, kwPrefix):
			if m, ok := before(c.At, clauseEnds); ok {
				c.Object, c.Known = m.id, true
			}
		}
		if c.Image == 0 && c.Known {
			if oi := k.index(c.Object); oi >= 0 {
				c.Image = k.image[oi] + 1
			}
		}
		keep = append(keep, c)
	}
	r.Claims = keep
}

// saidText is a claimed value as a correction quotes it: as written, without the
// preposition of a place ("on the left" → "left"), a Chinese count with its measure word
// ("两处").
func saidText(folded string, c answer.Claim) string {
	t := c.Text
	for _, p := range []string{"on the ", "in the ", "at the ", "to the "} {
		t = strings.TrimPrefix(t, p)
	}
	if c.Attribute == answer.Count && hasCJKPrefix(c.Text) {
		if end := c.At + len(c.Text); end <= len(folded) {
			if r, n := utf8.DecodeRuneInString(folded[end:]); n > 0 && chars.IsCJK(r) && !strings.HasPrefix(folded[end:], c.Text) {
				t += folded[end : end+n]
			}
		}
	}
	return t
}
