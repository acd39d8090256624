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

// AnnotatorLabel is one annotator's submitted values of a turn, with their flag: a flagged
// label asks for review whatever its values say.
type AnnotatorLabel struct {
	Annotator  string
	Values     rubric.Values
	Flagged    bool
	FlagReason string
}

// FlagField is the name under which an adjudicator's clearing of a turn's flags is kept
// among its final values (value FlagCleared). It is not a rubric field: keeping it with the
// decisions gives it their audit trail and undo without a table of its own, and the "#"
// keeps it apart from the rubric's field names, which are identifiers.
const FlagField = "#flag"

// FlagCleared is FlagField's value once an adjudicator has reviewed the flags of a turn.
const FlagCleared = "cleared"

// FlagReasons lists the flags of a turn's labels in annotator order, one "alice: reason"
// each. A flag without a reason reads "alice: (no reason)".
func FlagReasons(labels []AnnotatorLabel) []string {
	var out []string
	for _, l := range labels {
		if !l.Flagged {
			continue
		}
		why := strings.TrimSpace(l.FlagReason)
		if why == "" {
			why = "(no reason)"
		}
		out = append(out, l.Annotator+": "+why)
	}
	return out
}

// FlagOpen reports whether a turn has flags no adjudicator has cleared yet.
func FlagOpen(labels []AnnotatorLabel, decided map[string]Decision) bool {
	return len(FlagReasons(labels)) > 0 && decided[FlagField].Value != FlagCleared
}

// Unanimous reports whether every label gives field the same value. Only then is the value
// agreed rather than computed from the answers (a majority or a median).
func Unanimous(labels []AnnotatorLabel, field string) bool {
	first, seen := "", false
	for _, l := range labels {
		v, ok := l.Values[field]
		if !ok {
			return false
		}
		if seen && v != first {
			return false
		}
		first, seen = v, true
	}
	return seen
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

// Case is a turn to adjudicate. Its labels disagree (Disputes), or an annotator flagged it
// for review (Flags, "alice: reason"), or both.
type Case struct {
	TurnLabels
	Disputes []FieldDispute
	Flags    []string
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

// FindCases returns the turns to review, in the order given. They are the turns with two or
// more labels that disagree, and those an annotator flagged (even when labeled once), since
// a flag says the label itself may not be trusted.
func FindCases(r *rubric.Rubric, turns []TurnLabels, o DisagreeOptions) []Case {
	var out []Case
	for _, t := range turns {
		var d []FieldDispute
		if len(t.Labels) >= 2 {
			d = Disputes(r, t.Labels, o)
		}
		flags := FlagReasons(t.Labels)
		if len(d) > 0 || len(flags) > 0 {
			out = append(out, Case{TurnLabels: t, Disputes: d, Flags: flags})
		}
	}
	return out
}

// Decision is an adjudicator's final value of one field. It is taken from an annotator
// (Source names them) or scored anew (Source "").
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
	// Flagged says an annotator flagged the turn and no adjudicator has cleared it; FlagReasons
	// are the flags ("alice: image missing"), kept until then.
	Flagged     bool
	FlagReasons []string
}

// Resolve settles a turn's final label. A field an adjudicator decided takes that value. An
// undisputed field takes the agreed value: the answer of a strict majority, else the median
// (rounded half up) of a 1–5 field, else the first answer in annotator order. The comment
// field joins the annotators' comments ("alice: …; bob: …") unless the adjudicator wrote one.
func Resolve(r *rubric.Rubric, labels []AnnotatorLabel, decided map[string]Decision, o DisagreeOptions) Final {
	fin := Final{Values: rubric.Values{}, Fields: map[string]string{}, Source: SourceAgreed}
	if FlagOpen(labels, decided) {
		fin.Flagged, fin.FlagReasons = true, FlagReasons(labels)
	}
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
