package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/rubric"
)

// DisagreeOptions say when annotators disagree on a field.
type DisagreeOptions struct {
	// ScaleGap: answers of a 1–5 field this far apart (highest − lowest) disagree.
	ScaleGap int
	// ChoiceSplit: two different answers of a choice field disagree (NA left out unless
	// CountNA).
	ChoiceSplit bool
	CountNA     bool
}

// DefaultDisagreeOptions are the issue's: 2 or more apart on a 1–5 field, or split Yes/No.
func DefaultDisagreeOptions() DisagreeOptions { return DisagreeOptions{ScaleGap: 2, ChoiceSplit: true} }

// AnnotatorLabel is one annotator's submitted values of a turn.
type AnnotatorLabel struct {
	Annotator string
	Values    rubric.Values
}

// TurnLabels are the submitted labels of one turn, in annotator-name order.
type TurnLabels struct {
	TurnID   int64
	SampleID string
	Labels   []AnnotatorLabel
}

// FieldDispute is a field the annotators of a turn disagree on.
type FieldDispute struct {
	Field  string
	Reason string // one line: "correctness: 2 (alice) vs 5 (bob)"
}

// Case is a turn to adjudicate.
type Case struct {
	TurnLabels
	Disputes []FieldDispute
}

// Disputes lists the rating fields of a turn's labels that disagree under o.
func Disputes(r *rubric.Rubric, labels []AnnotatorLabel, o DisagreeOptions) []FieldDispute {
	var out []FieldDispute
	for _, f := range r.Fields {
		if f.Kind == rubric.KindText {
			continue
		}
		type ans struct{ who, v string }
		var as []ans
		for _, l := range labels {
			v, ok := l.Values[f.Name]
			if !ok || (!o.CountNA && isNA(f, v)) {
				continue
			}
			as = append(as, ans{l.Annotator, v})
		}
		if len(as) < 2 {
			continue
		}
		disagree := false
		switch f.Kind {
		case rubric.KindScale:
			lo, hi := 1<<30, -1<<30
			for _, a := range as {
				x, err := strconv.Atoi(a.v)
				if err != nil {
					continue
				}
				lo, hi = min(lo, x), max(hi, x)
			}
			disagree = o.ScaleGap > 0 && hi-lo >= o.ScaleGap
		default:
			for _, a := range as[1:] {
				if a.v != as[0].v {
					disagree = o.ChoiceSplit
				}
			}
		}
		if !disagree {
			continue
		}
		parts := make([]string, len(as))
		for i, a := range as {
			parts[i] = fmt.Sprintf("%s (%s)", a.v, a.who)
		}
		out = append(out, FieldDispute{f.Name, f.Name + ": " + strings.Join(parts, " vs ")})
	}
	return out
}

func isNA(f rubric.Field, v string) bool {
	for _, c := range f.Choices {
		if c.Value == v {
			return c.NA
		}
	}
	return false
}

// FindCases returns the turns with two or more labels that disagree, in the order given.
func FindCases(r *rubric.Rubric, turns []TurnLabels, o DisagreeOptions) []Case {
	var out []Case
	for _, t := range turns {
		if len(t.Labels) < 2 {
			continue
		}
		if d := Disputes(r, t.Labels, o); len(d) > 0 {
			out = append(out, Case{t, d})
		}
	}
	return out
}

// Decision is an adjudicator's final value of one field: taken from an annotator (Source
// names them) or scored anew (Source "").
type Decision struct {
	Value, Source, Adjudicator string
}

// FieldSource says where a final field value came from.
type FieldSource string

// Where final values come from.
const (
	SourceAdjudicated FieldSource = "adjudicated" // an adjudicator decided
	SourceAgreed      FieldSource = "agreed"      // the annotators agreed (within the thresholds)
	SourceSingle      FieldSource = "single"      // one annotator labeled the turn
	SourceUnresolved  FieldSource = "unresolved"  // disputed and not yet adjudicated
)

// Final is one turn's final label.
type Final struct {
	Values rubric.Values
	// Source is adjudicated when an adjudicator decided any field, unresolved when a disputed
	// field is still open, else agreed (or single).
	Source FieldSource
	// Fields says, per field, where the value came from ("adjudicated:alice" when the
	// adjudicator took alice's answer).
	Fields      map[string]string
	Adjudicator string
}

// Resolve settles a turn's final label: a field an adjudicator decided takes that value; an
// undisputed field takes the agreed value — the answer of a strict majority, else the median
// (rounded half up) of a 1–5 field, else the first answer in annotator order; the comment
// field joins the annotators' comments ("alice: …; bob: …") unless the adjudicator wrote one.
func Resolve(r *rubric.Rubric, labels []AnnotatorLabel, decided map[string]Decision, o DisagreeOptions) Final {
	fin := Final{Values: rubric.Values{}, Fields: map[string]string{}, Source: SourceAgreed}
	if len(labels) == 1 {
		fin.Source = SourceSingle
	}
	disputed := map[string]bool{}
	for _, d := range Disputes(r, labels, o) {
		disputed[d.Field] = true
	}
	for _, f := range r.Fields {
		if d, ok := decided[f.Name]; ok {
			fin.Values[f.Name] = d.Value
			src := string(SourceAdjudicated)
			if d.Source != "" {
				src += ":" + d.Source
			}
			fin.Fields[f.Name] = src
			fin.Adjudicator = d.Adjudicator
			if fin.Source != SourceUnresolved {
				fin.Source = SourceAdjudicated
			}
			continue
		}
		if disputed[f.Name] {
			fin.Fields[f.Name] = string(SourceUnresolved)
			fin.Source = SourceUnresolved
			continue
		}
		var vals, who []string
		for _, l := range labels {
			if v, ok := l.Values[f.Name]; ok {
				vals = append(vals, v)
				who = append(who, l.Annotator)
			}
		}
		if len(vals) == 0 {
			continue
		}
		if f.Kind == rubric.KindText {
			var parts []string
			for i, v := range vals {
				if strings.TrimSpace(v) != "" {
					parts = append(parts, who[i]+": "+v)
				}
			}
			fin.Values[f.Name] = strings.Join(parts, "; ")
			fin.Fields[f.Name] = string(SourceAgreed)
			continue
		}
		fin.Values[f.Name] = agreed(f, vals)
		if len(labels) == 1 {
			fin.Fields[f.Name] = string(SourceSingle)
		} else {
			fin.Fields[f.Name] = string(SourceAgreed)
		}
	}
	return fin
}

// agreed is the value a group of close answers stands for.
func agreed(f rubric.Field, vals []string) string {
	count := map[string]int{}
	for _, v := range vals {
		count[v]++
	}
	for _, k := range slices.Sorted(maps.Keys(count)) {
		if 2*count[k] > len(vals) {
			return k
		}
	}
	if f.Kind == rubric.KindScale {
		var xs []int
		for _, v := range vals {
			if x, err := strconv.Atoi(v); err == nil {
				xs = append(xs, x)
			}
		}
		if len(xs) > 0 {
			slices.Sort(xs)
			n := len(xs)
			if n%2 == 1 {
				return strconv.Itoa(xs[n/2])
			}
			return strconv.Itoa((xs[n/2-1] + xs[n/2] + 1) / 2)
		}
	}
	return vals[0]
}
