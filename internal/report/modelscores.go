package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/m3bench/m3eval/internal/estimate"
)

// This file is the report's "Model scores" section: m3eval estimate's numbers for the first
// judge of the report, one forest plot per field.

// modelScoresSection draws, per field, each model's PPI++ estimate and interval beside the
// human-only and judge-only ones, with the effective number of human labels in the table.
func modelScoresSection(m *estimate.Result) Section {
	const id, title = "model-scores", "Model scores"
	if m == nil {
		return omitted(id, title, "Left out: no automatic judge in this database (m3eval judge scores every turn with the rule judge; m3eval import-scores --judge NAME FILE brings one in).")
	}
	if len(m.Rows) == 0 {
		return omitted(id, title, fmt.Sprintf("Left out: judge %s scored no turn on a scale or Yes/No field.", m.Judge))
	}
	labeled := false
	for _, r := range m.Rows {
		labeled = labeled || r.NLabeled > 0
	}
	if !labeled {
		return omitted(id, title, "Left out: no done label yet.")
	}
	sec := Section{ID: id, Title: title, Intro: fmt.Sprintf("Each model's mean human score per field, estimated from the human labels and judge %s's "+
		"scores together (prediction-powered inference, PPI++), beside the human labels alone and the judge alone, with 95%% intervals over episodes. "+
		"Effective n: how many human labels alone would give an interval as narrow as PPI's. As m3eval estimate --judge %s prints them; "+
		"Rank: 1 for the highest PPI estimate; rank set: the ranks the model can hold with 95%% confidence for all models of the field at once "+
		"(from the simultaneous intervals of the differences; models without an interval are not ranked); rank share: the share of bootstrap replicates in which it holds its rank. "+
		"docs/statistics.md defines them.", m.Judge, m.Judge)}
	var fields []string
	for _, r := range m.Rows {
		if len(fields) == 0 || fields[len(fields)-1] != r.Field {
			fields = append(fields, r.Field)
		}
	}
	for _, f := range fields {
		var rows []estimate.Row
		for _, r := range m.Rows {
			if r.Field == f {
				rows = append(rows, r)
			}
		}
		ranks := map[[2]string]estimate.RankRow{}
		for _, r := range m.Ranking {
			if r.Field == f {
				ranks[[2]string{r.Group, r.Model}] = r
			}
		}
		ch := modelScoresChart(f, m.By, rows, ranks)
		if lo := m.LeftOut(f); lo != "" {
			// The labels outside the estimate, said where the numbers are (#39).
			ch.Caption += "; " + lo
		}
		sec.Charts = append(sec.Charts, ch)
	}
	return sec
}

func modelScoresChart(field, by string, rows []estimate.Row, ranks map[[2]string]estimate.RankRow) Chart {
	ch := Chart{ID: "model-scores-" + strings.ReplaceAll(field, "_", "-"), Title: field,
		Caption: "mean human score per model: PPI (labels + judge), human labels only, judge only; whiskers 95% intervals"}
	cols := []string{"model"}
	if by != "" {
		cols = append(cols, by)
	}
	ch.Table.Columns = append(cols, "labeled", "unlabeled", "PPI", "PPI ci95 low", "PPI ci95 high",
		"human only", "human ci95 low", "human ci95 high", "judge only", "effective n", "lambda",
		"labeled episodes", "rank", "rank set (95%, simultaneous)", "rank share")
	labels := make([]string, len(rows))
	series := make([][]interval, 3)
	lo, hi := math.Inf(1), math.Inf(-1)
	defined := false
	for i, r := range rows {
		labels[i] = r.Model
		if by != "" {
			labels[i] += " · " + r.Group
		}
		cells := []Cell{Text(r.Model)}
		if by != "" {
			cells = append(cells, Text(r.Group))
		}
		f := func(n estimate.Num) float64 { return float64(n) }
		cells = append(cells, Int(r.NLabeled), Int(r.NUnlabeled), Num(f(r.Estimate)), Num(f(r.CI[0])), Num(f(r.CI[1])),
			Num(f(r.HumanOnly.Estimate)), Num(f(r.HumanOnly.CI[0])), Num(f(r.HumanOnly.CI[1])), Num(f(r.JudgeOnly.Estimate)),
			Num(f(r.EffectiveN)), Num(f(r.Lambda)), Int(r.NLabeledEpisodes))
		if rk, ok := ranks[[2]string{r.Group, r.Model}]; ok {
			set := fmt.Sprintf("%d–%d", rk.RankSet[0], rk.RankSet[1])
			if rk.RankSet[0] == rk.RankSet[1] {
				set = fmt.Sprint(rk.RankSet[0])
			}
			cells = append(cells, Int(rk.Rank), Text(set), Num(f(rk.Share)))
		} else {
			cells = append(cells, Text("—"), Text("—"), Num(math.NaN()))
		}
		ch.Table.add(cells...)
		pts := []interval{
			{Y: float64(i), Est: f(r.Estimate), Lo: f(r.CI[0]), Hi: f(r.CI[1]), HasCI: !math.IsNaN(f(r.CI[0]))},
			{Y: float64(i), Est: f(r.HumanOnly.Estimate), Lo: f(r.HumanOnly.CI[0]), Hi: f(r.HumanOnly.CI[1]), HasCI: !math.IsNaN(f(r.HumanOnly.CI[0]))},
			{Y: float64(i), Est: f(r.JudgeOnly.Estimate), Lo: math.NaN(), Hi: math.NaN()},
		}
		for s, p := range pts {
			series[s] = append(series[s], p)
			for _, x := range []float64{p.Est, p.Lo, p.Hi} {
				if !math.IsNaN(x) {
					lo, hi, defined = math.Min(lo, x), math.Max(hi, x), true
				}
			}
		}
	}
	if !defined {
		ch.Note = "no estimate yet: no turn of this field has a human label"
		return ch
	}
	pad := math.Max(0.05, 0.05*(hi-lo))
	ch.SVG = modelForest(field, labels, []string{"PPI", "human only", "judge only"}, series, lo-pad, hi+pad)
	return ch
}

// modelForest is forestPlot without its reference line at 0, which means nothing on a 1–5
// scale.
func modelForest(title string, labels, names []string, series [][]interval, lo, hi float64) template.HTML {
	p := newPlot(title, "mean human score (1–5) or Yes rate (0–1)", "")
	n := len(labels)
	rev := make([]string, n)
	for i, l := range labels {
		rev[n-1-i] = l
	}
	p.NominalY(rev...)
	p.X.Min, p.X.Max = lo, hi
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	for s, pts := range series {
		nudge := 0.3 * (float64(s)/float64(len(series)-1) - 0.5)
		moved := make([]interval, len(pts))
		for i, q := range pts {
			q.Y = float64(n-1) - q.Y - nudge
			moved[i] = q
		}
		iv := newIntervals(moved, s)
		p.Add(iv)
		p.Legend.Add(names[s], iv)
	}
	legend := 0.45 * float64(len(names))
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3+legend
	p.Add(plotter.NewGrid())
	return svgOf(p, chartWidth, chartHeight(n)+vg.Points(16*legend), title)
}
