package report

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

// Options chooses what the report reads.
type Options struct {
	Database   string   // the database's name as the report shows it
	Judges     []string // judges to compare (already checked against the database)
	Annotators []string // annotators shown in the header (everyone's labels count)
	By         string   // grouping attribute for the per-group charts ("" for none)
	Bootstrap  int
	Seed       uint64
	// Illusion holds scored IllusionBench logs; nil leaves the section out.
	Illusion *illusion.ScoreResult
	// QC runs m3eval qc's checks with their default thresholds, on Campaign's annotators and
	// turns ("": every label).
	QC       bool
	Campaign string
	// Cache keeps the agreement intervals between runs (scoring.Options.Cache; nil: none).
	Cache *intervalcache.Cache
	// Judge, when set, computes the action-space metrics of m3eval score --metrics (same
	// bootstrap and seed); nil leaves the section out.
	Judge *judge.Judge
	// MetricsLeftOut, when set, is why the action-space metrics are left out (the rubric
	// cannot support them).
	MetricsLeftOut string
}

// Collect reads everything the report draws out of the store: the campaign's activity and
// the statistics of m3eval score (through the same scoring.Run), keeping the overall block's
// ratings for the charts that need them.
func Collect(ctx context.Context, s *store.Store, r *rubric.Rubric, o Options) (*Data, error) {
	d := &Data{Title: "m3eval report · " + o.Database}
	c, err := collectCampaign(ctx, s)
	if err != nil {
		return nil, err
	}
	d.Campaign = c
	res, err := scoring.Run(ctx, s, r, scoring.Options{
		// Episodes are the bootstrap unit, as m3eval score's default: turns of one
		// conversation are not independent.
		Filter:      store.ScoreFilter{Judges: o.Judges, By: o.By, Cluster: "episode"},
		ClusterName: "episode",
		Database:    o.Database,
		Agree:       agree.Options{Bootstrap: o.Bootstrap, Seed: o.Seed},
		KeepData:    true,
		Cache:       o.Cache,
	})
	if err != nil {
		return nil, err
	}
	sd := &ScoreData{By: o.By, Judges: o.Judges, Bootstrap: o.Bootstrap}
	for i, sec := range res.Sections {
		if sec.Overall {
			sd.Overall, sd.Data = sec.Results, res.Data[i]
		} else {
			sd.Groups = append(sd.Groups, sec)
			sd.GroupData = append(sd.GroupData, res.Data[i])
		}
	}
	dropUnused(sd)
	d.Score = sd
	if len(o.Judges) > 0 {
		// The model scores of the first judge (report --judge NAME chooses it), without the
		// ranking's bootstrap: the section draws estimates and intervals.
		if d.ModelScores, err = estimate.Compute(ctx, s, r, &estimate.Request{Judge: o.Judges[0]}, o.Database); err != nil {
			return nil, err
		}
	}
	if d.Trends, err = collectTrends(ctx, s, r); err != nil {
		return nil, err
	}
	if o.QC {
		qs, err := workflow.QC(ctx, s, o.Campaign, r, campaign.DefaultQCOptions())
		if err != nil {
			return nil, err
		}
		d.QC = qcData(o.Campaign, qs)
	}
	if o.Judge != nil {
		rep, err := judgerun.Metrics(ctx, s, o.Judge, nil, o.Bootstrap, o.Seed)
		if err != nil {
			return nil, err
		}
		d.Metrics = MetricsFrom(rep)
	}
	d.MetricsLeftOut = o.MetricsLeftOut
	if o.Illusion != nil {
		d.Illusion = &IllusionData{Rows: illusion.Summarize(o.Illusion.Items, ""), Warnings: o.Illusion.Warnings}
	}
	by := o.By
	if by == "" {
		by = "none"
	}
	boot := "none"
	if o.Bootstrap > 0 {
		boot = fmt.Sprintf("%d replicates, seed %d", o.Bootstrap, o.Seed)
	}
	d.Inputs = []KV{
		{"database", o.Database},
		{"rubric", r.Version},
		{"annotators", listOrNone(o.Annotators)},
		{"judges", listOrNone(o.Judges)},
		{"labels counted", "done annotations only; the rubric's NA choice is missing"},
		{"per group", by},
		{"bootstrap", boot},
		{"quality control", qcScope(o)},
	}
	return d, nil
}

// dropUnused lets go of what scoring.Run kept that no chart draws, before the next phases
// read: the item ids and continuous values of every block, and the judges' scores of the
// groups (their charts count labels only). At a million turns these held hundreds of MB
// through the rest of the report.
func dropUnused(sd *ScoreData) {
	for i := range sd.Data {
		sd.Data[i].Items, sd.Data[i].Cont = nil, nil
	}
	for _, g := range sd.GroupData {
		for i := range g {
			g[i].Items, g[i].Cont, g[i].Judges = nil, nil, nil
		}
	}
}

// qcData turns m3eval qc's per-annotator results into the report's rows.
func qcData(name string, qs []campaign.AnnotatorQC) *QCData {
	q := &QCData{Scope: "every label"}
	if name != "" {
		q.Scope = "campaign " + name
	}
	orNaN := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for _, a := range qs {
		row := QCAnnotator{Name: a.Annotator, Items: a.Items, Rushed: a.Rushed, GoldAnswers: a.GoldAnswers,
			RepeatAnswers: a.RepeatAnswers, MissingComments: a.MissingComments, MedianSeconds: a.MedianSeconds,
			GoldAccuracy: orNaN(a.GoldAccuracy), IntraAgreement: orNaN(a.IntraAgreement)}
		for _, f := range a.Flags {
			row.Flags = append(row.Flags, QCFlag{Check: string(f.Check), Field: f.Field, Reason: f.Reason})
		}
		q.Annotators = append(q.Annotators, row)
	}
	return q
}

func qcScope(o Options) string {
	switch {
	case !o.QC:
		return "not run (--qc=false)"
	case o.Campaign == "":
		return "every label, m3eval qc's default thresholds"
	}
	return "campaign " + o.Campaign + ", m3eval qc's default thresholds"
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// collectTrends counts the labels of the rubric's scale fields by turn position and number of
// confusable objects.
func collectTrends(ctx context.Context, s *store.Store, r *rubric.Rubric) (*Trends, error) {
	t := &Trends{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, f := range r.Fields {
		if f.Kind == rubric.KindScale {
			t.Fields = append(t.Fields, f.Name)
			t.Min, t.Max = math.Min(t.Min, float64(f.Min)), math.Max(t.Max, float64(f.Max))
		}
	}
	counts, err := s.LabelCounts(ctx, t.Fields)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		t.Counts = append(t.Counts, TrendCount{Turn: c.Turn, Confusable: c.Confusable, Field: c.Field, Value: c.Value, N: c.N})
	}
	return t, nil
}

func collectCampaign(ctx context.Context, s *store.Store) (*Campaign, error) {
	st, err := s.Status(ctx)
	if err != nil {
		return nil, err
	}
	c := &Campaign{Turns: st.Turns, Episodes: st.Episodes}
	at := map[string]int{}
	for _, a := range st.Annotators {
		at[a.Name] = len(c.Annotators)
		c.Annotators = append(c.Annotators, AnnotatorProgress{Name: a.Name, Done: a.Done, Draft: a.Draft, Flagged: a.Flagged, Skipped: a.Skipped})
	}
	err = s.StreamActivity(ctx, func(a *store.Activity) error {
		i, ok := at[a.Annotator]
		if !ok || !a.Done {
			return nil
		}
		c.ActiveSeconds = append(c.ActiveSeconds, a.Active.Seconds())
		if !a.Submitted.IsZero() {
			c.Annotators[i].Submitted = append(c.Annotators[i].Submitted, a.Submitted)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Generate reads the data and builds the report.
func Generate(ctx context.Context, s *store.Store, r *rubric.Rubric, o Options) (*Report, error) {
	d, err := Collect(ctx, s, r, o)
	if err != nil {
		return nil, err
	}
	return Build(d), nil
}
