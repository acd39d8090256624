package answer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Language is the language of a response. The reader reads both languages in every text (a
// Chinese answer may name "Image 2"); the language only decides which object names a scene's
// objects are given when the scene names them in one language.
type Language string

// The languages the reader has word lists for.
const (
	English Language = "en"
	Chinese Language = "zh"
)

// Image is the attribute of a claim that places an object in an image ("the truck is in image
// 2": object truck, attribute image, value "2").
const Image = "image"

// Stance is how a claim is put: only an Asserted claim commits the model to its value.
type Stance uint8

// The stances, from committed to taken back.
const (
	Asserted    Stance = iota // "the cup is green"
	Negated                   // "the cup is not green"
	Questioned                // "is the cup green?", "whether there are five apples"
	Hedged                    // "the cup might be green"
	Uncertain                 // "I'm not sure the cup is green", "I still need to check…"
	Alternative               // "black, red, blue…", "black or red": commits to none
	Attributed                // "people often assume the cup is green", "you said…"
	Retracted                 // "the cup is green. Just kidding, …"
)

var stanceNames = [...]string{"asserted", "negated", "questioned", "hedged", "uncertain", "alternative", "attributed", "retracted"}

// String is the stance's name.
func (s Stance) String() string {
	if int(s) < len(stanceNames) {
		return stanceNames[s]
	}
	return "unknown"
}

// Object is one object of the scene a response is read against: its identity, the image that
// holds it (1-based; 0 when any image may), the names and aliases a response may call it by
// (any language) and its attribute values.
type Object struct {
	ID         string
	Image      int
	Names      []string
	Attributes map[string]string
}

// Scope is what one response is read against: the scene's objects (their names make object
// mentions, their attribute values make values of those attributes), extra values per
// attribute (Values: attribute → spellings; a spelling "canonical=spelling" maps a spelling to
// a canonical value), the number of images (for "the last image"), the image a claim belongs
// to when the text names none (0: none), the language, and words that hold an object's name
// without naming it (Stop).
type Scope struct {
	Language Language
	Objects  []Object
	Values   map[string][]string
	Images   int
	Image    int
	// Stop are words that hold an object's name without naming it (停车场 holds 车): read as
	// plain words.
	Stop []string
}

// Key is a text that two scopes share only when they are equal, field by field: a cache of
// compiled readers keys them by it (the simulator's). Every field of Scope is in it
// (TestScopeKeyHoldsEveryField fails for a field added without).
func (sc Scope) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q|%d|%d|%q", sc.Language, sc.Images, sc.Image, sc.Stop)
	for _, o := range sc.Objects {
		fmt.Fprintf(&b, "|o%q@%d%q", o.ID, o.Image, o.Names)
		for _, a := range slices.Sorted(maps.Keys(o.Attributes)) {
			fmt.Fprintf(&b, "%q=%q", a, o.Attributes[a])
		}
	}
	for _, a := range slices.Sorted(maps.Keys(sc.Values)) {
		fmt.Fprintf(&b, "|v%q%q", a, sc.Values[a])
	}
	return b.String()
}

// Claim is one value the response states about an attribute of an object.
type Claim struct {
	// Image is the image the claim is about: named in its clause or an earlier one ("Image 2
	// shows…"), else the Scope's image; 0 when neither says.
	Image int
	// Object is the scene object's ID when Known, else the noun phrase as written and
	// singularized ("umbrella", "lawn mower"); "" when the claim binds to no object ("Black.").
	Object string
	Known  bool
	// Attribute is Color, Count, Position, Size, State, Image or a scene attribute.
	Attribute string
	// Value is the canonical value ("grey" for "gray" and "灰色"; a count in digits); Text is
	// the value as written.
	Value, Text string
	Stance      Stance
	// Past marks a claim about an earlier state ("there were five", "原来有五个"): Final
	// prefers a claim about the present.
	Past bool
	// Cue is the word that set the stance ("not", "might", "just kidding"); "" when asserted.
	Cue string
	// Sentence and Clause number the claim's sentence and clause (from 0); At is its byte
	// offset in the Reading's Folded text.
	Sentence, Clause, At int
}

// Reading is a response read into claims.
type Reading struct {
	// Folded is the text the offsets refer to: width-folded, lower case, spaces collapsed.
	Folded string
	// Claims in text order.
	Claims []Claim
	// Objects are the objects the text mentions (scene IDs or noun phrases), in order of first
	// mention, without words that name nothing in a scene ("evidence", "image", "things").
	Objects []string
	// Clauses and Sentences count the text's clauses and sentences that hold a word.
	Clauses, Sentences int
	// Salad is true when the text strings words together without a sentence's grammar ("dog
	// grass tree lies under the on"): such text asserts nothing, and every claim in it is
	// read as Uncertain.
	Salad bool
	// Retraction is the retraction cue, when the text takes back what it said before.
	Retraction string
	// Pivots are the byte offsets (in Folded) of the words that make what follows a
	// correction or a conclusion of what precedes: a contrast ("but", "actually", "其实"), a
	// retraction, a total ("so … in total", "一共"). A later claim that differs from an
	// earlier one across a pivot replaces it; without one the two stand side by side.
	Pivots []int
	known  int // mentions of objects of the scope's vocabulary
}

// Final returns the last asserted claim about an attribute of an object: what the response
// says about it once it has finished; a claim about the present before one about an earlier
// state ("four are left: there were five"). An empty object matches any object; a claim bound
// to no object ("Black.") matches every object.
func (r *Reading) Final(attribute, object string) (Claim, bool) {
	var past Claim
	found := false
	for i := len(r.Claims) - 1; i >= 0; i-- {
		c := r.Claims[i]
		if c.Stance == Asserted && c.Attribute == attribute && SameObject(c.Object, object) {
			if !c.Past {
				return c, true
			}
			if !found {
				past, found = c, true
			}
		}
	}
	return past, found
}

// About returns every claim about an attribute of an object, in text order, whatever its
// stance (same object matching as Final).
func (r *Reading) About(attribute, object string) []Claim {
	var out []Claim
	for _, c := range r.Claims {
		if c.Attribute == attribute && SameObject(c.Object, object) {
			out = append(out, c)
		}
	}
	return out
}

// Committed returns the final asserted claim (as Final chooses it) of every (image, object,
// attribute) the response asserts something about, in text order of those final claims.
func (r *Reading) Committed() []Claim {
	type key struct {
		img       int
		obj, attr string
	}
	last := map[key]int{}
	for i, c := range r.Claims {
		if c.Stance != Asserted {
			continue
		}
		k := key{c.Image, c.Object, c.Attribute}
		if j, ok := last[k]; !ok || !c.Past || r.Claims[j].Past {
			last[k] = i // a claim about the present wins over a later one about the past
		}
	}
	var out []Claim
	for i, c := range r.Claims {
		if c.Stance == Asserted && last[key{c.Image, c.Object, c.Attribute}] == i {
			out = append(out, c)
		}
	}
	return out
}

// HasContent tells whether the response says something about the scene: a claim that is
// neither retracted nor attributed to others, or an object it talks about (a noun phrase that
// holds a word naming nothing in a scene does not count: "the answer follows", "these
// observations"). Cue phrases alone ("Based on the evidence in the
// image, I can see several things") have none.
func (r *Reading) HasContent() bool {
	if r.Salad {
		return false
	}
	for _, c := range r.Claims {
		if c.Stance != Retracted && c.Stance != Attributed {
			return true
		}
	}
	return r.known > 0 || len(r.Objects) > 0
}

// SameObject tells whether two objects of claims are the same: equal after folding and
// singularizing, or either one empty (a claim bound to no object).
func SameObject(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	return a == b || singular(fold(a)) == singular(fold(b))
}

// Canonical is the canonical form of a value of an attribute ("gray" → "grey", "三" → "3",
// "灰色" → "grey"); a value the vocabulary does not know is returned folded.
func Canonical(attribute, value string) string {
	v := strings.TrimSpace(fold(value))
	if attribute == Count || attribute == Image {
		if n, ok := parseCount(v); ok {
			return n
		}
	}
	for _, e := range builtinTable().phrases[phraseKey(v)] {
		if e.kind == kValue && (attribute == "" || e.attr == attribute) {
			return e.key
		}
	}
	return v
}

// SameValue tells whether two values of an attribute are the same value.
func SameValue(attribute, a, b string) bool {
	return Canonical(attribute, a) == Canonical(attribute, b)
}

// Read reads one response against a scope. For many responses against one scope, NewReader
// compiles the scope's vocabulary once.
func Read(text string, sc Scope) Reading { return NewReader(sc).Read(text) }
