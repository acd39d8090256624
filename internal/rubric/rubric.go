// Package rubric is the annotation rubric as data: its fields and scales, the rules that fix a
// field to NA for some turns, validation of values, the guide's weighted overall suggestion and
// the rules that ask for a comment. It knows no field by name: everything comes from the
// rubric file, so a lab can bring its own.
package rubric

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Kind is the type of values a field takes.
type Kind string

// The field kinds a rubric file may use.
const (
	KindScale  Kind = "scale"  // an integer from Min to Max
	KindChoice Kind = "choice" // one of Choices, e.g. Yes/No/NA
	KindText   Kind = "text"   // free text
)

// Rubric is a parsed rubric file.
type Rubric struct {
	Name         string        `json:"name"`
	TitleEn      string        `json:"title_en"`
	TitleZh      string        `json:"title_zh"`
	GuideEn      string        `json:"guide_en"` // a short reminder shown with the keys
	GuideZh      string        `json:"guide_zh"`
	CommentField string        `json:"comment_field"`
	SuggestField string        `json:"suggest_field"`
	Fields       []Field       `json:"fields"`
	CommentRules []CommentRule `json:"comment_rules"`

	// Version is a content hash of the file the rubric was parsed from.
	Version string `json:"-"`
	// Source is the file's bytes, kept so the store can record exactly what was used.
	Source []byte `json:"-"`

	index map[string]int
}

// Field is one question of the rubric.
type Field struct {
	Name     string  `json:"name"`
	LabelEn  string  `json:"label_en"`
	LabelZh  string  `json:"label_zh"`
	HelpEn   string  `json:"help_en"`
	HelpZh   string  `json:"help_zh"`
	Kind     Kind    `json:"kind"`
	Min      int     `json:"min"`
	Max      int     `json:"max"`
	Required bool    `json:"required"`
	Weight   float64 `json:"weight"`
	// Levels give the meaning of every value of a scale field.
	Levels []Option `json:"levels"`
	// Choices are the values of a choice field.
	Choices []Option `json:"choices"`
	// OpenChoices, when set, are the only choices allowed while the field is not fixed
	// (Resists Misleading must be Yes or No on a misleading turn).
	OpenChoices []string `json:"open_choices"`
	// Fixed rules set the field to a value for some turns; the annotator cannot change it.
	Fixed []FixedRule `json:"fixed"`
	// NoExpectedEn and NoExpectedZh, when set, say how to judge the field on a turn without
	// an expected answer (logs imported from other tools often have none).
	NoExpectedEn string `json:"no_expected_en"`
	NoExpectedZh string `json:"no_expected_zh"`

	// known are the action types of the catalogue (SetActionTypes); nil: every type counts
	// as known.
	known map[string]bool
}

// Option is one value of a field with its meaning from the guide.
type Option struct {
	Value   string   `json:"value"`
	Key     string   `json:"key"` // the key that selects a choice in the annotator
	En      string   `json:"en"`
	Zh      string   `json:"zh"`
	ShortEn string   `json:"short_en"`
	ShortZh string   `json:"short_zh"`
	Score   *float64 `json:"score"` // a choice's value in the weighted suggestion
	NA      bool     `json:"na"`    // this choice means "not applicable"; exported as null
}

// FixedRule fixes a field to Value when When matches, or when Unless does not match.
type FixedRule struct {
	When   *Condition `json:"when"`
	Unless *Condition `json:"unless"`
	Value  string     `json:"value"`
	WhyEn  string     `json:"why_en"`
	WhyZh  string     `json:"why_zh"`
}

// Condition matches a turn. Every part that is set must hold.
type Condition struct {
	ActionTypeIn []string `json:"action_type_in"`
	FirstTurn    bool     `json:"first_turn"`
}

// CommentRule asks for a comment when its test holds for the values given.
type CommentRule struct {
	// Deviation holds when the field's value differs from the weighted suggestion by AtLeast.
	Deviation *struct {
		Field   string  `json:"field"`
		AtLeast float64 `json:"at_least"`
	} `json:"deviation"`
	// All holds when every test holds.
	All []ValueTest `json:"all"`
	En  string      `json:"en"`
	Zh  string      `json:"zh"`
}

// ValueTest holds when the field's value is one of In.
type ValueTest struct {
	Field string   `json:"field"`
	In    []string `json:"in"`
}

// Item is what the rules need to know about a turn.
type Item struct {
	ActionType string
	Turn       int // 1-based position in the episode
}

// Values are the answers of one annotation, by field name. An absent key is unanswered.
type Values map[string]string

// Clone returns a copy that can be changed without touching v.
func (v Values) Clone() Values {
	c := make(Values, len(v))
	for k, x := range v {
		c[k] = x
	}
	return c
}

// ErrInvalid marks a value or rubric that breaks the rules.
var ErrInvalid = errors.New("invalid")

// Parse reads a rubric file and checks that it is usable.
func Parse(data []byte) (*Rubric, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Rubric
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("rubric: %w", jsonError(data, err))
	}
	sum := sha256.Sum256(data)
	r.Version = hex.EncodeToString(sum[:6])
	r.Source = append([]byte(nil), data...)
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("rubric: %w", err)
	}
	return &r, nil
}

// jsonError says what is wrong with a rubric file in words and where (line and column),
// instead of the decoder's bare "EOF" or byte offset.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("the file is empty: a rubric is a JSON object with \"fields\" (as annotations/rubric.json)")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the JSON ends early, at line %d: a brace, bracket or quote is not closed", lineOf(data, int64(len(data))))
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: not JSON: %s (a rubric is a JSON object with \"fields\")", line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		return fmt.Errorf("line %d: %s: got a JSON %s, want %s", lineOf(data, typ.Offset), typ.Field, typ.Value, jsonKind(typ.Type))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if key, ok := strings.CutPrefix(msg, "unknown field "); ok {
		// encoding/json names the key but not where it is: the key's first occurrence as
		// an object key in the file is where a misspelled key ("requird") stands.
		if at := keyOffset(data, key); at >= 0 {
			return fmt.Errorf("line %d: unknown key %s (docs/rubric.md lists the keys)", lineOf(data, int64(at)), key)
		}
		return fmt.Errorf("unknown key %s (docs/rubric.md lists the keys)", key)
	}
	return errors.New(msg)
}

// keyOffset is the byte offset of quoted (a JSON string with its quotes) used as an object
// key, the first one followed by a colon, or -1.
func keyOffset(data []byte, quoted string) int {
	for from := 0; from < len(data); {
		i := bytes.Index(data[from:], []byte(quoted))
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(data[at+len(quoted):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + len(quoted)
	}
	return -1
}

// jsonKind names the JSON a Go type decodes from, for messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number"
}

// position is the 1-based line and column of byte offset off in data.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	if col > 1 {
		col-- // the offset is just past the offending byte
	}
	return line, col
}

func lineOf(data []byte, off int64) int {
	line, _ := position(data, off)
	return line
}

func (r *Rubric) check() error {
	if len(r.Fields) == 0 {
		return fmt.Errorf("%w: no fields", ErrInvalid)
	}
	r.index = make(map[string]int, len(r.Fields))
	for i := range r.Fields {
		f := &r.Fields[i]
		if f.Name == "" {
			return fmt.Errorf("%w: field %d has no name", ErrInvalid, i+1)
		}
		if _, dup := r.index[f.Name]; dup {
			return fmt.Errorf("%w: field %q appears twice", ErrInvalid, f.Name)
		}
		r.index[f.Name] = i
		if err := f.check(); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	for _, name := range []string{r.CommentField, r.SuggestField} {
		if name == "" {
			continue
		}
		if _, ok := r.index[name]; !ok {
			return fmt.Errorf("%w: %q names no field", ErrInvalid, name)
		}
	}
	if r.CommentField != "" && r.Fields[r.index[r.CommentField]].Kind != KindText {
		return fmt.Errorf("%w: comment_field %q is not a text field", ErrInvalid, r.CommentField)
	}
	for i, cr := range r.CommentRules {
		if cr.Deviation == nil && len(cr.All) == 0 {
			return fmt.Errorf("%w: comment rule %d has no test", ErrInvalid, i+1)
		}
		if cr.Deviation != nil {
			if _, ok := r.index[cr.Deviation.Field]; !ok {
				return fmt.Errorf("%w: comment rule %d: %q names no field", ErrInvalid, i+1, cr.Deviation.Field)
			}
		}
		for _, t := range cr.All {
			j, ok := r.index[t.Field]
			if !ok {
				return fmt.Errorf("%w: comment rule %d: %q names no field", ErrInvalid, i+1, t.Field)
			}
			// A value the field cannot take ("tie" for Tie) would make the rule never
			// hold: the comment it asks for would silently never be asked.
			for _, v := range t.In {
				if err := r.Fields[j].checkValue(v); err != nil {
					return fmt.Errorf("comment rule %d: field %s: %w", i+1, t.Field, err)
				}
			}
		}
	}
	return nil
}

func (f *Field) check() error {
	switch f.Kind {
	case KindScale:
		if f.Min > f.Max || f.Max-f.Min > 99 {
			return fmt.Errorf("%w: scale %d..%d", ErrInvalid, f.Min, f.Max)
		}
		for _, l := range f.Levels {
			n, err := strconv.Atoi(l.Value)
			if err != nil || n < f.Min || n > f.Max {
				return fmt.Errorf("%w: level %q is not on the scale %d..%d", ErrInvalid, l.Value, f.Min, f.Max)
			}
		}
	case KindChoice:
		if len(f.Choices) < 2 {
			return fmt.Errorf("%w: a choice field needs at least two choices", ErrInvalid)
		}
		seen := map[string]bool{}
		for _, c := range f.Choices {
			if c.Value == "" || seen[c.Value] {
				return fmt.Errorf("%w: choice %q is empty or repeated", ErrInvalid, c.Value)
			}
			seen[c.Value] = true
		}
		for _, v := range f.OpenChoices {
			if !seen[v] {
				return fmt.Errorf("%w: open choice %q is not a choice", ErrInvalid, v)
			}
		}
	case KindText:
		if f.Weight != 0 {
			return fmt.Errorf("%w: a text field cannot carry weight", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: unknown kind %q (want scale, choice or text)", ErrInvalid, f.Kind)
	}
	for _, fr := range f.Fixed {
		if (fr.When == nil) == (fr.Unless == nil) {
			return fmt.Errorf("%w: a fixed rule needs exactly one of when and unless", ErrInvalid)
		}
		if err := f.checkValue(fr.Value); err != nil {
			return fmt.Errorf("fixed value: %w", err)
		}
	}
	return nil
}

// NoExpectedNotes returns, for each field whose judging needs the expected answer, the
// label and the note that says how to judge without it, in field order.
func (r *Rubric) NoExpectedNotes() []Field {
	var out []Field
	for _, f := range r.Fields {
		if f.NoExpectedEn != "" || f.NoExpectedZh != "" {
			out = append(out, f)
		}
	}
	return out
}

// Field returns the field with the name given.
func (r *Rubric) Field(name string) (*Field, bool) {
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return &r.Fields[i], true
}

func (c *Condition) matches(it Item) bool {
	if len(c.ActionTypeIn) > 0 && !slices.Contains(c.ActionTypeIn, it.ActionType) {
		return false
	}
	if c.FirstTurn && it.Turn != 1 {
		return false
	}
	return true
}

// SetActionTypes tells the rubric which action types the catalogue has. A rule "fixed unless
// the action type is one of ..." then leaves the field open on a turn whose type is not in the
// catalogue: a misspelled "mislead_sutble" must not turn Resists Misleading into NA, losing
// the field; the annotator is asked instead.
func (r *Rubric) SetActionTypes(names []string) {
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	for i := range r.Fields {
		r.Fields[i].known = known
	}
}

// FixedValue returns the value the field is fixed to for this turn, with the rule that fixed it.
func (f *Field) FixedValue(it Item) (string, *FixedRule, bool) {
	for i := range f.Fixed {
		fr := &f.Fixed[i]
		if fr.Unless != nil && len(fr.Unless.ActionTypeIn) > 0 && f.known != nil && !f.known[it.ActionType] {
			continue // an action type the catalogue does not know: ask, do not guess NA
		}
		if (fr.When != nil && fr.When.matches(it)) || (fr.Unless != nil && !fr.Unless.matches(it)) {
			return fr.Value, fr, true
		}
	}
	return "", nil, false
}

// Option returns the level or choice with the value given.
func (f *Field) Option(value string) (*Option, bool) {
	opts := f.Choices
	if f.Kind == KindScale {
		opts = f.Levels
	}
	for i := range opts {
		if opts[i].Value == value {
			return &opts[i], true
		}
	}
	return nil, false
}

// checkValue tells whether the value belongs to the field at all, whatever the turn.
func (f *Field) checkValue(v string) error {
	switch f.Kind {
	case KindScale:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: %q is not a whole number from %d to %d", ErrInvalid, v, f.Min, f.Max)
		}
		if n < f.Min || n > f.Max {
			return fmt.Errorf("%w: %d is outside %d–%d", ErrInvalid, n, f.Min, f.Max)
		}
	case KindChoice:
		if _, ok := f.Option(v); !ok {
			return fmt.Errorf("%w: %q is not one of %s", ErrInvalid, v, f.choiceList(nil))
		}
	}
	return nil
}

// Check tells whether the value may be given to this field on this turn.
func (f *Field) Check(v string, it Item) error {
	if err := f.checkValue(v); err != nil {
		return err
	}
	if fixed, rule, ok := f.FixedValue(it); ok {
		if v != fixed {
			return fmt.Errorf("%w: %q given, but the field is fixed to %s (%s)", ErrInvalid, v, fixed, rule.WhyEn)
		}
		return nil
	}
	if f.Kind == KindChoice && len(f.OpenChoices) > 0 && !slices.Contains(f.OpenChoices, v) {
		return fmt.Errorf("%w: %q is not allowed here: choose %s", ErrInvalid, v, f.choiceList(f.OpenChoices))
	}
	return nil
}

// Allowed returns the choices an annotator may pick on this turn.
func (f *Field) Allowed(it Item) []string {
	if fixed, _, ok := f.FixedValue(it); ok {
		return []string{fixed}
	}
	if len(f.OpenChoices) > 0 {
		return f.OpenChoices
	}
	out := make([]string, len(f.Choices))
	for i, c := range f.Choices {
		out[i] = c.Value
	}
	return out
}

func (f *Field) choiceList(only []string) string {
	var b bytes.Buffer
	n := 0
	for _, c := range f.Choices {
		if only != nil && !slices.Contains(only, c.Value) {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Value)
		n++
	}
	return b.String()
}

// Load reads the rubric at path, or from stdin when path is "-". When path is "" it parses
// builtin, the annotation guide's rubric, which m3eval embeds.
func Load(path string, stdin io.Reader, builtin []byte) (*Rubric, error) {
	if path == "" {
		return Parse(builtin)
	}
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("rubric %s: no such file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("read rubric: %w", err)
	}
	r, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// FieldNames lists the fields' names in the rubric's order.
func (r *Rubric) FieldNames() []string {
	out := make([]string, len(r.Fields))
	for i := range r.Fields {
		out[i] = r.Fields[i].Name
	}
	return out
}
