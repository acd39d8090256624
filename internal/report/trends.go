package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot/plotter"
)

// Trends holds the done labels of the 1–5 fields counted by turn position and by number of
// confusable objects (meta.confusable_objects), for the trend charts.
type Trends struct {
	Fields   []string // the scale fields, rubric order
	Min, Max float64  // the span of their scales
	Counts   []TrendCount
}

// TrendCount is how many done labels gave Value to Field on turns at position Turn with
// Confusable confusable objects (-1: the turn does not say).
type TrendCount struct {
	Turn, Confusable int
	Field, Value     string
	N                int
}

// trendsSection: how the ratings move along the conversation and with the number of
// confusable objects across images.
func trendsSection(t *Trends) Section {
	const id, title = "trends", "Trends: conversation length and confusable objects"
	if t == nil || len(t.Fields) == 0 {
		return omitted(id, title, "Left out: the rubric has no 1–5 field to average.")
	}
	if len(t.Counts) == 0 {
		return omitted(id, title, "Left out: no done label yet.")
	}
	sec := Section{ID: id, Title: title,
		Intro: "The annotators' mean rating on the 1–5 fields by the turn's position in its episode, and by the number of confusable objects in the scene when the turns record it."}
	sec.Charts = append(sec.Charts,
		trendChart(t, "trend-turn", "Mean rating by turn position", "turn position in the episode", "turn",
			func(c TrendCount) (int, bool) { return c.Turn, true }),
		trendChart(t, "trend-confusable", "Mean rating by confusable objects", "confusable objects in the scene", "confusable objects",
			func(c TrendCount) (int, bool) { return c.Confusable, c.Confusable >= 0 }))
	return sec
}

// trendChart averages the labels of each scale field at each x that key gives.
func trendChart(t *Trends, id, title, xLabel, xCol string, key func(TrendCount) (int, bool)) Chart {
	ch := Chart{ID: id, Title: title, Table: Table{Columns: []string{xCol, "field", "labels", "mean rating"}}}
	type acc struct {
		sum float64
		n   int
	}
	sums := map[string]map[int]*acc{}
	total := 0
	for _, c := range t.Counts {
		x, ok := key(c)
		v, err := strconv.ParseFloat(c.Value, 64)
		if !ok || err != nil || !slices.Contains(t.Fields, c.Field) {
			continue
		}
		if sums[c.Field] == nil {
			sums[c.Field] = map[int]*acc{}
		}
		a := sums[c.Field][x]
		if a == nil {
			a = &acc{}
			sums[c.Field][x] = a
		}
		a.sum += v * float64(c.N)
		a.n += c.N
		total += c.N
	}
	var names []string
	var series []plotter.XYs
	for _, f := range t.Fields {
		var xy plotter.XYs
		for _, x := range slices.Sorted(maps.Keys(sums[f])) {
			a := sums[f][x]
			m := a.sum / float64(a.n)
			xy = append(xy, plotter.XY{X: float64(x), Y: m})
			ch.Table.add(Int(x), Text(f), Int(a.n), Num(m))
		}
		if len(xy) > 0 {
			names = append(names, cleanLabel(f))
			series = append(series, xy)
		}
	}
	if total == 0 {
		ch.Note = "No labelled turn records its number of confusable objects (meta.confusable_objects, which the simulator writes)."
		if id == "trend-turn" {
			ch.Note = "No label to average."
		}
		return ch
	}
	ch.Caption = fmt.Sprintf("Mean of the done labels (rubric points, %g–%g) at each %s, one line and marker per field; every label counts once, so items with more annotators weigh more; n = %d labels.", t.Min, t.Max, xCol, total)
	ch.SVG = pointLines(title, xLabel, "mean rating (points)", names, series, math.Max(t.Min-0.2, 0), t.Max+0.2)
	return ch
}
