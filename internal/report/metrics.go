package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/m3bench/m3eval/internal/judge"
)

// MetricsData is the rule judge's action-space metrics (m3eval score --metrics): one row
// per action type, model and metric, and the cross-image trends.
type MetricsData struct {
	Source string // what computed them, e.g. the judge's rules version
	Rows   []MetricRow
	Trends []MetricTrend
}

// MetricRow is one metric of one model on one action type.
type MetricRow struct {
	Action, Model, Metric string
	N                     int
	Value, Lo, Hi         float64 // NaN when undefined
	Interval              string  // how Lo and Hi were computed (Wilson, bootstrap)
}

// MetricTrend is one score of one model in one bin of a trend dimension (number of
// confusable objects, conversation length).
type MetricTrend struct {
	Dimension, Score, Model, Bin string
	N                            int
	Value, Lo, Hi                float64
	Interval                     string
}

// metricsSection: the action-space metrics per model, bars with intervals, and the trends.
func metricsSection(m *MetricsData, leftOut string) Section {
	const id, title = "metrics", "Action-space metrics per model"
	if m == nil && leftOut != "" {
		return omitted(id, title, leftOut)
	}
	if m == nil {
		return omitted(id, title, "Left out: not asked for (--metrics=false).")
	}
	if len(m.Rows) == 0 && len(m.Trends) == 0 {
		return omitted(id, title, "Left out: the judge found no turn to measure.")
	}
	sec := Section{ID: id, Title: title, Intro: "The automatic judge's metrics per action type and model, with 95% intervals (" + m.Source + ")."}
	var metrics []string
	for _, r := range m.Rows {
		if !slices.Contains(metrics, r.Metric) {
			metrics = append(metrics, r.Metric)
		}
	}
	for _, name := range metrics {
		var rows []MetricRow
		for _, r := range m.Rows {
			if r.Metric == name {
				rows = append(rows, r)
			}
		}
		ch := Chart{ID: "metric-" + slug(name), Title: name + " per action type and model",
			Table: Table{Columns: []string{"action_type", "model", "n", "value", "ci95 low", "ci95 high", "interval"}}}
		cats, models, series, n := barSeries(len(rows), func(i int) (string, string, bar, int) {
			r := rows[i]
			ch.Table.add(Text(r.Action), Text(r.Model), Int(r.N), Num(r.Value), Num(r.Lo), Num(r.Hi), Text(r.Interval))
			return r.Action, r.Model, bar{Value: r.Value, Lo: r.Lo, Hi: r.Hi, HasCI: !math.IsNaN(r.Lo)}, r.N
		})
		ch.Caption = fmt.Sprintf("%s (unitless, 0–1 for rates) per action type, one bar per model, with its 95%% interval; n = %d turns.", name, n)
		ch.SVG = barChart(ch.Title, "action type", name, cats, models, series, 0)
		sec.Charts = append(sec.Charts, ch)
	}
	type key struct{ dim, score string }
	var order []key
	for _, t := range m.Trends {
		if k := (key{t.Dimension, t.Score}); !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	for _, k := range order {
		var rows []MetricTrend
		for _, t := range m.Trends {
			if t.Dimension == k.dim && t.Score == k.score {
				rows = append(rows, t)
			}
		}
		ch := Chart{ID: "metric-trend-" + slug(k.dim) + "-" + slug(k.score), Title: k.score + " by " + k.dim,
			Table: Table{Columns: []string{k.dim, "model", "n", "value", "ci95 low", "ci95 high", "interval"}}}
		cats, models, series, n := barSeries(len(rows), func(i int) (string, string, bar, int) {
			r := rows[i]
			ch.Table.add(Text(r.Bin), Text(r.Model), Int(r.N), Num(r.Value), Num(r.Lo), Num(r.Hi), Text(r.Interval))
			return r.Bin, r.Model, bar{Value: r.Value, Lo: r.Lo, Hi: r.Hi, HasCI: !math.IsNaN(r.Lo)}, r.N
		})
		ch.Caption = fmt.Sprintf("%s per %s, one bar per model, with its 95%% interval; n = %d turns.", k.score, k.dim, n)
		ch.SVG = barChart(ch.Title, k.dim, k.score, cats, models, series, 0)
		sec.Charts = append(sec.Charts, ch)
	}
	return sec
}

// barSeries arranges n (category, series, bar) entries into bars per series aligned with
// the categories, both in order of first appearance; empty slots are undefined bars.
func barSeries(n int, at func(i int) (cat, name string, b bar, count int)) (cats, names []string, series [][]bar, total int) {
	type entry struct {
		c, s int
		b    bar
	}
	var es []entry
	for i := 0; i < n; i++ {
		c, s, b, k := at(i)
		ci, si := slices.Index(cats, c), slices.Index(names, s)
		if ci < 0 {
			ci, cats = len(cats), append(cats, c)
		}
		if si < 0 {
			si, names = len(names), append(names, s)
		}
		es = append(es, entry{ci, si, b})
		total += k
	}
	series = make([][]bar, len(names))
	for s := range series {
		series[s] = make([]bar, len(cats))
		for c := range series[s] {
			series[s][c] = bar{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		}
	}
	for _, e := range es {
		series[e.s][e.c] = e.b
	}
	return cats, names, series, total
}

// MetricsFrom turns the judge's metrics report (m3eval score --metrics) into the report's rows.
func MetricsFrom(rep judge.MetricsReport) *MetricsData {
	m := &MetricsData{Source: fmt.Sprintf("rules %s; rates: Wilson intervals, scores: percentile bootstrap over turns, %d replicates, seed %d", rep.Rules, rep.Bootstrap, rep.Seed)}
	for _, r := range rep.Metrics {
		m.Rows = append(m.Rows, MetricRow{Action: r.Action, Model: r.Model, Metric: r.Metric, N: r.N, Value: r.Value, Lo: r.Lo, Hi: r.Hi, Interval: r.Interval})
	}
	for _, t := range rep.Trends {
		m.Trends = append(m.Trends, MetricTrend{Dimension: t.Dimension, Score: t.Score, Model: t.Model, Bin: t.Bin, N: t.N, Value: t.Value, Lo: t.Lo, Hi: t.Hi, Interval: t.Interval})
	}
	return m
}
