package simulate

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Recognized is a user turn matched back to the template that wrote it.
type Recognized struct {
	// Key is the template list: an Action's name, or opening, opening_multi, grounding_intro,
	// grounding, grounding_plain, filler; "" when no template matches (a direct question).
	Key   string
	Slots map[string]string
}

type recognizer struct {
	key     string
	re      *regexp.Regexp
	names   []string
	literal int // literal characters: the more, the more specific the template
}

var recognizers = sync.OnceValue(func() [2][]recognizer {
	var out [2][]recognizer
	for key, pair := range parsed {
		if key == tplDirect || key == tplIrrelevantQ {
			continue
		}
		for li, list := range pair {
			for _, t := range list {
				var b strings.Builder
				r := recognizer{key: string(key)}
				b.WriteString("^")
				for i, p := range t.parts {
					if i%2 == 0 {
						b.WriteString(regexp.QuoteMeta(p))
						r.literal += len(p)
					} else if forms, ok := agreement[p]; ok {
						// A word that agrees with the object: either form, as a group.
						b.WriteString("(" + regexp.QuoteMeta(forms[0]) + "|" + regexp.QuoteMeta(forms[1]) + ")")
						r.names = append(r.names, p)
					} else if p == "entity" || p == "irrelevant_entity" {
						// An object named with its image ("Image 2's person", "图片2的人")
						// holds the possessive the template puts after it: take the
						// image part whole, so "the Image 2's person's color" reads as
						// entity "Image 2's person", attribute "color".
						b.WriteString(`((?:Image \d+'s |图片\d+的)?.+?)`)
						r.names = append(r.names, p)
					} else {
						b.WriteString("(.+?)")
						r.names = append(r.names, p)
					}
				}
				b.WriteString("$")
				r.re = regexp.MustCompile(b.String())
				out[li] = append(out[li], r)
			}
		}
	}
	return out
})

// Recognize matches a user turn against the templates of the language, for the scripted
// test server: the most specific matching template wins.
func Recognize(text string, lang Language) Recognized {
	var best *recognizer
	var bestM []string
	list := recognizers()[langIndex(lang)]
	for i := range list {
		r := &list[i]
		if best != nil && r.literal <= best.literal {
			continue
		}
		if m := r.re.FindStringSubmatch(text); m != nil {
			best, bestM = r, m
		}
	}
	if best == nil {
		return Recognized{}
	}
	rec := Recognized{Key: best.key, Slots: make(map[string]string, len(best.names))}
	for i, n := range best.names {
		rec.Slots[n] = bestM[i+1]
	}
	return rec
}

// DisplayName is how user turns name an object.
func DisplayName(o *Object, lang Language) string { return displayName(o, lang) }

// QualifiedNames are the names user turns give the scene's objects, in image order: the
// display name, with the image when another image has an object of that name.
func QualifiedNames(sc *Scene) []string { return newKnowledge(sc).names }

// TypeWord is how user turns name an object type.
func TypeWord(t string, lang Language) string { return typeWord(t, lang) }

// AttributeName is how user turns name an attribute.
func AttributeName(a string, lang Language) string { return attributeName(a, lang) }

// SameValue reports whether two words state the same value ("grey", "灰色").
func SameValue(a, b string) bool { return canonical(a) == canonical(b) }

// Tracker follows which required evidence a conversation's answers activated.
type Tracker struct{ k *knowledge }

// NewTracker starts tracking the scene's required evidence.
func NewTracker(sc *Scene) *Tracker { return &Tracker{newKnowledge(sc)} }

// NewTaskTracker tracks the required evidence of the scene's task number ti (0: task, 1:
// the first of next_tasks, ...).
func NewTaskTracker(sc *Scene, ti int) *Tracker {
	k := newKnowledge(sc)
	if ts := sc.Tasks(); ti > 0 && ti < len(ts) {
		k.setTask(ts[ti])
	}
	return &Tracker{k}
}

// Clone copies the tracker, so that a conversation's state can be extended by one answer
// without reading the earlier ones again.
func (t *Tracker) Clone() *Tracker {
	k := *t.k
	k.evidence = slices.Clone(t.k.evidence)
	k.cur = make([]map[string]string, len(t.k.cur))
	for i, m := range t.k.cur {
		k.cur[i] = maps.Clone(m)
	}
	k.said = make([]map[string]string, len(t.k.said))
	for i, m := range t.k.said {
		k.said[i] = maps.Clone(m)
	}
	k.mentioned = slices.Clone(t.k.mentioned)
	k.coarse = slices.Clone(t.k.coarse)
	return &Tracker{&k}
}

// Observe reads one answer.
func (t *Tracker) Observe(answer string) { t.k.observe(answer, 1) }

// Coverage is the share of required evidence activated so far.
func (t *Tracker) Coverage() float64 { return t.k.coverage() }

// Next is the next missing evidence of the reasoning chain, or nil.
func (t *Tracker) Next() *Evidence {
	i := t.k.nextByDependency()
	if i < 0 {
		return nil
	}
	return t.k.evidence[i].ev
}

// Missing lists the evidence not yet activated.
func (t *Tracker) Missing() []*Evidence {
	var out []*Evidence
	for _, i := range t.k.missing() {
		out = append(out, t.k.evidence[i].ev)
	}
	return out
}
