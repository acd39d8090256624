package judge

import (
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
)

// factKey names what a mention says something about: the class, the image the sentence is
// about (if it names one) and the noun the value describes.
func factKey(class, image, noun string) string {
	if image != "" {
		return class + "@" + image + ":" + noun
	}
	return class + ":" + noun
}

// statedFacts returns the values a text asserts (not negated, not hedged) about a noun:
// colours and other attribute values, counts, and which image holds a noun.
func (j *Judge) statedFacts(t *text, ms []mention, turn int, byUser bool) []fact {
	var out []fact
	for _, m := range ms {
		if m.negated != "" || m.hedged != "" {
			continue
		}
		img := imageOfSentence(t, ms, m.at)
		noun := m.noun
		if m.class != "image" && m.class != "number" {
			if nb := nounBefore(t, m.at); nb != "" && (noun == "" || m.class == "color") {
				noun = nb
			}
		}
		if m.class == "image" {
			noun = t.nounAfter(m.at + len(m.spelling))
			img = ""
		}
		if noun == "" {
			continue
		}
		if s, ok := j.Rules.synonym[noun]; ok {
			noun = s
		}
		out = append(out, fact{key: factKey(m.class, img, noun), value: m.value, spelling: m.spelling, turn: turn, byUser: byUser})
	}
	return out
}

// imageOfSentence returns the image index named in the sentence that holds offset i, before
// it, if any.
func imageOfSentence(t *text, ms []mention, i int) string {
	start := strings.LastIndexAny(t.folded[:i], ".!?。！？\n")
	img := ""
	for _, m := range ms {
		if m.class == "image" && m.at > start && m.at < i {
			img = m.value
		}
	}
	return img
}

// nounBefore returns the first content token of the clause before offset i ("the car is
// red" → car); for Chinese the two characters that open it.
func nounBefore(t *text, i int) string {
	c := t.clauseOf(i)
	toks := tokens(t.folded[c[0]:i], t.lr, nil)
	for k, tk := range toks {
		if _, isNum := atoiOK(tk); isNum || measureWords[tk] {
			continue
		}
		if isCJK([]rune(tk)[0]) {
			if k+1 < len(toks) && isCJK([]rune(toks[k+1])[0]) {
				return tk + toks[k+1]
			}
			return tk
		}
		return tk
	}
	return ""
}

func atoiOK(s string) (int, bool) {
	n := 0
	if s == "" {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

// facts collects what a judged turn adds to the episode's record: the model's assertions,
// and, for an update, the user's new state (meta.new_value when given).
func (j *Judge) facts(t *dataset.Turn, meta dataset.Meta, lang string) []fact {
	resp := newText(t.VLMResponse, lang, j.Rules)
	out := j.statedFacts(resp, resp.mentions(j.Rules), t.Turn, false)
	if t.ActionType == "update" || t.ActionType == "negation" {
		user := newText(t.UserMessage, lang, j.Rules)
		uf := j.statedFacts(user, user.mentions(j.Rules), t.Turn, true)
		// The last statement of a key in the user's message is the new state ("was red,
		// now blue").
		last := map[string]int{}
		for k, f := range uf {
			last[f.key] = k
		}
		for k, f := range uf {
			if last[f.key] == k {
				out = append(out, f)
			}
		}
	}
	return out
}

// consistency compares the response's assertions with what the model stated in earlier
// turns of the episode (the latest statement of each key counts; an update or a correction
// by the user replaces it).
func (c *ctx) consistency() Value {
	if len(c.hist) == 0 {
		return Value{Value: c.naChoice("consistency"), Rule: "consistency.first_turn"}
	}
	latest := map[string]fact{}
	for _, h := range c.hist {
		for _, f := range h.facts {
			latest[f.key] = f
		}
	}
	now := c.j.statedFacts(c.resp, c.respM, c.t.Turn, false)
	// A value this turn's user message gives (an update, a correction) is not the model
	// contradicting itself when it repeats it.
	userVals := map[string]bool{}
	if c.t.ActionType == "update" || c.t.ActionType == "negation" {
		for _, m := range c.user.mentions(c.r) {
			if m.negated == "" {
				userVals[m.class+"="+m.value] = true
			}
		}
	}
	ack := c.resp.cues(c.resp.lr.Acknowledge)
	compared := 0
	nowVals := map[string]map[string]bool{}
	for _, f := range now {
		if nowVals[f.key] == nil {
			nowVals[f.key] = map[string]bool{}
		}
		nowVals[f.key][f.value] = true
	}
	for _, f := range now {
		old, ok := latest[f.key]
		if !ok {
			continue
		}
		compared++
		if old.value == f.value || nowVals[f.key][old.value] {
			continue // the same, or the old value restated beside another (a list)
		}
		if userVals[classOf(f.key)+"="+f.value] {
			continue
		}
		if len(ack) > 0 {
			continue
		}
		return Value{Value: "No", Rule: "consistency.contradiction",
			Evidence: []string{"turn " + itoa(old.turn) + ": " + old.spelling, "now: " + f.spelling}}
	}
	if compared == 0 {
		return Value{Value: "Yes", Rule: "consistency.nothing_to_compare"}
	}
	return Value{Value: "Yes", Rule: "consistency.agrees", Evidence: []string{itoa(compared) + " statements compared"}}
}

func classOf(key string) string {
	if i := strings.IndexAny(key, "@:"); i >= 0 {
		return key[:i]
	}
	return key
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// naChoice is the rubric's NA choice of a dimension's field.
func (c *ctx) naChoice(dim string) string {
	for _, ch := range c.j.fields[dim].Choices {
		if ch.NA {
			return ch.Value
		}
	}
	return ""
}

// signals fills the per-turn observations the metrics use.
func (c *ctx) signals() {
	lr := c.resp.lr
	c.sig.Acknowledges = len(c.resp.cues(lr.Acknowledge)) > 0
	c.sig.Refuses = len(c.resp.cues(lr.Missing)) > 0
	c.sig.Clarifies = len(c.resp.cues(lr.Clarify)) > 0
	if !c.sig.Clarifies {
		imgs := map[string]bool{}
		for _, m := range c.respM {
			if m.class == "image" {
				imgs[m.value] = true
			}
		}
		c.sig.Clarifies = len(imgs) >= 2 && strings.ContainsAny(c.resp.folded, "?？")
	}
	c.sig.Redundant = len(c.resp.cues(lr.Redundancy)) > 0
	n := len(c.resp.cues(lr.Specific))
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
