package simulate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	canon     string   // canonical value ("" when keywords only)
	keywords  []string // lower case
	turn      int      // turn whose answer activated it; 0 = not yet
	statement string   // that answer's sentence
}

// wrongValue is an attribute value an answer gave a known object that the scene contradicts.
type wrongValue struct {
	obj     int
	attr    string
	said    string // as the answer wrote it
	correct string
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
		return k.objs[oi].Attributes[ev.Attribute]
	}
	return ""
}

// setTask makes t's required evidence the evidence tracked, none of it activated yet (a new
// task of a multi-task episode starts its coverage from zero; the objects keep the values
// the conversation gave them).
func (k *knowledge) setTask(t *Task) {
	k.evidence, k.active = nil, 0
	for i := range t.RequiredEvidence {
		ev := &t.RequiredEvidence[i]
		st := evidenceState{ev: ev, obj: k.index(ev.Entity)}
		if v := k.evidenceValue(ev); v != "" {
			st.canon = canonical(v)
		}
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

type span struct {
	start, end int
	obj        int // entity mentions
	vt         *valueTerm
	// cands are the objects a mention may mean (several when images share a name: "the
	// person" of a two-image street scene); obj is the one the answer's image context picks,
	// or -1 when nothing picks one.
	cands []int
}

// observe reads an answer given at turn: which evidence it activates, which object it was
// about, and which attribute values it gets wrong.
//
// Objects are bound to their images: when a mention could mean objects of several images
// ("the person" of a two-image scene), the image the answer names nearest to it in the
// sentence ("Image 2: there is a person", "the person in Image 2"), else the image the
// answer last named, says which; when nothing says, the mention is left unresolved and no
// value next to it counts as wrong (a correction must name an object the model spoke about).
func (k *knowledge) observe(answer string, turn int) observation {
	var ob observation
	k.coarse = k.coarse[:0]
	lastObj, lastObjPos := -1, -1
	ctxImg := -1 // the image the answer last named (0-based), carried across sentences
	var ents, vals []span
	var buf []int
	type pos struct{ start, end int }
	byPos := map[pos][]int{}
	var order []pos
	for _, sent := range sentences(answer) {
		low := idioms.Replace(strings.ToLower(sent))
		marks := imageMarks(low)
		ents, vals = ents[:0], vals[:0]
		clear(byPos)
		order = order[:0]
		for oi, ts := range k.terms {
			for _, t := range ts {
				buf = findAll(low, t, buf[:0])
				for _, p := range buf {
					key := pos{p, p + len(t)}
					if byPos[key] == nil {
						order = append(order, key)
					}
					if !slices.Contains(byPos[key], oi) {
						byPos[key] = append(byPos[key], oi)
					}
				}
			}
		}
		for _, key := range order {
			c := byPos[key]
			sp := span{start: key.start, end: key.end, obj: c[0], cands: c}
			if len(c) > 1 {
				sp.obj = k.pickByImage(c, marks, key.start, key.end, ctxImg)
			}
			ents = append(ents, sp)
		}
		for vi := range k.values {
			vt := &k.values[vi]
			buf = findAll(low, vt.word, buf[:0])
			for _, p := range buf {
				s := span{start: p, end: p + len(vt.word), obj: -1, vt: vt}
				if !covered(s, vals) && !covered(s, ents) {
					vals = append(vals, s)
				}
			}
		}
		// Evidence: the object and its value in one sentence, or a keyword.
		for ei := range k.evidence {
			st := &k.evidence[ei]
			if st.turn != 0 {
				continue
			}
			hit := false
			for _, kw := range st.keywords {
				if strings.Contains(low, kw) {
					hit = true
					break
				}
			}
			if !hit && st.canon != "" && mentions(ents, st.obj) {
				for _, v := range vals {
					if v.vt.canon == st.canon && !negated(low, v.start) {
						hit = true
						break
					}
				}
			}
			if hit {
				st.turn, st.statement = turn, strings.TrimSpace(sent)
				k.active++
				ob.activated = append(ob.activated, ei)
			}
		}
		// Wrong values: a value word belongs to the nearest object named in the sentence,
		// and only a value the sentence asserts of one known object can be wrong.
		for _, v := range vals {
			if negated(low, v.start) {
				continue
			}
			oi := nearest(low, ents, v)
			if oi < 0 {
				continue
			}
			cur, ok := k.cur[oi][v.vt.attr]
			if !ok {
				continue
			}
			cc := canonical(cur)
			if cc == v.vt.canon || strings.Contains(cc, v.vt.canon) || strings.Contains(v.vt.canon, cc) {
				continue
			}
			ob.errors = append(ob.errors, wrongValue{obj: oi, attr: v.vt.attr, said: sent[v.start:v.end], correct: cur})
		}
		// Coarse mentions: an object named with none of the value words of one of its
		// attributes near it ("there is a person", but where, which color?).
		for _, e := range ents {
			if e.obj < 0 || slices.ContainsFunc(k.coarse, func(c coarseMention) bool { return c.obj == e.obj }) {
				continue
			}
			stated := map[string]bool{}
			for _, v := range vals {
				if nearest(low, ents, v) == e.obj {
					stated[v.vt.attr] = true
				}
			}
			for _, a := range slices.Sorted(maps.Keys(k.cur[e.obj])) {
				if !stated[a] {
					k.coarse = append(k.coarse, coarseMention{e.obj, a})
					break
				}
			}
		}
		for _, e := range ents {
			o := e.obj
			if o < 0 {
				o = e.cands[0]
			}
			if e.start >= lastObjPos || lastObj < 0 {
				lastObj, lastObjPos = o, e.start
			}
		}
		lastObjPos = -1 // positions restart with each sentence; later sentences win
		if n := len(marks); n > 0 {
			ctxImg = marks[n-1].image
		}
	}
	if n := len(ob.activated); n > 0 {
		k.lastEntity = k.evidence[ob.activated[n-1]].obj
	} else if lastObj >= 0 {
		k.lastEntity = lastObj
	}
	return ob
}

// imageMark is a place where an answer names an image ("Image 2", "图片2", "第二张").
type imageMark struct {
	start, end int
	image      int // 0-based
}

var imageMarkRE = regexp.MustCompile(`(?:image|picture|photo|img)\s*#?\s*(\d+)|图片?\s*(\d+|[一二三四五六七八九十])|第\s*(\d+|[一二三四五六七八九十])\s*张`)

const zhDigits = "一二三四五六七八九十"

// imageMarks lists the images a (lower-case) sentence names, in order.
func imageMarks(low string) []imageMark {
	var out []imageMark
	for _, m := range imageMarkRE.FindAllStringSubmatchIndex(low, -1) {
		for g := 1; g <= 3; g++ {
			if m[2*g] < 0 {
				continue
			}
			d := low[m[2*g]:m[2*g+1]]
			n, err := strconv.Atoi(d)
			if err != nil {
				n = strings.Index(zhDigits, d)/len("一") + 1
			}
			if n >= 1 {
				out = append(out, imageMark{m[0], m[1], n - 1})
			}
			break
		}
	}
	return out
}

// pickByImage resolves a mention that may mean several objects: the image named nearest to
// it in the sentence, else the image the answer named last (ctx), picks the object in that
// image; -1 when neither picks exactly one.
func (k *knowledge) pickByImage(cands []int, marks []imageMark, start, end, ctx int) int {
	img, bestD := ctx, 1<<30
	for _, m := range marks {
		d := 0
		switch {
		case m.end <= start:
			d = start - m.end
		case end <= m.start:
			d = m.start - end
		}
		if d < bestD {
			img, bestD = m.image, d
		}
	}
	if img < 0 {
		return -1
	}
	found := -1
	for _, c := range cands {
		if k.image[c] == img {
			if found >= 0 {
				return -1
			}
			found = c
		}
	}
	return found
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

// idioms are phrases whose words look like values but are not ("you are right", 明白 with
// its 白); they are
// blanked out (same length, so offsets still point into the sentence) before matching.
var idioms = func() *strings.Replacer {
	var pairs []string
	for _, p := range []string{"you are right", "you're right", "that's right", "that is right", "all right", "right now", "right away", "left out", "left over",
		"明白", "白天", "黄昏", "红绿灯", "灰心"} {
		pairs = append(pairs, p, strings.Repeat(" ", len(p)))
	}
	return strings.NewReplacer(pairs...)
}()

// covered reports whether s lies inside one of spans.
func covered(s span, spans []span) bool {
	for _, o := range spans {
		if s.start >= o.start && s.end <= o.end {
			return true
		}
	}
	return false
}

// mentions reports whether the sentence names obj: resolved to it, or unresolved among its
// candidates.
func mentions(ents []span, obj int) bool {
	for _, e := range ents {
		if e.obj == obj || (e.obj < 0 && slices.Contains(e.cands, obj)) {
			return true
		}
	}
	return false
}

// nearest is the object named closest to the value (either side), or -1 (none, or a mention
// no image context resolved). A comma between them counts as far: in "the person in Image
// 1 is red, and the person in Image 2 is red" the first red is the first person's.
func nearest(low string, ents []span, v span) int {
	best, bestD := -1, 1<<30
	for _, e := range ents {
		var d, from, to int
		switch {
		case e.end <= v.start:
			d, from, to = v.start-e.end, e.end, v.start
		case v.end <= e.start:
			d, from, to = e.start-v.end, v.end, e.start
		}
		if strings.ContainsAny(low[from:to], ",，") {
			d += 1 << 20
		}
		if d < bestD {
			best, bestD = e.obj, d
		}
	}
	return best
}

// negated reports whether a negation word ends right before position p.
func negated(low string, p int) bool {
	head := low[:p]
	for _, n := range negators {
		if strings.HasSuffix(head, n) {
			return true
		}
		// "not a red", "不是一把红色": allow one short word in between.
		if i := strings.LastIndex(head, n); i >= 0 && len(head)-(i+len(n)) <= 6 {
			return true
		}
	}
	return false
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
