// Package estimate is m3eval estimate: per model (and per group of turns) and rubric field,
// the mean human score as the human labels and one judge's scores together estimate it
// (prediction-powered inference, internal/ppi), beside the human-only and judge-only
// estimates, with the differences between models and their ranking. It reads the store,
// lets internal/ppi compute, and writes a table or JSON.
package estimate

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/ppi"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// Alpha is 1 − the level of every interval (95%).
const Alpha = 0.05

// Request is what m3eval estimate is asked for: its flags.
type Request struct {
	Judge      string   // the judge whose scores power the estimate (required)
	By         string   // "" or a turn attribute: one row per model × group
	Annotators []string // whose done labels count (none: everyone's)
	Bootstrap  int      // replicates of the ranking (0: no ranking shares)
	Seed       uint64
	Format     render.Format // one of render.EstimateFormats (the flag checks it; the command renders)
	Output     string        // -o: the file to write ("" or "-": standard output)
	// Sample names an active sample (m3eval sample --active): only its labeled turns count,
	// each weighted by 1/its inclusion probability.
	Sample string
	// Adjust is how the p-values of the differences are adjusted over their family (the
	// pairs of models of one field and group): holm (the flag's default, and what "" means
	// for callers that build a Request), bh or none.
	Adjust agree.Adjustment
}

// Adjustments are the values of --adjust, the default first.
var Adjustments = []agree.Adjustment{agree.AdjustHolm, agree.AdjustBH, agree.AdjustNone}

// adjustment is q.Adjust with "" read as the default.
func (q *Request) adjustment() agree.Adjustment {
	if q.Adjust == "" {
		return agree.AdjustHolm
	}
	return q.Adjust
}

// AddFlags defines m3eval estimate's flags.
func (q *Request) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&q.Output, "output", "o", "", "write to FILE instead of standard output")
	fs.StringVar(&q.Judge, "judge", "", "the judge whose scores are combined with the human labels: rules, a model judge, or imported scores (required)")
	cmdutil.EnumVar(fs, &q.By, "by", "", GroupKeys(), "one row per model and group of turns")
	fs.StringArrayVar(&q.Annotators, "annotator", nil, "use this annotator's done labels only (repeatable; default: everyone's)")
	fs.IntVar(&q.Bootstrap, "bootstrap", 1000, "bootstrap replicates (episodes resampled) for the ranking's shares (0: no shares)")
	cmdutil.Check(fs, "bootstrap", func() error {
		if q.Bootstrap < 0 {
			return usage.Errorf("--bootstrap %d: give 0 or more replicates", q.Bootstrap)
		}
		return nil
	})
	fs.Uint64Var(&q.Seed, "seed", 12345, "bootstrap seed; the same seed gives the same shares on any machine")
	cmdutil.EnumVar(fs, &q.Format, "format", render.Table, render.EstimateFormats, "output format")
	cmdutil.EnumVar(fs, &q.Adjust, "adjust", agree.AdjustHolm, Adjustments,
		"adjust the differences' p-values over the pairs of models of each field (and group): Holm, Benjamini-Hochberg or none")
	fs.StringVar(&q.Sample, "sample", "", "an active sample (m3eval sample --active): use only its labels, each weighted by 1/its inclusion probability")
}

// GroupKeys are the turn attributes --by accepts (model is always a row key already).
func GroupKeys() []string {
	var out []string
	for _, k := range store.GroupKeys() {
		if k != "model" && k != "episode" {
			out = append(out, k)
		}
	}
	return out
}

// Check checks that --judge is given (each flag's value was checked when parsed; a flag's
// absence is seen only here); its errors are usage errors.
func (q *Request) Check() error {
	if strings.TrimSpace(q.Judge) == "" {
		return usage.Errorf("--judge is required: name the judge whose scores to use (m3eval score lists the judges; m3eval judge makes the rule judge \"rules\")")
	}
	return nil
}

// field is a rubric field estimate can average: a scale, or a choice of Yes and No (with
// perhaps an NA choice).
type field struct {
	name  string
	yesNo bool
	min   int
	max   int
}

// fields lists the rubric's fields estimate reports, in rubric order.
func fields(r *rubric.Rubric) []field {
	var out []field
	for _, f := range r.Fields {
		switch f.Kind {
		case rubric.KindScale:
			out = append(out, field{name: f.Name, min: f.Min, max: f.Max})
		case rubric.KindChoice:
			var vals []string
			for _, c := range f.Choices {
				if !c.NA {
					vals = append(vals, strings.ToLower(c.Value))
				}
			}
			slices.Sort(vals)
			if slices.Equal(vals, []string{"no", "yes"}) {
				out = append(out, field{name: f.Name, yesNo: true})
			}
		}
	}
	return out
}

// value turns a stored value into a number: the scale's number, 1 for Yes, 0 for No; ok is
// false for NA (or anything else, which the store's checks keep out).
func (f field) value(s string) (float64, bool) {
	if f.yesNo {
		switch strings.ToLower(s) {
		case "yes":
			return 1, true
		case "no":
			return 0, true
		}
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// Num is a number that is written as null in JSON when it is NaN (undefined).
type Num float64

// MarshalJSON writes NaN as null.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// Simple is an estimate with its interval.
type Simple struct {
	Estimate Num    `json:"estimate"`
	CI       [2]Num `json:"ci"`
}

// JudgeOnly is the judge's own mean (its interval ignores the judge's bias).
type JudgeOnly struct {
	Estimate Num    `json:"estimate"`
	CI       [2]Num `json:"ci"`
}

// Row is one estimate: a field of one model (in one group).
type Row struct {
	Field      string `json:"field"`
	Model      string `json:"model"`
	Group      string `json:"group"`
	Judge      string `json:"judge"`
	NLabeled   int    `json:"n_labeled"`
	NUnlabeled int    `json:"n_unlabeled"`
	// NEpisodes is the number of episodes (clusters) the turns come from.
	NEpisodes int `json:"n_episodes"`
	// NLabeledEpisodes is the number of episodes with a labeled turn: what the interval rests
	// on (no interval below ppi.MinEpisodes). DF is the interval's t degrees of freedom
	// (null without an interval, and for the active design's normal interval).
	NLabeledEpisodes int       `json:"n_labeled_episodes"`
	DF               Num       `json:"df"`
	Estimate         Num       `json:"estimate"`
	CI               [2]Num    `json:"ci"`
	Lambda           Num       `json:"lambda"`
	HumanOnly        Simple    `json:"human_only"`
	JudgeOnly        JudgeOnly `json:"judge_only"`
	EffectiveN       Num       `json:"effective_n"`
	// LabelsWithoutScore counts turns with a human value but no judge score: outside the
	// population the estimate covers.
	LabelsWithoutScore int `json:"labels_without_judge_score"`
	// ValuesWithoutScore counts the human values (one per annotator) of those turns: with
	// several annotators a turn holds several labels.
	ValuesWithoutScore int `json:"label_values_without_judge_score"`
	// LabelsOutsideSample counts labeled turns left out because the active sample (--sample)
	// did not draw them; SampledNotLabeled counts drawn turns with no human value yet.
	LabelsOutsideSample int `json:"labels_outside_sample,omitempty"`
	SampledNotLabeled   int `json:"sampled_not_labeled,omitempty"`
	// Undefined says why there is no interval ("" when there is one).
	Undefined string `json:"undefined_reason,omitempty"`
}

// DiffRow is the difference of two models' estimates on one field (in one group).
type DiffRow struct {
	Field     string `json:"field"`
	Group     string `json:"group"`
	A         string `json:"a"`
	B         string `json:"b"`
	Estimate  Num    `json:"estimate"`
	CI        [2]Num `json:"ci"`
	P         Num    `json:"p"`
	Undefined string `json:"undefined_reason,omitempty"`
	// DF is the t degrees of freedom of CI and P (null: normal). PAdjusted is P adjusted
	// over the family (Result.Family) by Result.Adjust (null with none). CISimultaneous
	// holds for every pair of the family at once (max-t), whatever --adjust says.
	DF             Num    `json:"df"`
	PAdjusted      Num    `json:"p_adjusted"`
	CISimultaneous [2]Num `json:"ci_simultaneous"`
}

// RankRow is one model's rank on one field (in one group) with the bootstrap shares.
type RankRow struct {
	Field string `json:"field"`
	Group string `json:"group"`
	Model string `json:"model"`
	Rank  int    `json:"rank"`
	// Share is the fraction of replicates in which the model holds Rank; Shares[r] the
	// fraction in which it holds rank r+1 (null without --bootstrap).
	Share  Num   `json:"share"`
	Shares []Num `json:"shares"`
	// RankSet is the lowest and highest rank the model can hold with 95% confidence for
	// all models of the field (and group) at once, from the simultaneous intervals of the
	// differences.
	RankSet [2]int `json:"rank_set"`
}

// Result is the whole output of m3eval estimate.
type Result struct {
	Database  string  `json:"database"`
	Judge     string  `json:"judge"`
	By        string  `json:"by"`
	Level     float64 `json:"level"`
	Bootstrap int     `json:"bootstrap"`
	Seed      uint64  `json:"seed"`
	// Design is "uniform" (every labeled turn counts alike) or "active" (--sample: labels
	// weighted by 1/inclusion probability); Sample names the active sample.
	Design string `json:"design"`
	Sample string `json:"sample,omitempty"`
	// Adjust names the adjustment of the differences' p-values; Family says over which
	// comparisons it and the simultaneous intervals hold.
	Adjust      string    `json:"adjust"`
	Family      string    `json:"family"`
	Rows        []Row     `json:"ppi"`
	Differences []DiffRow `json:"differences"`
	Ranking     []RankRow `json:"ranking"`
}

// turnKey names one turn of one field.
type turnKey struct{ sample, field string }

// turn gathers what is read of one turn and field.
type turn struct {
	model, group string
	episode      int
	judge        float64
	scored       bool
	humanSum     float64
	humanN       int
}

// cellKey names one row of the result.
type cellKey struct{ field, group, model string }

// Compute reads the judge's scores and the done labels and computes every estimate.
func Compute(ctx context.Context, s *store.Store, r *rubric.Rubric, q *Request, database string) (*Result, error) {
	// The one "no such judge" message of score and report.
	if _, err := scoring.ChooseJudges(ctx, s, []string{q.Judge}); err != nil {
		return nil, err
	}
	var err error
	var incl map[string]float64
	if q.Sample != "" {
		if incl, err = s.SampleInclusion(ctx, q.Sample); err != nil {
			return nil, err
		}
	}
	fs := fields(r)
	byName := map[string]field{}
	names := make([]string, len(fs))
	for i, f := range fs {
		byName[f.name], names[i] = f, f.name
	}
	turns := newTurnTable()
	episodes := map[string]int{}
	get := func(row *store.EstimateRow) *compactTurn {
		ep, ok := episodes[row.Episode]
		if !ok {
			ep = len(episodes)
			episodes[row.Episode] = ep
		}
		return turns.get(row.Sample, row.Field, row.Model, row.Group, ep)
	}
	err = s.StreamEstimate(ctx, store.EstimateFilter{Judge: q.Judge, Fields: names, Annotators: q.Annotators, By: q.By},
		func(row *store.EstimateRow) error {
			if v, ok := byName[row.Field].value(row.Value); ok {
				t := get(row)
				t.judge, t.scored = v, true
			}
			return nil
		},
		func(row *store.EstimateRow) error {
			if v, ok := byName[row.Field].value(row.Value); ok {
				t := get(row)
				t.humanSum += v
				t.humanN++
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	res := computeTable(turns, fs, q, incl)
	res.Database = database
	return res, nil
}

// cell is the data of one row.
type cell struct {
	data     ppi.Data
	active   *ppi.ActiveData // with --sample: every scored turn, labels weighted
	outside  int             // labels outside the active sample
	waiting  int             // sampled turns without a human value
	episodes map[int]bool
	orphans  int // labeled turns without a judge score
	orphanN  int // their human values
}

// compute builds one ppi.Data per field × group × model and estimates.
func compute(turns map[turnKey]*turn, fs []field, q *Request, incl map[string]float64) *Result {
	return computeTable(tableOf(turns), fs, q, incl)
}

// computeTable is compute on the turns as Compute reads them. It empties tt once the turns
// are in the cells, so that the estimates run without them.
func computeTable(tt *turnTable, fs []field, q *Request, incl map[string]float64) *Result {
	cells := map[cellKey]*cell{}
	for _, i := range tt.sorted() {
		t := &tt.turns[i]
		k := turnKey{tt.samples[tt.keys[i].sample], tt.strs[tt.keys[i].field]}
		ep, hn := int(t.episode), int(t.humanN)
		ck := cellKey{k.field, tt.strs[t.group], tt.strs[t.model]}
		c := cells[ck]
		if c == nil {
			c = &cell{episodes: map[int]bool{}, data: ppi.Data{Cluster: []int{}, ClusterU: []int{}}}
			cells[ck] = c
		}
		if incl != nil && t.scored {
			if c.active == nil {
				c.active = &ppi.ActiveData{Cluster: []int{}}
			}
			p, drawn := incl[k.sample]
			labeled := drawn && hn > 0
			switch {
			case hn > 0 && !drawn:
				c.outside++
			case drawn && hn == 0:
				c.waiting++
			}
			h := 0.0
			if labeled {
				h = t.humanSum / float64(hn)
			} else {
				p = 1 // unused: only labeled turns are weighted
			}
			a := c.active
			a.Judge, a.Human, a.Labeled = append(a.Judge, t.judge), append(a.Human, h), append(a.Labeled, labeled)
			a.Pi, a.Cluster = append(a.Pi, p), append(a.Cluster, ep)
		}
		switch {
		case !t.scored:
			if hn > 0 {
				c.orphans++
				c.orphanN += hn
			}
		case hn > 0:
			c.data.Human = append(c.data.Human, t.humanSum/float64(hn))
			c.data.Judge = append(c.data.Judge, t.judge)
			c.data.Cluster = append(c.data.Cluster, ep)
			c.episodes[ep] = true
		default:
			c.data.Unlabeled = append(c.data.Unlabeled, t.judge)
			c.data.ClusterU = append(c.data.ClusterU, ep)
			c.episodes[ep] = true
		}
	}
	*tt = turnTable{} // the cells hold what the estimates need
	res := &Result{Judge: q.Judge, By: q.By, Level: 1 - Alpha, Bootstrap: q.Bootstrap, Seed: q.Seed,
		Design: "uniform", Sample: q.Sample, Rows: []Row{}, Differences: []DiffRow{}, Ranking: []RankRow{},
		Adjust: string(q.adjustment()), Family: Family}
	if incl != nil {
		res.Design = "active"
		return computeActive(res, cells, fs, q)
	}
	// Groups and models in sorted order, fields in rubric order.
	groups, models := groupsAndModels(cells)
	for _, f := range fs {
		for _, g := range groups {
			var present []string
			var datas []*ppi.Data
			for _, m := range models {
				c := cells[cellKey{f.name, g, m}]
				if c == nil || len(c.data.Human)+len(c.data.Unlabeled) == 0 {
					continue // the judge scored none of these turns: no population
				}
				r := row(f, g, m, q.Judge, c)
				res.Rows = append(res.Rows, r)
				// Only models with an interval are compared and ranked: a model without one
				// has no variance to compare with, and its bootstrap shares would only
				// resample one or two episodes.
				if r.Undefined == "" {
					present = append(present, m)
					datas = append(datas, &c.data)
				}
			}
			if len(present) == 0 {
				continue
			}
			jt := ppi.NewJoint(datas, true, 0)
			var diffs []ppi.Difference
			for _, pr := range allPairs(len(present)) {
				diffs = append(diffs, jt.Diff(pr.A, pr.B, Alpha))
			}
			crit := jt.Simultaneous(allPairs(len(present)), Alpha, q.Seed)
			res.Differences = append(res.Differences, family(f, g, present, diffs, crit, q.adjustment())...)
			if len(present) < 2 {
				continue
			}
			rank, shares := ppi.RankShares(datas, q.Bootstrap, q.Seed)
			sets := rankSets(res.Differences[len(res.Differences)-len(diffs):], len(present))
			for i, m := range present {
				rr := RankRow{Field: f.name, Group: g, Model: m, Rank: rank[i], Share: Num(math.NaN()),
					RankSet: [2]int{sets[i].Lo, sets[i].Hi}}
				if shares != nil {
					rr.Share = Num(shares[i][rank[i]-1])
					for _, s := range shares[i] {
						rr.Shares = append(rr.Shares, Num(s))
					}
				}
				res.Ranking = append(res.Ranking, rr)
			}
		}
	}
	return res
}

// row estimates one cell. The point estimates are internal/ppi's (ppi_py's); what is shown
// of the intervals follows two rules of the command: no interval when the labeled turns come
// from fewer than ppi.MinEpisodes episodes (the cluster-robust variance is biased downward
// with few clusters), and interval ends clipped to the field's range (fieldRange).
func row(f field, group, model, judge string, c *cell) Row {
	d := &c.data
	p := ppi.Mean(d, Alpha)
	h := ppi.HumanOnly(d, Alpha)
	j := ppi.JudgeOnly(d, Alpha)
	lam := Num(p.Lambda)
	if len(d.Human) == 0 {
		lam = Num(math.NaN())
	}
	labeledEps := map[int]bool{}
	for _, e := range d.Cluster {
		labeledEps[e] = true
	}
	// Too few episodes is the first reason to give (labels all the same from 2 episodes
	// say nothing about the spread either).
	if (p.Undefined == "" || p.Undefined == ppi.ReasonNoSpread) && len(labeledEps) < ppi.MinEpisodes {
		p.Interval = noInterval(p.Interval, ppi.ReasonFewEpisodes)
		h = noInterval(h, ppi.ReasonFewEpisodes)
	}
	// The same rule for the judge's own interval, over the episodes of all the row's turns
	// (with one episode its clustered variance was 0, an interval of zero width).
	if j.Undefined == "" && len(c.episodes) < ppi.MinEpisodes {
		j = noInterval(j, "turns from fewer than "+strconv.Itoa(ppi.MinEpisodes)+" episodes")
	}
	df := Num(p.DF)
	if p.Undefined != "" {
		df = Num(math.NaN())
	}
	return Row{Field: f.name, Model: model, Group: group, Judge: judge,
		NLabeled: len(d.Human), NUnlabeled: len(d.Unlabeled), NEpisodes: len(c.episodes),
		NLabeledEpisodes: len(labeledEps), DF: df,
		Estimate: Num(p.Estimate), CI: f.clip(p.Interval), Lambda: lam,
		HumanOnly:          Simple{Estimate: Num(h.Estimate), CI: f.clip(h)},
		JudgeOnly:          JudgeOnly{Estimate: Num(j.Estimate), CI: f.clip(j)},
		EffectiveN:         Num(ppi.EffectiveN(len(d.Human), h, p.Interval)),
		LabelsWithoutScore: c.orphans, ValuesWithoutScore: c.orphanN, Undefined: p.Undefined}
}

// noInterval is iv without its interval, for the reason why.
func noInterval(iv ppi.Interval, why string) ppi.Interval {
	nan := math.NaN()
	return ppi.Interval{Estimate: iv.Estimate, SE: nan, Lo: nan, Hi: nan, Undefined: why}
}

// fieldRange is the range of the field's mean human value: the scale's ends, or 0–1 for a
// Yes-rate.
func (f field) fieldRange() (lo, hi float64) {
	if f.yesNo {
		return 0, 1
	}
	return float64(f.min), float64(f.max)
}

// clip returns the interval's ends clipped to the field's range: a normal interval around a
// mean near an end of the scale reaches past it, where the mean cannot be. Clipping changes
// no coverage (the true mean is inside the range); the point estimate is left as computed.
func (f field) clip(iv ppi.Interval) [2]Num {
	lo, hi := f.fieldRange()
	if math.IsNaN(iv.Lo) {
		return [2]Num{Num(iv.Lo), Num(iv.Hi)}
	}
	return [2]Num{Num(math.Min(hi, math.Max(lo, iv.Lo))), Num(math.Min(hi, math.Max(lo, iv.Hi)))}
}

// groupsAndModels lists the groups and the models of the cells, each sorted.
func groupsAndModels(cells map[cellKey]*cell) (groups, models []string) {
	for k := range cells {
		if !slices.Contains(groups, k.group) {
			groups = append(groups, k.group)
		}
		if !slices.Contains(models, k.model) {
			models = append(models, k.model)
		}
	}
	slices.Sort(groups)
	slices.Sort(models)
	return groups, models
}

// Family says what the adjusted p-values and the simultaneous intervals hold over.
const Family = "the pairs of models of one field (and group): p adjusted over them, intervals simultaneous (max-t) over them"

// allPairs lists the pairs (i, j), i < j, of k models in the order of the differences.
func allPairs(k int) []ppi.Pair {
	var out []ppi.Pair
	for a := range k {
		for b := a + 1; b < k; b++ {
			out = append(out, ppi.Pair{A: a, B: b})
		}
	}
	return out
}

// family turns the differences of the pairs of present models (allPairs order) into rows:
// each with its own interval and p, the p adjusted over the family, and the simultaneous
// interval est ± crit·SE.
func family(f field, g string, present []string, diffs []ppi.Difference, crit float64, adj agree.Adjustment) []DiffRow {
	ps := make([]float64, len(diffs))
	for i, d := range diffs {
		ps[i] = d.P
	}
	padj := make([]float64, len(diffs))
	if adj == agree.AdjustNone {
		for i := range padj {
			padj[i] = math.NaN()
		}
	} else {
		padj = agree.AdjustP(ps, adj)
	}
	out := make([]DiffRow, 0, len(diffs))
	for i, pr := range allPairs(len(present)) {
		d := diffs[i]
		df := Num(d.DF)
		if d.DF == 0 || d.Undefined != "" {
			df = Num(math.NaN())
		}
		sim := [2]Num{Num(math.NaN()), Num(math.NaN())}
		if d.Undefined == "" && !math.IsNaN(crit) {
			sim = [2]Num{Num(d.Estimate - crit*d.SE), Num(d.Estimate + crit*d.SE)}
		}
		out = append(out, DiffRow{Field: f.name, Group: g, A: present[pr.A], B: present[pr.B],
			Estimate: Num(d.Estimate), CI: [2]Num{Num(d.Lo), Num(d.Hi)}, P: Num(d.P), Undefined: d.Undefined,
			DF: df, PAdjusted: Num(padj[i]), CISimultaneous: sim})
	}
	return out
}

// rankSets are the rank confidence sets of k models from their family's differences
// (allPairs order, simultaneous intervals).
func rankSets(diffs []DiffRow, k int) []ppi.RankSet {
	lo, hi := make([]float64, len(diffs)), make([]float64, len(diffs))
	for i, d := range diffs {
		lo[i], hi[i] = float64(d.CISimultaneous[0]), float64(d.CISimultaneous[1])
	}
	return ppi.RankSets(k, allPairs(k), lo, hi)
}
