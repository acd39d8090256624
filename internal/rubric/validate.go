package rubric

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Problem is one thing wrong with an annotation, tied to a field.
type Problem struct {
	Field string
	Err   error
}

// Error implements error.
func (p Problem) Error() string { return p.Field + ": " + p.Err.Error() }

// Apply returns the values with every fixed field set to its fixed value, so a draft always
// carries NA where the rubric says NA.
func (r *Rubric) Apply(v Values, it Item) Values {
	out := v.Clone()
	for i := range r.Fields {
		if fixed, _, ok := r.Fields[i].FixedValue(it); ok {
			out[r.Fields[i].Name] = fixed
		}
	}
	return out
}

// Check returns the problems of the values that are given. Unanswered fields are not
// problems; unknown field names are.
func (r *Rubric) Check(v Values, it Item) []Problem {
	var ps []Problem
	for name, val := range v {
		f, ok := r.Field(name)
		if !ok {
			ps = append(ps, Problem{name, fmt.Errorf("%w: the rubric has no field %q", ErrInvalid, name)})
			continue
		}
		if err := f.Check(val, it); err != nil {
			ps = append(ps, Problem{name, err})
		}
	}
	sortProblems(r, ps)
	return ps
}

// Missing lists, in rubric order, the required fields that have no answer on this turn.
// Fixed fields are never missing.
func (r *Rubric) Missing(v Values, it Item) []string {
	var out []string
	for i := range r.Fields {
		f := &r.Fields[i]
		if !f.Required {
			continue
		}
		if _, _, fixed := f.FixedValue(it); fixed {
			continue
		}
		if _, ok := v[f.Name]; !ok {
			out = append(out, f.Name)
		}
	}
	return out
}

// Complete reports whether the annotation can be submitted as done: no problem and nothing
// required missing. Comment rules are not part of it (see CommentNeeded).
func (r *Rubric) Complete(v Values, it Item) bool {
	return len(r.Check(v, it)) == 0 && len(r.Missing(v, it)) == 0
}

// Submittable is the submit rule: the values are complete and no comment rule asks for a
// comment. The annotator submits only then, and the store turns a submitted label whose
// values stop satisfying it back into a draft.
func (r *Rubric) Submittable(v Values, it Item) bool {
	return r.Complete(v, it) && len(r.CommentNeeded(v, it)) == 0
}

// Suggestion is the guide's weighted overall score.
type Suggestion struct {
	Score float64
	// Partial is set when some weighted field is still unanswered; Score then covers the
	// answered ones only.
	Partial bool
	// OK is false when no weighted field has a usable answer yet.
	OK bool
}

// Suggest computes the guide's suggestion for the overall score. It is the weighted mean of
// the answered, applicable weighted fields, with weights renormalized over the fields that
// count. A choice is scored by its Score (e.g. Yes=5, No=1), and NA leaves the field out.
func (r *Rubric) Suggest(v Values, it Item) Suggestion {
	var sum, wsum float64
	partial := false
	for i := range r.Fields {
		f := &r.Fields[i]
		if f.Weight == 0 {
			continue
		}
		val, ok := v[f.Name]
		if fixed, _, isFixed := f.FixedValue(it); isFixed {
			val, ok = fixed, true
		}
		if !ok {
			partial = true
			continue
		}
		score, counts := f.score(val)
		if !counts {
			continue
		}
		sum += f.Weight * score
		wsum += f.Weight
	}
	if wsum == 0 {
		return Suggestion{Partial: partial}
	}
	return Suggestion{Score: sum / wsum, Partial: partial, OK: true}
}

func (f *Field) score(val string) (float64, bool) {
	switch f.Kind {
	case KindScale:
		n, err := strconv.Atoi(val)
		return float64(n), err == nil
	case KindChoice:
		o, ok := f.Option(val)
		if !ok || o.NA || o.Score == nil {
			return 0, false
		}
		return *o.Score, true
	}
	return 0, false
}

// CommentNeeded returns the messages of the comment rules that hold while the comment field is
// empty. The annotator asks for a comment before it accepts the item as done.
func (r *Rubric) CommentNeeded(v Values, it Item) []CommentRule {
	if r.CommentField == "" || strings.TrimSpace(v[r.CommentField]) != "" {
		return nil
	}
	var out []CommentRule
	for _, cr := range r.CommentRules {
		if r.ruleHolds(cr, v, it) {
			out = append(out, cr)
		}
	}
	return out
}

func (r *Rubric) ruleHolds(cr CommentRule, v Values, it Item) bool {
	if d := cr.Deviation; d != nil {
		f, _ := r.Field(d.Field)
		val, ok := v[d.Field]
		if !ok {
			return false
		}
		given, counts := f.score(val)
		s := r.Suggest(v, it)
		if !counts || !s.OK || s.Partial {
			return false
		}
		// A tiny epsilon keeps 3.0 vs 5 at exactly 2 from failing on float noise.
		if math.Abs(given-s.Score) < d.AtLeast-1e-9 {
			return false
		}
	}
	for _, t := range cr.All {
		val, ok := v[t.Field]
		if fixed, _, isFixed := mustField(r, t.Field).FixedValue(it); isFixed {
			val, ok = fixed, true
		}
		if !ok || !slices.Contains(t.In, val) {
			return false
		}
	}
	return true
}

func mustField(r *Rubric, name string) *Field {
	f, _ := r.Field(name)
	return f
}

// JSONValue is the value as the labeled-JSON format writes it: scale values as numbers, NA
// choices as null, other choices and text as strings. An unanswered field is null.
func (f *Field) JSONValue(val string, ok bool) any {
	if !ok {
		if f.Kind == KindText {
			return ""
		}
		return nil
	}
	switch f.Kind {
	case KindScale:
		if n, err := strconv.Atoi(val); err == nil {
			return n
		}
	case KindChoice:
		if o, found := f.Option(val); found && o.NA {
			return nil
		}
	}
	return val
}

// ParseJSON reads a field's value from labeled JSON. null means NA on a field with an NA
// choice and "unanswered" otherwise (ok is false then). Scale values may be numbers or numeric
// strings; choices match case-insensitively and come back in the rubric's spelling.
func (f *Field) ParseJSON(raw json.RawMessage) (val string, ok bool, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		if f.Kind == KindChoice {
			for _, c := range f.Choices {
				if c.NA {
					return c.Value, true, nil
				}
			}
		}
		return "", false, nil
	}
	switch f.Kind {
	case KindScale:
		var num json.Number
		if err := json.Unmarshal(raw, &num); err != nil {
			var str string
			if json.Unmarshal(raw, &str) != nil {
				return "", false, fmt.Errorf("%w: %s is not a number", ErrInvalid, s)
			}
			num = json.Number(strings.TrimSpace(str))
		}
		n, err := strconv.ParseFloat(string(num), 64)
		if err != nil || n != math.Trunc(n) {
			return "", false, fmt.Errorf("%w: %s is not a whole number from %d to %d", ErrInvalid, s, f.Min, f.Max)
		}
		if n < float64(f.Min) || n > float64(f.Max) {
			return "", false, fmt.Errorf("%w: %s is outside %d–%d", ErrInvalid, num, f.Min, f.Max)
		}
		return strconv.Itoa(int(n)), true, nil
	case KindChoice:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			// A number names a choice by its text (1 for the choice "1"): files that hold
			// numbers and text alike import the same.
			var num json.Number
			if json.Unmarshal(raw, &num) != nil {
				return "", false, fmt.Errorf("%w: %s is not one of %s", ErrInvalid, s, f.choiceList(nil))
			}
			str = num.String()
		}
		for _, c := range f.Choices {
			if strings.EqualFold(strings.TrimSpace(str), c.Value) {
				return c.Value, true, nil
			}
		}
		return "", false, fmt.Errorf("%w: %q is not one of %s", ErrInvalid, str, f.choiceList(nil))
	default:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return "", false, fmt.Errorf("%w: %s is not text", ErrInvalid, s)
		}
		if str == "" {
			return "", false, nil
		}
		return str, true, nil
	}
}

func sortProblems(r *Rubric, ps []Problem) {
	pos := func(name string) int {
		if i, ok := r.index[name]; ok {
			return i
		}
		return len(r.Fields)
	}
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && pos(ps[j].Field) < pos(ps[j-1].Field); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// ParseScore reads an automatic judge's value for this field on this turn. The value comes
// as text as written (a JSON string unquoted, a JSON number, a CSV cell), or null for JSON
// null. It returns the
// value as stored: "" for no score, one canonical spelling of a number for scale fields
// (continuous scores such as 3.7 are kept), the rubric's spelling of a choice (any case in);
// null and NA mean the NA choice. The value obeys the rubric's rules for the turn, as
// human labels do. Judges score scale and choice fields only.
func (f *Field) ParseScore(text string, null bool, it Item) (string, error) {
	text = strings.TrimSpace(text)
	switch f.Kind {
	case KindScale:
		if null || text == "" || strings.EqualFold(text, "NA") {
			return "", nil
		}
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("%w: %q is not a number from %d to %d", ErrInvalid, text, f.Min, f.Max)
		}
		if x < float64(f.Min) || x > float64(f.Max) {
			return "", fmt.Errorf("%w: %s is outside %d–%d", ErrInvalid, text, f.Min, f.Max)
		}
		// One spelling per number, so that "4", "4.0" and 4e0 re-import as unchanged.
		val := strconv.FormatFloat(x, 'f', -1, 64)
		if fixed, rule, ok := f.FixedValue(it); ok && val != fixed {
			return "", fmt.Errorf("%w: %s given, but the field is fixed to %s (%s)", ErrInvalid, val, fixed, rule.WhyEn)
		}
		return val, nil
	case KindChoice:
		if !null && text == "" {
			return "", nil
		}
		val := ""
		if null || strings.EqualFold(text, "NA") {
			for _, c := range f.Choices {
				if c.NA {
					val = c.Value
				}
			}
			if val == "" && null {
				return "", nil // no NA choice: null is no score
			}
		}
		if val == "" {
			for _, c := range f.Choices {
				if strings.EqualFold(text, c.Value) {
					val = c.Value
				}
			}
		}
		if val == "" {
			return "", fmt.Errorf("%w: %q is not one of %s", ErrInvalid, text, f.choiceList(nil))
		}
		if err := f.Check(val, it); err != nil {
			return "", err
		}
		return val, nil
	}
	return "", fmt.Errorf("%w: %s is a text field; judges score scale and choice fields", ErrInvalid, f.Name)
}
