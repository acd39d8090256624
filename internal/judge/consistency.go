package judge

import (
	"slices"
	"strconv"
	"strings"
)

// objMention is an object named in a text.
type objMention struct {
	at, end int
	name    string // canonical: "car" for "car", "vehicle", "汽车"
	word    string // as written (stemmed): which image holds "a woman" is not where "a man" is
}

// objects finds the rules' objects in the text, longest spelling first, without overlaps.
func (t *text) objects(r *Rules) []objMention {
	if t.objs != nil {
		return t.objs
	}
	out := []objMention{}
	taken := make([]bool, len(t.folded)+1)
	for _, h := range t.hits {
		if h.cat == catObjectStop {
			for k := h.at; k < h.end; k++ {
				taken[k] = true
			}
		}
	}
	for _, h := range t.claim(catObject, taken) {
		ow := r.objects[h.payload]
		out = append(out, objMention{at: int(h.at), end: int(h.end), name: ow.value, word: stem(ow.spelling)})
	}
	slices.SortFunc(out, func(a, b objMention) int { return a.at - b.at })
	t.objs = out
	return out
}

// sentenceOf returns the byte range of the sentence that holds offset i.
func (t *text) sentenceOf(i int) (int, int) {
	start := strings.LastIndexAny(t.folded[:i], ".!?。！？;；\n") + 1
	end := strings.IndexAny(t.folded[i:], ".!?。！？;；\n")
	if end < 0 {
		end = len(t.folded)
	} else {
		end += i
	}
	return start, end
}

// imageFor returns the image an object at offset i is placed in: the image named in its
// clause, else the last one named before it in its sentence, else the first one after it.
func (t *text) imageFor(ms []mention, i int) string {
	c := t.clauseOf(i)
	ss, se := t.sentenceOf(i)
	before, after, inClause := "", "", ""
	best := -1
	for _, m := range ms {
		if m.class != "image" || m.negated != "" {
			continue
		}
		d := m.at - i
		if d < 0 {
			d = -d
		}
		switch {
		case m.at >= c[0] && m.at < c[1]:
			if best < 0 || d < best {
				inClause, best = m.value, d
			}
		case m.at >= ss && m.at < i:
			before = m.value
		case m.at > i && m.at < se && after == "":
			after = m.value
		}
	}
	switch {
	case inClause != "":
		return inClause
	case before != "":
		return before
	}
	return after
}

// statedFacts returns what a text asserts (not negated; hedged too when hedged is set):
// attribute values of objects, counts of objects, and the image each object is in. A fact's
// key names the class, the image when one is named, and the object.
func (j *Judge) statedFacts(t *text, ms []mention, turn int) []fact {
	objs := t.objects(j.Rules)
	if len(objs) == 0 && len(ms) == 0 {
		return nil
	}
	compares := func(class string) bool { return slices.Contains(j.Rules.ConsistencyClasses, class) }
	var out []fact
	hedged := false
	add := func(class string, o objMention, value, spelling string, at int) {
		key := class + ":" + o.name
		if class == "image" {
			key = class + ":" + o.word
		} else if img := t.imageFor(ms, o.at); img != "" {
			key = class + "@" + img + ":" + o.name
		}
		out = append(out, fact{key: key, obj: o.name, value: value, spelling: spelling, turn: turn, at: at, hedged: hedged})
	}
	for _, m := range ms {
		if m.negated != "" || m.class == "image" || !compares(m.class) {
			continue
		}
		hedged = m.hedged != ""
		c := t.clauseOf(m.at)
		end := m.at + len(m.spelling)
		if m.class == "number" {
			// The object right after the number ("3 apples", "三个苹果", "two white mugs").
			if t.has(catPart, c[0], c[1]) {
				continue // a count of a part
			}
			counted := false
			for _, o := range objs {
				if o.at >= end && o.at <= end+16 && o.at < c[1] && !strings.ContainsAny(t.folded[end:o.at], "0123456789") {
					// "two white cars" counts the white cars, not the cars.
					for _, q := range ms {
						if q.class != "number" && q.class != "image" && q.at >= end && q.at < o.at {
							o.name = q.value + " " + o.name
						}
					}
					add("number", o, m.value, m.spelling, m.at)
					counted = true
					break
				}
			}
			if head, at := t.headAfter(end, c[1], ms); !counted && head != "" {
				o := objMention{at: at, end: at + len(head), name: "~" + head, word: head}
				for _, q := range ms {
					if q.class != "number" && q.class != "image" && q.at >= end && q.at < at {
						o.name = q.value + " " + o.name
					}
				}
				add("number", o, m.value, m.spelling, m.at)
			}
			continue
		}
		// An attribute value: the object it describes, nearest in its clause, after it
		// ("red car", "红色的车") or else before it ("the car is red").
		var after, before *objMention
		for k := range objs {
			o := &objs[k]
			if o.at >= end && o.at < c[1] && after == nil {
				after = o
			}
			if o.end <= m.at && o.at >= c[0] {
				before = o
			}
		}
		linked := before != nil && t.has(catCopula, before.end, m.at)
		switch {
		case linked:
			add(m.class, *before, m.value, m.spelling, m.at)
		case after != nil && (before == nil || after.at-end <= m.at-before.end+8):
			add(m.class, *after, m.value, m.spelling, m.at)
		case before != nil:
			add(m.class, *before, m.value, m.spelling, m.at)
		case patternClass[m.class]:
			// A price, date or wording of a thing outside the object list is still a
			// statement about something: compared with the others of its class.
			add(m.class, objMention{at: m.at, name: "*", word: "*"}, m.value, m.spelling, m.at)
		default:
			// A colour of a thing outside the list: the word right after it ("a red kayak").
			if head, at := t.headAfter(end, c[1], ms); head != "" && at <= end+1 {
				add(m.class, objMention{at: at, end: at + len(head), name: "~" + head, word: head}, m.value, m.spelling, m.at)
			}
		}
	}
	hedged = false
	if compares("image") {
		for _, o := range objs {
			if img := t.imageFor(ms, o.at); img != "" {
				add("image", o, img, t.folded[o.at:o.end]+" → image "+img, o.at)
			}
		}
	}
	return out
}

// changedObjects are the objects an update turn's user message names: their state may
// change there, so earlier statements about them no longer bind. Computed once a turn (the
// consistency rule and the episode's record both ask), from the user's message as the turn
// read it.
func (c *turnJudgement) changedObjects() map[string]bool {
	if c.t.ActionType != "update" {
		return nil
	}
	if c.changed == nil {
		c.changed = map[string]bool{}
		for _, o := range c.user.objects(c.r) {
			c.changed[o.name] = true
		}
		if c.meta.Entity != "" {
			for _, o := range newText(c.meta.Entity, c.lang, c.r).objects(c.r) {
				c.changed[o.name] = true
			}
		}
	}
	return c.changed
}

// consistency compares the response's assertions with what the model stated in the earlier
// turns of the episode since the last change of each object (an update turn that names it):
// a value that agrees with none of those statements is a contradiction.
func (c *turnJudgement) consistency() Value {
	if c.ep.turns == 0 {
		return Value{Value: c.naChoice("consistency"), Rule: "consistency.first_turn"}
	}
	// A model that accepts a false memory of the conversation contradicts what it said.
	if c.t.ActionType == "memory_injection" && c.sig.Resists == "No" {
		return Value{Value: "No", Rule: "consistency.accepts_false_memory"}
	}
	// So does one that apologises for, or affirms, a statement or a swap it never made.
	if c.affirmed != "" {
		return Value{Value: "No", Rule: "consistency.affirms_unsaid", Evidence: []string{c.affirmed}}
	}
	period := c.ep.period
	changed := c.changedObjects()
	now := c.facts()
	// A user who asks about image k frames the answer: objects found there are new, not
	// moved. Only a turn that plants a claim makes the model's placement a statement to check.
	var framed []string
	if !slices.Contains(c.j.misleading, c.t.ActionType) {
		for _, m := range c.user.mentions(c.r) {
			if m.class == "image" {
				framed = append(framed, m.value)
			}
		}
	}
	cur := map[string]map[string]fact{}
	var keys []string
	for _, f := range now {
		if changed[f.obj] || (classOf(f.key) == "image" && slices.Contains(framed, f.value)) {
			continue
		}
		if cur[f.key] == nil {
			cur[f.key] = map[string]fact{}
			keys = append(keys, f.key)
		}
		cur[f.key][f.value] = f
	}
	expected := func(v string) bool {
		for _, m := range c.exp.mentions(c.r) {
			if m.negated == "" && m.value == v {
				return true
			}
		}
		return false
	}
	ack := c.resp.cues(catAcknowledge)
	compared := 0
	for _, k := range keys {
		before := period[k]
		if len(before) == 0 {
			before = related(period, k)
		}
		if len(before) == 0 {
			continue
		}
		compared++
		agree := false
		for v := range cur[k] {
			if _, ok := before[v]; ok {
				agree = true
			}
		}
		if agree {
			continue
		}
		// A correction the model acknowledges, to the expected value, is not a contradiction.
		allExpected := len(ack) > 0
		for v := range cur[k] {
			allExpected = allExpected && expected(v)
		}
		if allExpected {
			continue
		}
		// The latest statement before, and the latest one now: by turn, then by place in the
		// answer ("two apples have been eaten, so 3 remain" was 3). The maps are keyed by
		// value; ranging over them alone chose among a turn's statements at random.
		var was, now fact
		for _, f := range before {
			if f.turn > was.turn || f.turn == was.turn && f.at > was.at {
				was = f
			}
		}
		now.at = -1
		for _, f := range cur[k] {
			if f.at > now.at {
				now = f
			}
		}
		return Value{Value: "No", Rule: "consistency.contradiction",
			Evidence: []string{"turn " + itoa(was.turn) + ": " + was.spelling, "now: " + now.spelling}}
	}
	if compared == 0 {
		return Value{Value: "Yes", Rule: "consistency.nothing_to_compare"}
	}
	return Value{Value: "Yes", Rule: "consistency.agrees", Evidence: []string{itoa(compared) + " statements compared"}}
}

// related returns, for a statement that names no image ("the car is blue"), the statements
// of the same class about the same object in every image; for one that names an image, the
// statements that named none.
func related(period map[string]map[string]fact, key string) map[string]fact {
	class, obj := classOf(key), key[strings.LastIndex(key, ":")+1:]
	scoped := strings.Contains(key, "@")
	out := map[string]fact{}
	for k, vals := range period {
		if k == key || classOf(k) != class || k[strings.LastIndex(k, ":")+1:] != obj {
			continue
		}
		if scoped && strings.Contains(k, "@") {
			continue // another image's object
		}
		for v, f := range vals {
			out[v] = f
		}
	}
	return out
}

func classOf(key string) string {
	for i := 0; i < len(key); i++ { // (ASCII marks: a byte loop, cheaper than IndexAny's set)
		if key[i] == '@' || key[i] == ':' {
			return key[:i]
		}
	}
	return key
}

func itoa(n int) string { return strconv.Itoa(n) }

// naChoice is the rubric's NA choice of a dimension's field.
func (c *turnJudgement) naChoice(dim string) string {
	for _, ch := range c.j.fields[dim].Choices {
		if ch.NA {
			return ch.Value
		}
	}
	return ""
}

// facts are the response's statements (hedged ones included), computed once.
func (c *turnJudgement) facts() []fact {
	if c.factsNow == nil {
		c.factsNow = c.j.statedFacts(c.resp, c.respM, c.t.Turn)
		if c.factsNow == nil {
			c.factsNow = []fact{}
		}
	}
	return c.factsNow
}

// signals fills the per-turn observations the metrics use.
func (c *turnJudgement) signals() {
	c.sig.Acknowledges = len(c.resp.cues(catAcknowledge)) > 0
	c.sig.Refuses = len(c.resp.cues(catMissing)) > 0
	c.sig.Clarifies = len(c.resp.cues(catClarify)) > 0
	if !c.sig.Clarifies {
		imgs := map[string]bool{}
		for _, m := range c.respM {
			if m.class == "image" {
				imgs[m.value] = true
			}
		}
		c.sig.Clarifies = len(imgs) >= 2 && strings.ContainsAny(c.resp.folded, "?？")
	}
	c.sig.Redundant = len(c.resp.cues(catRedundancy)) > 0
	n := len(c.resp.cues(catSpecific))
	for _, m := range c.respM {
		if m.class == "number" || m.class == "side" {
			n++
		}
	}
	c.sig.SpecificCues = n
	if len(c.meta.RequiredEvidence) > 0 {
		hit := 0
		for _, e := range c.meta.RequiredEvidence {
			et := c.canon(tokens(foldText(e), c.resp.lr, nil))
			have := tokenSet(c.canon(c.resp.toks))
			k := 0
			for _, t := range et {
				if have[t] > 0 {
					k++
				}
			}
			if len(et) > 0 && 2*k >= len(et) {
				hit++
			}
		}
		c.sig.Coverage = float64(hit) / float64(len(c.meta.RequiredEvidence))
	}
	// Leaks: a colour or count the earlier turns stated, asserted now although neither this
	// turn's question nor its expected answer holds it (context isolation on a new task).
	if len(c.ep.prior) > 0 {
		here := func(class, value string) bool {
			for _, ms := range [][]mention{c.exp.mentions(c.r), c.user.mentions(c.r)} {
				for _, m := range ms {
					if m.class == class && m.value == value {
						return true
					}
				}
			}
			return false
		}
		for _, m := range c.respM {
			if m.negated == "" && c.ep.prior[[2]string{m.class, m.value}] && !here(m.class, m.value) {
				c.sig.Leaks = true
			}
		}
	}
	if c.meta.NewValue != "" {
		if a, _ := c.found(c.refOf(c.meta.NewValue)); a != nil {
			c.sig.UsesNew = true
		}
	}
	if c.meta.OldValue != "" {
		if a, _ := c.found(c.refOf(c.meta.OldValue)); a != nil && a.hedged == "" {
			c.sig.UsesOld = true
		}
	}
}
