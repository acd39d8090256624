package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/render"
)

// judgeKey is the bootstrap key of a judge correlation, as agree names it: the judge's
// name (spaces and dots as _) appears only when several judges are compared.
func judgeKey(judge string, several bool, stat string) string {
	if !several {
		return "human_vs_auto_" + stat
	}
	return "human_vs_auto_" + strings.NewReplacer(" ", "_", ".", "_").Replace(judge) + "_" + stat
}

// judgesSection: the annotators against every automatic judge.
func judgesSection(s *ScoreData) Section {
	const id, title = "judges", "Humans and automatic judges"
	if s == nil || len(s.Judges) == 0 {
		return omitted(id, title, "Left out: no automatic judge in this database (m3eval import-scores --judge NAME FILE brings one in).")
	}
	if !s.hasLabels() {
		return omitted(id, title, "Left out: no done label to compare the judges with.")
	}
	sec := Section{ID: id, Title: title,
		Intro: "How each automatic judge tracks the annotators: correlation with the item's mean rating on the 1–5 fields, and the annotators' majority label against the judge's."}
	sec.Charts = append(sec.Charts, judgeSummary(s), judgeKappas(s))
	for fi, r := range s.Overall {
		for ji, j := range r.Judges {
			if fi < len(s.Data) && ji < len(s.Data[fi].Judges) {
				sec.Charts = append(sec.Charts, confusionChart(r, &s.Data[fi], ji, j))
				if r.Field.Type == agree.Ordinal {
					sec.Charts = append(sec.Charts, scatterChart(r, &s.Data[fi], ji, j))
				}
			}
		}
	}
	if s.By != "" {
		for fi, r := range s.Overall {
			if r.Field.Type == agree.Ordinal {
				sec.Charts = append(sec.Charts, byGroupChart(s, fi))
			}
		}
	}
	return sec
}

// correlationRows adds, for every compared judge of r, its Spearman point at row y to its
// series and its correlations to the table, each row led by lead(judge); it returns the
// largest number of items correlated.
func correlationRows(ch *Chart, series [][]interval, y float64, r agree.FieldResult, judges []string, lead func(judge string) []Cell) int {
	nMax := 0
	for _, j := range r.Judges {
		ji := slices.Index(judges, j.Judge)
		if ji < 0 {
			continue
		}
		lo, hi, ok := bootCI(r, judgeKey(j.Judge, len(judges) > 1, "spearman"))
		series[ji] = append(series[ji], interval{Y: y, Est: val(j.Spearman), Lo: lo, Hi: hi, HasCI: ok})
		row := append(lead(j.Judge), Int(j.NCorrelation), Num(val(j.Pearson)), Num(val(j.Spearman)))
		row = append(row, ciCells(lo, hi, ok)...)
		ch.Table.add(append(row, Num(val(j.KendallTauB)), Text(whyNot(j.Spearman, r, judgeKey(j.Judge, len(judges) > 1, "spearman"))))...)
		nMax = max(nMax, j.NCorrelation)
	}
	return nMax
}

// judgeSummary: Spearman's rho with its interval per ordinal field and judge.
func judgeSummary(s *ScoreData) Chart {
	ch := Chart{ID: "judges-correlation", Title: "Judge vs mean human rating (Spearman ρ)",
		Table: Table{Columns: []string{"judge", "field", "items correlated", "pearson", "spearman", "ci95 low", "ci95 high", "kendall_tau_b", "undefined because"}}}
	var labels []string
	series := make([][]interval, len(s.Judges))
	nMax := 0
	for _, r := range s.Overall {
		if r.Field.Type != agree.Ordinal {
			continue
		}
		nMax = max(nMax, correlationRows(&ch, series, float64(len(labels)), r, s.Judges,
			func(judge string) []Cell { return []Cell{Text(judge), Text(r.Field.Name)} }))
		labels = append(labels, cleanLabel(r.Field.Name))
	}
	if len(labels) == 0 {
		ch.Note = "No 1–5 field: correlations need numeric ratings."
		return ch
	}
	ch.Caption = fmt.Sprintf("Spearman's ρ (unitless) of each judge's score with the item's mean human rating, 95%% bootstrap interval when computed; one marker shape per judge; n = up to %d items.", nMax)
	ch.SVG = forestPlot(ch.Title, "Spearman ρ", labels, s.Judges, series, -0.2, 1)
	return ch
}

// judgeKappas: the majority label against the judge's label, every field.
func judgeKappas(s *ScoreData) Chart {
	ch := Chart{ID: "judges-kappa", Title: "Judge vs majority label (Cohen κ)",
		Table: Table{Columns: []string{"judge", "field", "items with a majority", "items tied", "exact match", "key", "kappa", "undefined because"}}}
	var labels []string
	series := make([][]interval, len(s.Judges))
	nMax := 0
	for _, r := range s.Overall {
		w, key := agree.Unweighted, "cohen_kappa"
		if r.Field.Type == agree.Ordinal {
			w, key = agree.Quadratic, "cohen_kappa_quadratic"
		}
		for _, j := range r.Judges {
			ji := slices.Index(s.Judges, j.Judge)
			if ji < 0 {
				continue
			}
			series[ji] = append(series[ji], interval{Y: float64(len(labels)), Est: val(j.Kappa[w]), Lo: math.NaN(), Hi: math.NaN()})
			ch.Table.add(Text(j.Judge), Text(r.Field.Name), Int(j.NMajority), Int(j.NTiedMajority), Num(val(j.ExactMatch)), Text(key), Num(val(j.Kappa[w])), Text(reason(j.Kappa[w])))
			nMax = max(nMax, j.NMajority)
		}
		labels = append(labels, cleanLabel(r.Field.Name))
	}
	ch.Caption = fmt.Sprintf("Cohen's κ (unitless; quadratic weights on 1–5 fields) of the annotators' strict-plurality label against the judge's; ties left out; n = up to %d items.", nMax)
	ch.SVG = forestPlot(ch.Title, "Cohen κ", labels, s.Judges, series, -0.2, 1)
	return ch
}

// majority returns the strict-plurality category of row (agree.Missing when tied or
// empty), as agree's human-vs-judge statistics define it, and the row's mean value.
func majority(row []uint8, counts []int, values []int64) (label uint8, mean float64, n int) {
	clear(counts)
	var sum float64
	for _, c := range row {
		if c != agree.Missing {
			n++
			counts[c]++
			if values != nil {
				sum += float64(values[c])
			}
		}
	}
	best, second, at := 0, 0, -1
	for c, x := range counts {
		if x > best {
			best, second, at = x, best, c
		} else if x > second {
			second = x
		}
	}
	mean = math.NaN()
	if n > 0 {
		mean = sum / float64(n)
	}
	if n == 0 || second == best {
		return agree.Missing, mean, n
	}
	return uint8(at), mean, n
}

// confusionChart: the majority label (rows) against the judge's label (columns).
func confusionChart(r agree.FieldResult, d *agree.FieldData, ji int, v agree.VsJudge) Chart {
	cats := d.Field.Categories
	k := len(cats)
	table := make([]int, k*k)
	counts := make([]int, k)
	j := d.Judges[ji]
	m := d.Ratings
	for i := 0; i < m.Items; i++ {
		if !j.Present[i] || j.Code[i] == agree.Missing {
			continue
		}
		lab, _, _ := majority(m.Codes[i*m.Raters:(i+1)*m.Raters], counts, nil)
		if lab == agree.Missing {
			continue
		}
		table[int(lab)*k+int(j.Code[i])]++
	}
	ch := Chart{ID: "confusion-" + slug(v.Judge) + "-" + slug(r.Field.Name), Title: "Majority label × " + v.Judge + " · " + r.Field.Name,
		Table: Table{Columns: []string{"majority label", "judge label", "items"}}}
	rowSum := make([]int, k)
	total := 0
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			rowSum[a] += table[a*k+b]
			ch.Table.add(Text(cats[a]), Text(cats[b]), Int(table[a*k+b]))
		}
		total += rowSum[a]
	}
	if total == 0 {
		ch.Note = "No item has both a majority label and a label from this judge."
		return ch
	}
	ch.Caption = fmt.Sprintf("Items per (majority label, judge label); shade is the share of the row, the number the count of items; n = %d items (ties and scores outside the categories left out).", total)
	ch.SVG = heatmap(ch.Title, v.Judge+" label", "human majority label", cats, cats,
		func(a, b int) float64 {
			if rowSum[a] == 0 {
				return math.NaN()
			}
			return float64(table[a*k+b]) / float64(rowSum[a])
		},
		func(a, b int) string { return fmt.Sprint(table[a*k+b]) })
	return ch
}

// scatterChart: the item's mean human rating against the judge's score, binned to 0.1.
func scatterChart(r agree.FieldResult, d *agree.FieldData, ji int, v agree.VsJudge) Chart {
	j := d.Judges[ji]
	m := d.Ratings
	counts := make([]int, len(d.Field.Categories))
	// Points are binned to 0.1 rubric points; when that leaves more than maxBins circles
	// (continuous judge scores), to 0.25.
	type key struct{ x, y int64 }
	var bins map[key]int
	var order []key
	n := 0
	res := 10.0
	for pass := 0; pass < 2; pass++ {
		bins, order, n = map[key]int{}, nil, 0
		for i := 0; i < m.Items; i++ {
			y := j.Num[i]
			if !j.Present[i] || math.IsNaN(y) {
				continue
			}
			_, mean, k := majority(m.Codes[i*m.Raters:(i+1)*m.Raters], counts, d.Field.Values)
			if k == 0 {
				continue
			}
			b := key{int64(math.Round(mean * res)), int64(math.Round(y * res))}
			if bins[b] == 0 {
				order = append(order, b)
			}
			bins[b]++
			n++
		}
		if len(bins) <= maxBins {
			break
		}
		res = 4
	}
	slices.SortFunc(order, func(a, b key) int {
		if a.x != b.x {
			return int(a.x - b.x)
		}
		return int(a.y - b.y)
	})
	ch := Chart{ID: "scatter-" + slug(v.Judge) + "-" + slug(r.Field.Name), Title: "Item mean × " + v.Judge + " · " + r.Field.Name,
		Table: Table{Columns: []string{"mean human rating (bin)", "judge score (bin)", "items"}}}
	pts := make([]bubble, 0, len(order))
	for _, b := range order {
		x, y := float64(b.x)/res, float64(b.y)/res
		pts = append(pts, bubble{X: x, Y: y, N: bins[b]})
		ch.Table.add(Num(x), Num(y), Int(bins[b]))
	}
	if n == 0 {
		ch.Note = "No item has both human ratings and a numeric score from this judge."
		return ch
	}
	lo, hi := float64(d.Field.Values[0]), float64(d.Field.Values[len(d.Field.Values)-1])
	ch.Caption = fmt.Sprintf("Each circle is the items at one (mean rating, judge score) point, both rounded to %g (rubric points); area ∝ items; dashed line: equal; n = %d items, Pearson r = %s.", 1/res, n, Num(val(v.Pearson)).Shown())
	ch.SVG = bubblePlot(ch.Title, "mean human rating (points)", v.Judge+" score (points)", pts, lo, hi)
	return ch
}

// maxBins bounds the circles of a scatter before it bins more coarsely.
const maxBins = 200

// maxGroups bounds the rows of a per-group dot plot (--by episode can have thousands).
const maxGroups = 40

// byGroupChart: Spearman's rho per group (action type, model, …) and judge, for field fi.
func byGroupChart(s *ScoreData, fi int) Chart {
	name := s.Overall[fi].Field.Name
	ch := Chart{ID: "bygroup-" + slug(name), Title: "Judge vs humans per " + s.By + " · " + name,
		Table: Table{Columns: []string{s.By, "judge", "items correlated", "pearson", "spearman", "ci95 low", "ci95 high", "kendall_tau_b", "undefined because"}}}
	groups := s.Groups
	note := ""
	if len(groups) > maxGroups {
		groups = slices.Clone(groups)
		slices.SortStableFunc(groups, func(a, b render.Section) int { return nItems(b, fi) - nItems(a, fi) })
		groups = groups[:maxGroups]
		note = fmt.Sprintf(" Only the %d of %d groups with the most items are drawn.", maxGroups, len(s.Groups))
	}
	var labels []string
	series := make([][]interval, len(s.Judges))
	nMax := 0
	for _, g := range groups {
		if fi >= len(g.Results) {
			continue
		}
		nMax = max(nMax, correlationRows(&ch, series, float64(len(labels)), g.Results[fi], s.Judges,
			func(judge string) []Cell { return []Cell{Text(g.Value), Text(judge)} }))
		label := g.Value
		if label == "" {
			label = "(none)"
		}
		labels = append(labels, cleanLabel(label))
	}
	if len(labels) == 0 {
		ch.Note = "No group has ratings."
		return ch
	}
	ch.Caption = fmt.Sprintf("Spearman's ρ (unitless) of each judge with the item's mean human rating within each %s, 95%% bootstrap interval when computed; n = up to %d items per group.%s", s.By, nMax, note)
	ch.SVG = forestPlot(ch.Title, "Spearman ρ", labels, s.Judges, series, -0.2, 1)
	return ch
}

func nItems(s render.Section, fi int) int {
	if fi < len(s.Results) {
		return s.Results[fi].NItems
	}
	return 0
}
