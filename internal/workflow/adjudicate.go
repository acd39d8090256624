package workflow

import (
	"context"
	"fmt"
	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/session"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Cases lists the turns of a campaign ("" for all) whose submitted labels disagree or that an
// annotator flagged, in queue order: what the adjudication screen walks. Decided tells, per
// case, whether every disputed field has a final value already and every flag is cleared.
func Cases(ctx context.Context, st *store.Store, name string, r *rubric.Rubric, o campaign.DisagreeOptions) ([]campaign.Case, []bool, error) {
	if err := assigned(ctx, st, name); err != nil {
		return nil, nil, err
	}
	d, err := st.Review(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	finals, err := st.Finals(ctx)
	if err != nil {
		return nil, nil, err
	}
	cases := campaign.FindCases(r, turnLabels(d), o)
	decided := make([]bool, len(cases))
	for i, c := range cases {
		// A flagged turn stays open until an adjudicator clears its flags.
		decided[i] = !campaign.FlagOpen(c.Labels, finals[c.SampleID])
		for _, dp := range c.Disputes {
			if _, ok := finals[c.SampleID][dp.Field]; !ok {
				decided[i] = false
			}
		}
	}
	return cases, decided, nil
}

// turnLabels groups submitted labels by turn; the store returns them in queue order, then
// annotator name.
func turnLabels(d *store.ReviewData) []campaign.TurnLabels {
	var out []campaign.TurnLabels
	for _, l := range d.Labels {
		if n := len(out); n == 0 || out[n-1].TurnID != l.TurnID {
			out = append(out, campaign.TurnLabels{TurnID: l.TurnID, SampleID: l.SampleID})
		}
		t := &out[len(out)-1]
		t.Labels = append(t.Labels, campaign.AnnotatorLabel{Annotator: l.Annotator, Values: l.Values, Flagged: l.Flagged, FlagReason: l.FlagReason})
	}
	return out
}

// FinalCounts tallies an export --final by where the labels came from.
type FinalCounts struct {
	Adjudicated, Agreed, Single, Unresolved int
	// Unsubmittable counts final labels left out because an annotator could not have
	// submitted them (a value missing, or a comment the guide asks for not written): the
	// decisions of different annotators' answers can make such a label.
	Unsubmittable int
	// UnsubmittableIDs names them (sample ids, in queue order), for the message.
	UnsubmittableIDs []string
}

// String implements fmt.Stringer: the line export --final prints on standard error.
func (c FinalCounts) String() string {
	s := fmt.Sprintf("%d adjudicated, %d agreed, %d single-annotator; %s left out until adjudicated",
		c.Adjudicated, c.Agreed, c.Single, plural.N(c.Unresolved, "disputed turn"))
	if c.Unsubmittable > 0 {
		ids := c.UnsubmittableIDs
		more := ""
		if len(ids) > 3 {
			ids, more = ids[:3], ", …"
		}
		s += fmt.Sprintf("; %d final label(s) left out that an annotator could not have submitted (%s%s): "+
			"adjudicate them again (m3eval adjudicate), e.g. write the comment the guide asks for",
			c.Unsubmittable, strings.Join(ids, ", "), more)
	}
	return s
}

// ExportFinal streams one final label per submitted turn (of a campaign's turns, or all):
// the adjudicated value where there is one, else the agreed one; the label says which.
// Turns with a dispute nobody settled yet are left out and counted.
func ExportFinal(ctx context.Context, st *store.Store, name string, r *rubric.Rubric, o campaign.DisagreeOptions, fn func(*dataset.Labeled) error) (FinalCounts, error) {
	var c FinalCounts
	var only map[string]bool
	if name != "" {
		if err := assigned(ctx, st, name); err != nil {
			return c, err
		}
		cp, err := st.Campaign(ctx, name)
		if err != nil {
			return c, err
		}
		only = map[string]bool{}
		for _, row := range cp.Rows {
			only[row.SampleID] = true
		}
	}
	finals, err := st.Finals(ctx)
	if err != nil {
		return c, err
	}
	err = st.Export(ctx, store.ExportOptions{}, func(l *dataset.Labeled) error {
		if only != nil && !only[l.Turn.SampleID] {
			return nil
		}
		labels := make([]campaign.AnnotatorLabel, len(l.Labels))
		var last time.Time
		for i, x := range l.Labels {
			labels[i] = campaign.AnnotatorLabel{Annotator: x.Annotator, Values: x.Values, Flagged: x.Flagged, FlagReason: x.FlagReason}
			if x.AnnotatedAt.After(last) {
				last = x.AnnotatedAt
			}
		}
		f := campaign.Resolve(r, labels, finals[l.Turn.SampleID], o)
		if f.Source == campaign.SourceUnresolved {
			c.Unresolved++
			return nil
		}
		// The final label obeys the rules an annotator's does: values taken from different
		// annotators can add up to one that needs a comment nobody wrote.
		if it := l.Turn.Item(); !r.Submittable(r.Apply(f.Values, it), it) {
			c.Unsubmittable++
			c.UnsubmittableIDs = append(c.UnsubmittableIDs, l.Turn.SampleID)
			return nil
		}
		switch f.Source {
		case campaign.SourceAdjudicated:
			c.Adjudicated++
		case campaign.SourceSingle:
			c.Single++
		default:
			c.Agreed++
		}
		// A flag nobody cleared stays on the final label, with every annotator's reason.
		out := &dataset.Labeled{Turn: l.Turn, Labels: []dataset.Label{{
			Annotator: "final", Values: f.Values, Status: dataset.StatusDone, AnnotatedAt: last, RubricVersion: r.Version,
			Flagged: f.Flagged, FlagReason: strings.Join(f.FlagReasons, "; "),
			Final: &dataset.FinalInfo{Source: string(f.Source), Fields: f.Fields, Adjudicator: f.Adjudicator},
		}}}
		return fn(out)
	})
	return c, err
}

// DecideOptions settle the disputed fields of one turn without the screen: take an
// annotator's answers (all disputed fields, or Fields) and/or set values.
type DecideOptions struct {
	Campaign    string
	SampleID    string
	Adjudicator string
	Take        string
	Fields      []string
	Set         map[string]string
	// ClearFlag clears the turn's flags: the adjudicator reviewed what the annotators flagged.
	ClearFlag bool
	Rubric    *rubric.Rubric
	Disagree  campaign.DisagreeOptions
}

// Decide records an adjudicator's final values for one turn in one transaction and returns
// them.
func Decide(ctx context.Context, st *store.Store, o DecideOptions) ([]session.FinalEdit, error) {
	if o.Adjudicator == "" {
		return nil, usagef("--adjudicator NAME is required")
	}
	if err := assigned(ctx, st, o.Campaign); err != nil {
		return nil, err
	}
	d, err := st.Review(ctx, o.Campaign)
	if err != nil {
		return nil, err
	}
	var tl *campaign.TurnLabels
	for _, t := range turnLabels(d) {
		if t.SampleID == o.SampleID {
			tl = &t
			break
		}
	}
	if tl == nil {
		return nil, usagef("%s has no submitted labels%s", o.SampleID, inCampaign(o.Campaign))
	}
	var it rubric.Item
	for _, l := range d.Labels {
		if l.TurnID == tl.TurnID {
			it = rubric.Item{ActionType: l.ActionType, Turn: l.Turn}
			break
		}
	}
	var edits []session.FinalEdit
	if o.Take != "" {
		var from rubric.Values
		for _, l := range tl.Labels {
			if l.Annotator == o.Take {
				from = l.Values
			}
		}
		if from == nil {
			return nil, usagef("%s did not label %s", o.Take, o.SampleID)
		}
		fields := o.Fields
		if len(fields) == 0 {
			for _, dp := range campaign.Disputes(o.Rubric, tl.Labels, o.Disagree) {
				fields = append(fields, dp.Field)
			}
		}
		if len(fields) == 0 {
			return nil, usagef("the annotators of %s agree; name --field to take one anyway", o.SampleID)
		}
		for _, f := range fields {
			v, ok := from[f]
			if !ok {
				return nil, usagef("%s gave no %s on %s", o.Take, f, o.SampleID)
			}
			edits = append(edits, session.FinalEdit{TurnID: tl.TurnID, Field: f, Value: &v, Source: o.Take})
		}
	}
	for _, f := range o.Rubric.Fields {
		v, ok := o.Set[f.Name]
		if !ok {
			continue
		}
		if err := f.Check(v, it); err != nil {
			return nil, usagef("--set %s=%s: %v", f.Name, v, err)
		}
		edits = append(edits, session.FinalEdit{TurnID: tl.TurnID, Field: f.Name, Value: &v})
	}
	for k := range o.Set {
		if _, ok := o.Rubric.Field(k); !ok {
			return nil, usagef("--set %s: the rubric has no such field", k)
		}
	}
	if o.ClearFlag {
		if len(campaign.FlagReasons(tl.Labels)) == 0 {
			return nil, usagef("nobody flagged %s: there is no flag to clear", o.SampleID)
		}
		v := campaign.FlagCleared
		edits = append(edits, session.FinalEdit{TurnID: tl.TurnID, Field: campaign.FlagField, Value: &v})
	}
	if len(edits) == 0 {
		return nil, usagef("nothing to decide: give --take ANNOTATOR, --set FIELD=VALUE or --clear-flag")
	}
	for i := range edits {
		edits[i].Adjudicator, edits[i].RubricVersion = o.Adjudicator, o.Rubric.Version
	}
	return edits, st.SetFinal(ctx, edits...)
}

// assigned is nil when name is "" (every label) or names an assigned campaign. A sample
// drawn but not assigned yet has no campaign turns: reading it as one found nothing, and qc,
// adjudicate --list and export --final said there was nothing (no labels, no disagreements)
// beside labels that disagree.
func assigned(ctx context.Context, st *store.Store, name string) error {
	if name == "" {
		return nil
	}
	info, err := st.Sample(ctx, name)
	if err != nil {
		return fmt.Errorf("campaign %s: %w", name, err)
	}
	if !info.Assigned {
		return fmt.Errorf("campaign %s: sample %s is not assigned yet: m3eval assign --sample %s --annotators A,B,C --overlap 2", name, name, name)
	}
	return nil
}

func inCampaign(name string) string {
	if name == "" {
		return ""
	}
	return " in campaign " + name
}
