package simulate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/answer"
)

// knowledge is the simulator's picture of the scene during one episode (the document's
// knowledge graph): the objects with their current attribute values (updates change them),
// the required evidence and which of it the model's answers have activated.
type knowledge struct {
	sc       *Scene
	lang     Language
	objs     []*Object
	image    []int               // image (0-based) of each object
	cur      []map[string]string // current attribute values
	terms    [][]string          // lower-case words that refer to each object
	names    []string            // how user turns name each object: qualified by its image when its name is shared
	values   []valueTerm         // words that state an attribute value
	evidence []evidenceState
	active   int // activated evidence count
	// lastEntity is the object the latest answer was about (-1: none yet).
	lastEntity int
	// coarse are the latest answer's coarse mentions: an object named without the value of
	// one of its attributes (the fine-grained action asks for it).
	coarse []coarseMention
	// said is, per object, the value the model last asserted of each attribute, as written:
	// what a follow-up may say the model said. mentioned are the objects it has named.
	said      []map[string]string
	mentioned []bool
	// The answer reader of the current vocabulary (claims.go): version counts changes of
	// the vocabulary (updates, a new task's keywords), rdVersion the one rd was built for.
	rd                 *answer.Reader
	groups             map[string][]int    // group scope object → the objects sharing its name
	class              []map[string]string // per object: attribute → the reader's attribute of its value
	version, rdVersion int
}

// coarseMention is an object an answer named without stating its attribute attr.
type coarseMention struct {
	obj  int
	attr string
}

type valueTerm struct {
	attr, canon, word string
}

type evidenceState struct {
	ev        *Evidence
	obj       int
	value     string   // the value it states ("" when keywords only)
	keywords  []string // lower case
	turn      int      // turn whose answer activated it; 0 = not yet
	statement string   // that answer's sentence
	said      string   // the value as that answer asserted it ("" for a keyword)
}

// wrongValue is an attribute value an answer gave a known object that the scene contradicts.
type wrongValue struct {
	obj     int
	attr    string
	said    string // as the answer wrote it
	correct string
	// denied: the answer denied the correct value ("the plate is not white"); said is the
	// value it denied.
	denied bool
}

// observation is what one answer showed.
type observation struct {
	activated []int // evidence indices newly activated
	errors    []wrongValue
}

func newKnowledge(sc *Scene) *knowledge {
	k := &knowledge{sc: sc, lang: sc.Language, lastEntity: -1}
	typeCount := map[string]int{}
	for i, list := range sc.ObjectsPerImage {
		for j := range list {
			o := &list[j]
			k.objs = append(k.objs, o)
			k.image = append(k.image, i)
			k.cur = append(k.cur, maps.Clone(o.Attributes))
			typeCount[o.Type]++
		}
	}
	for _, o := range k.objs {
		var ts []string
		add := func(w string) {
			w = strings.ToLower(strings.TrimSpace(w))
			if w != "" && !slices.Contains(ts, w) {
				ts = append(ts, w)
			}
		}
		add(o.Name)
		for _, a := range o.Aliases {
			add(a)
		}
		add(baseName(o.ID))
		if s, ok := typeSynonyms[o.Type]; ok && typeCount[o.Type] == 1 {
			for _, w := range s.en {
				add(w)
			}
			for _, w := range s.zh {
				add(w)
			}
		} else if !ok {
			add(strings.ReplaceAll(o.Type, "_", " "))
		}
		k.terms = append(k.terms, ts)
	}
	k.names = qualifiedNames(k.objs, k.image, k.lang)
	k.said = make([]map[string]string, len(k.objs))
	k.mentioned = make([]bool, len(k.objs))
	// Value words: every color, and every value any object (or update, or evidence) gives
	// an attribute.
	seen := map[[2]string]bool{}
	addValue := func(attr, v string) {
		c := canonical(v)
		if c == "" || seen[[2]string{attr, c}] {
			return
		}
		seen[[2]string{attr, c}] = true
		for _, w := range valueWords(v) {
			k.values = append(k.values, valueTerm{attr, c, w})
		}
	}
	for _, c := range colors {
		addValue("color", c.key)
	}
	for _, o := range k.objs {
		for _, a := range slices.Sorted(maps.Keys(o.Attributes)) {
			addValue(a, o.Attributes[a])
		}
	}
	for _, u := range sc.Updates {
		addValue(u.Attribute, u.NewValue)
	}
	// Values of every task's evidence are known from the start; the evidence tracked is the
	// first task's until setTask moves to the next.
	for _, t := range sc.Tasks() {
		for i := range t.RequiredEvidence {
			ev := &t.RequiredEvidence[i]
			if v := k.evidenceValue(ev); v != "" {
				addValue(ev.Attribute, v)
			}
		}
	}
	if sc.Task != nil {
		k.setTask(sc.Task)
	}
	// Longer words first, so "粉红色" is seen before the "红色" inside it.
	slices.SortStableFunc(k.values, func(a, b valueTerm) int { return len(b.word) - len(a.word) })
	return k
}

// evidenceValue is the value an evidence states: its own, or its object's value of its
// attribute in the scene.
func (k *knowledge) evidenceValue(ev *Evidence) string {
	if ev.Value != "" || ev.Attribute == "" {
		return ev.Value
	}
	if oi := k.index(ev.Entity); oi >= 0 {
		if k.cur != nil {
			return k.cur[oi][ev.Attribute] // an earlier update holds in a later task too
		}
		return k.objs[oi].Attributes[ev.Attribute]
	}
	return ""
}

// setTask makes t's required evidence the evidence tracked, none of it activated yet (a new
// task of a multi-task episode starts its coverage from zero; the objects keep the values
// the conversation gave them).
func (k *knowledge) setTask(t *Task) {
	k.evidence, k.active = nil, 0
	k.version++ // the task's keywords are the reader's vocabulary
	for i := range t.RequiredEvidence {
		ev := &t.RequiredEvidence[i]
		st := evidenceState{ev: ev, obj: k.index(ev.Entity)}
		st.value = k.evidenceValue(ev)
		for _, kw := range ev.Keywords {
			st.keywords = append(st.keywords, strings.ToLower(kw))
		}
		k.evidence = append(k.evidence, st)
	}
}

// index is the position of an object id in objs.
func (k *knowledge) index(id string) int {
	for i, o := range k.objs {
		if o.ID == id {
			return i
		}
	}
	return -1
}

// coverage is the share of the required evidence activated so far.
func (k *knowledge) coverage() float64 {
	if len(k.evidence) == 0 {
		return 1
	}
	return float64(k.active) / float64(len(k.evidence))
}

// observe reads an answer given at turn through the answer reader: which evidence it
// activates, which object it was about, and which attribute values it gets wrong.
//
// Only what the model finally asserts counts: a hedged, negated, questioned, listed,
// attributed or retracted claim is neither an error nor evidence. A value is wrong when an
// asserted claim gives a scene object (resolved to its image: "the car in the second image")
// a value of one of its attributes that the scene's state at this turn (updates applied)
// contradicts; a claim that no image context resolves to one object is left alone (a
// correction must name the object the model spoke about).
func (k *knowledge) observe(text string, turn int) observation {
	var ob observation
	k.coarse = k.coarse[:0]
	rd := k.reader()
	r := rd.Read(splitCoordination(text))
	k.rebind(&r)
	committed := r.Committed()
	type bound struct {
		c    answer.Claim
		obj  int
		attr string
	}
	var claims []bound
	stated := map[int]map[string]bool{}
	for _, c := range committed {
		if strings.HasPrefix(c.Attribute, kwPrefix) {
			continue
		}
		oi := k.resolve(c)
		if oi < 0 {
			continue
		}
		a := k.attrOf(oi, c)
		if a == "" {
			continue
		}
		claims = append(claims, bound{c, oi, a})
		if stated[oi] == nil {
			stated[oi] = map[string]bool{}
		}
		stated[oi][a] = true
		if k.said[oi] == nil {
			k.said[oi] = map[string]string{}
		}
		k.said[oi][a] = saidText(r.Folded, c)
		k.mentioned[oi] = true
		if !agrees(a, c, k.cur[oi][a]) {
			ob.errors = append(ob.errors, wrongValue{obj: oi, attr: a, said: saidText(r.Folded, c), correct: k.cur[oi][a]})
		}
	}
	// A denied value that the scene holds is wrong too ("the plate is not white"), when the
	// answer asserts nothing about it after the denial.
	type key struct {
		img       int
		obj, attr string
	}
	lastSaid := map[key]answer.Claim{}
	for _, c := range r.Claims {
		if c.Stance == answer.Asserted || c.Stance == answer.Negated {
			lastSaid[key{c.Image, c.Object, c.Attribute}] = c
		}
	}
	for _, c := range r.Claims {
		if c.Stance != answer.Negated || lastSaid[key{c.Image, c.Object, c.Attribute}] != c || strings.HasPrefix(c.Attribute, kwPrefix) {
			continue
		}
		oi := k.resolve(c)
		if oi < 0 {
			continue
		}
		if a := k.attrOf(oi, c); a != "" && agrees(a, c, k.cur[oi][a]) {
			ob.errors = append(ob.errors, wrongValue{obj: oi, attr: a, said: saidText(r.Folded, c), correct: k.cur[oi][a], denied: true})
		}
	}
	// Evidence: an asserted claim of its value about its object, or an asserted keyword.
	for ei := range k.evidence {
		st := &k.evidence[ei]
		if st.turn != 0 {
			continue
		}
		at, said := -1, ""
		for _, c := range committed {
			if c.Attribute == kwPrefix+st.ev.ID {
				at = c.At
				break
			}
		}
		if at < 0 && st.value != "" {
			for _, b := range claims {
				if b.obj == st.obj && (b.attr == st.ev.Attribute || st.ev.Attribute == "") && agrees(b.attr, b.c, st.value) {
					at, said = b.c.At, saidText(r.Folded, b.c)
					break
				}
			}
		}
		if at >= 0 {
			st.turn, st.statement, st.said = turn, sentenceAt(text, r.Folded, at), said
			k.active++
			ob.activated = append(ob.activated, ei)
		}
	}
	// Mentions: the objects the answer names (whatever it says of them), for follow-ups and
	// the fine-grained action's coarse mentions (an object named without the value of one
	// of its attributes).
	lastObj := -1
	for _, id := range r.Objects {
		oi := -1
		if os, ok := k.groups[id]; ok {
			if len(os) == 1 {
				oi = os[0]
			}
		} else {
			oi = k.index(id)
		}
		if oi < 0 {
			continue
		}
		k.mentioned[oi] = true
		lastObj = oi
		if slices.ContainsFunc(k.coarse, func(c coarseMention) bool { return c.obj == oi }) {
			continue
		}
		for _, a := range slices.Sorted(maps.Keys(k.cur[oi])) {
			if !stated[oi][a] {
				k.coarse = append(k.coarse, coarseMention{oi, a})
				break
			}
		}
	}
	if n := len(claims); n > 0 {
		lastObj = claims[n-1].obj
	}
	if n := len(ob.activated); n > 0 {
		k.lastEntity = k.evidence[ob.activated[n-1]].obj
	} else if lastObj >= 0 {
		k.lastEntity = lastObj
	}
	return ob
}

// sentenceAt is the sentence of the original answer that holds offset at of the reader's
// folded text: what a redundancy turn quotes ("You mentioned earlier: …"), as the model wrote
// it. Folding keeps sentence ends (it only lowers case, narrows full-width marks and collapses
// white space), so the sentence's number is the same in both texts.
func sentenceAt(text, folded string, at int) string {
	const ends = ".!?;\n。！？；"
	n := 0
	for _, r := range folded[:min(at, len(folded))] {
		if strings.ContainsRune(ends, r) {
			n++
		}
	}
	start := 0
	for i, r := range text {
		if !strings.ContainsRune(ends, r) {
			continue
		}
		if n == 0 {
			return strings.TrimSpace(text[start:i])
		}
		n--
		start = i + utf8.RuneLen(r)
	}
	return strings.TrimSpace(text[start:])
}

// qualifiedNames names each object as user turns and meta do: its display name, and, when
// an object of another image has the same name, the image too ("Image 2's person",
// "图片2的人"), so that a question, a correction or a meta entity never leaves open which
// object it means.
func qualifiedNames(objs []*Object, image []int, lang Language) []string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = displayName(o, lang)
	}
	out := make([]string, len(objs))
	for i := range objs {
		out[i] = names[i]
		for j := range objs {
			if j != i && names[j] == names[i] && image[j] != image[i] {
				out[i] = pick(lang, fmt.Sprintf("Image %d's %s", image[i]+1, names[i]), fmt.Sprintf("图片%d的%s", image[i]+1, names[i]))
				break
			}
		}
	}
	return out
}

// SplitQualified reads a name written by the simulator back into the display name and the
// image (1-based; 0 when the name carries none): "Image 2's person" -> person, 2.
func SplitQualified(name string, lang Language) (string, int) {
	var rest string
	var n int
	if lang == Chinese {
		if _, err := fmt.Sscanf(name, "图片%d的", &n); err == nil {
			_, rest, _ = strings.Cut(name, "的")
			return rest, n
		}
		return name, 0
	}
	if _, err := fmt.Sscanf(name, "Image %d's ", &n); err == nil {
		_, rest, _ = strings.Cut(name, "'s ")
		return rest, n
	}
	return name, 0
}

// missing returns the indices of evidence not yet activated, in the scene's order.
func (k *knowledge) missing() []int {
	var out []int
	for i := range k.evidence {
		if k.evidence[i].turn == 0 {
			out = append(out, i)
		}
	}
	return out
}

// nextByDependency is the first missing evidence whose dependencies are all activated (the
// next step of the reasoning chain), or the first missing one.
func (k *knowledge) nextByDependency() int {
	miss := k.missing()
	if len(miss) == 0 {
		return -1
	}
	for _, i := range miss {
		ready := true
		for _, d := range k.evidence[i].ev.DependsOn {
			for j := range k.evidence {
				if k.evidence[j].ev.ID == d && k.evidence[j].turn == 0 {
					ready = false
				}
			}
		}
		if ready {
			return i
		}
	}
	return miss[0]
}
