package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/render"
)

// statRow is one statistic of a field as the forest plot and its table show it; Key is its
// path in m3eval score's JSON ("krippendorff_alpha.ordinal") and Boot its bootstrap key.
type statRow struct {
	Label, Key, Boot string
	V                agree.Value
}

// agreementStats lists the coefficients the forest plot shows for a field.
func agreementStats(r agree.FieldResult) []statRow {
	alpha := statRow{"Krippendorff α (nominal)", "krippendorff_alpha.nominal", "krippendorff_alpha_nominal", r.Alpha.Nominal}
	if r.Field.Type == agree.Ordinal {
		alpha = statRow{"Krippendorff α (ordinal)", "krippendorff_alpha.ordinal", "krippendorff_alpha_ordinal", r.Alpha.Ordinal}
	}
	return []statRow{alpha,
		{"Fleiss κ", "fleiss_kappa", "fleiss_kappa", r.Fleiss},
		{"Gwet AC1", "gwet_ac1", "gwet_ac1", r.AC1},
	}
}

// bootCI returns the 95% interval of a statistic when the bootstrap gave one.
func bootCI(r agree.FieldResult, key string) (lo, hi float64, ok bool) {
	for _, iv := range r.Bootstrap {
		if iv.Stat != key {
			continue
		}
		l, ok1 := iv.Lo.Float()
		h, ok2 := iv.Hi.Float()
		return l, h, ok1 && ok2
	}
	return math.NaN(), math.NaN(), false
}

// val is a Value as a float, NaN when undefined.
func val(v agree.Value) float64 {
	if x, ok := v.Float(); ok {
		return x
	}
	return math.NaN()
}

// reason is why a Value is undefined ("" when defined).
func reason(v agree.Value) string {
	if v.OK() {
		return ""
	}
	return v.Reason()
}

// whyNot is why the statistic is undefined, or, when it is defined but its bootstrap gave no
// interval, why not ("no interval: resampled only 4 episodes …", issue #41's rule).
func whyNot(v agree.Value, r agree.FieldResult, key string) string {
	if !v.OK() {
		return v.Reason()
	}
	for _, iv := range r.Bootstrap {
		if iv.Stat == key && !iv.Lo.OK() && iv.Lo.Reason() != "" {
			return "no interval: " + iv.Lo.Reason()
		}
	}
	return ""
}

func ciCells(lo, hi float64, ok bool) []Cell {
	if !ok {
		return []Cell{Text("—"), Text("—")}
	}
	return []Cell{Num(lo), Num(hi)}
}

// hasLabels reports whether any field has a label.
func (s *ScoreData) hasLabels() bool {
	return slices.ContainsFunc(s.Overall, func(r agree.FieldResult) bool { return r.NRatings > 0 })
}

// agreementSection: the annotators with each other, per rubric field.
func agreementSection(s *ScoreData) Section {
	const id, title = "agreement", "Agreement between annotators"
	if s == nil || len(s.Overall) == 0 {
		return omitted(id, title, "Left out: no scale or choice field to score.")
	}
	if !s.hasLabels() {
		return omitted(id, title, "Left out: no done label yet.")
	}
	sec := Section{ID: id, Title: title,
		Intro: "How far the annotators agree with each other on each rubric field, beyond chance. 1 is perfect agreement, 0 what chance gives."}
	sec.Charts = append(sec.Charts, forestChart(s))
	for i, r := range s.Overall {
		sec.Charts = append(sec.Charts, kappaMatrix(r))
		if i < len(s.Data) {
			sec.Charts = append(sec.Charts, labelDistribution(r, &s.Data[i]))
		}
	}
	return sec
}

func forestChart(s *ScoreData) Chart {
	ch := Chart{ID: "agreement-forest", Title: "Agreement per field",
		Table: Table{Columns: []string{"field", "statistic", "key", "estimate", "ci95 low", "ci95 high", "items", "undefined because"}}}
	var labels []string
	var pts []interval
	withCI := 0
	nItems := 0
	for _, r := range s.Overall {
		nItems = max(nItems, r.NItems)
		for _, st := range agreementStats(r) {
			lo, hi, ok := bootCI(r, st.Boot)
			if ok {
				withCI++
			}
			pts = append(pts, interval{Y: float64(len(labels)), Est: val(st.V), Lo: lo, Hi: hi, HasCI: ok})
			labels = append(labels, cleanLabel(r.Field.Name)+" · "+st.Label)
			row := []Cell{Text(r.Field.Name), Text(st.Label), Text(st.Key), Num(val(st.V))}
			row = append(row, ciCells(lo, hi, ok)...)
			ch.Table.add(append(row, Int(r.NItems), Text(whyNot(st.V, r, st.Boot)))...)
		}
	}
	ci := "no intervals (--bootstrap 0)"
	if s.Bootstrap > 0 {
		ci = fmt.Sprintf("95%% percentile bootstrap intervals (B = %d) where the bootstrap gives one", s.Bootstrap)
	}
	ch.Caption = fmt.Sprintf("Coefficient (unitless, −1 to 1) with %s; n = up to %d items per field.", ci, nItems)
	ch.SVG = forestPlot(ch.Title, "coefficient (1 = perfect agreement, 0 = chance)", labels, nil, [][]interval{pts}, -0.2, 1)
	return ch
}

// kappaMatrix: Cohen's kappa of every pair of annotators (quadratic weights on scales).
func kappaMatrix(r agree.FieldResult) Chart {
	w, kname := agree.Unweighted, "cohen_kappa"
	if r.Field.Type == agree.Ordinal {
		w, kname = agree.Quadratic, "cohen_kappa_quadratic"
	}
	ch := Chart{ID: "kappa-" + slug(r.Field.Name), Title: "Pairwise Cohen κ · " + r.Field.Name,
		Table: Table{Columns: []string{"annotator A", "annotator B", "items both rated", "percent agreement", "key", "kappa", "undefined because"}}}
	for _, p := range r.Pairwise {
		ch.Table.add(Text(p.Raters[0]), Text(p.Raters[1]), Int(p.N), Num(val(p.PercentAgreement)), Text(kname), Num(val(p.Kappa[w])), Text(reason(p.Kappa[w])))
	}
	raters := r.Raters
	if len(raters) < 2 {
		ch.Note = "Fewer than two annotators rated this field: no pair to compare."
		return ch
	}
	idx := map[string]int{}
	for i, n := range raters {
		idx[n] = i
	}
	m := make([]float64, len(raters)*len(raters))
	for i := range m {
		m[i] = math.NaN()
	}
	for _, p := range r.Pairwise {
		a, b := idx[p.Raters[0]], idx[p.Raters[1]]
		m[a*len(raters)+b], m[b*len(raters)+a] = val(p.Kappa[w]), val(p.Kappa[w])
	}
	names := make([]string, len(raters))
	for i, n := range raters {
		names[i] = cleanLabel(n)
	}
	weights := "unweighted"
	if w == agree.Quadratic {
		weights = "quadratic weights"
	}
	ch.Caption = fmt.Sprintf("Cohen's κ (%s, unitless) on the items both annotators rated; darker is higher, blank cells undefined; %d annotators, %d pairs.", weights, len(raters), len(r.Pairwise))
	ch.SVG = heatmap(ch.Title, "annotator", "annotator", names, names,
		func(a, b int) float64 {
			if a == b {
				return math.NaN()
			}
			return m[a*len(raters)+b]
		},
		func(a, b int) string {
			x := m[a*len(raters)+b]
			if a == b || math.IsNaN(x) {
				return ""
			}
			return fmt.Sprintf("%.2f", x)
		})
	return ch
}

// labelDistribution: how often each annotator gave each category.
func labelDistribution(r agree.FieldResult, d *agree.FieldData) Chart {
	counts := make([][]int, len(d.Raters))
	for i := range counts {
		counts[i] = make([]int, len(d.Field.Categories))
	}
	m := d.Ratings
	for i := 0; i < m.Items; i++ {
		for a := 0; a < m.Raters; a++ {
			if c := m.At(i, a); c != agree.Missing {
				counts[a][c]++
			}
		}
	}
	ch := Chart{ID: "labels-" + slug(r.Field.Name), Title: "Labels per annotator · " + r.Field.Name}
	if len(d.Raters) == 0 {
		ch.Note = "Nobody rated this field."
	}
	shareChart(&ch, "annotator", "share of the annotator's labels (%)", d.Raters, d.Field.Categories, counts,
		"Share of each annotator's labels per category (%%), categories light to dark in rubric order; n = %d labels by %d annotators.")
	return ch
}

// shareChart fills ch with stacked bars of each row's category shares and the counts
// behind them; caption takes the total count and the number of rows.
func shareChart(ch *Chart, rowCol, xLabel string, rows, cats []string, counts [][]int, caption string) {
	ch.Table.Columns = append(append([]string{rowCol}, cats...), "labels")
	shares := make([][]float64, len(rows))
	names := make([]string, len(rows))
	total := 0
	for a, row := range counts {
		n := 0
		cells := []Cell{Text(rows[a])}
		for _, x := range row {
			n += x
			cells = append(cells, Int(x))
		}
		total += n
		ch.Table.add(append(cells, Int(n))...)
		shares[a] = make([]float64, len(row))
		for k, x := range row {
			if n > 0 {
				shares[a][k] = float64(x) / float64(n)
			}
		}
		names[a] = cleanLabel(rows[a])
		if names[a] == "" {
			names[a] = "(none)"
		}
	}
	if len(rows) == 0 || total == 0 {
		if ch.Note == "" {
			ch.Note = "No label to count."
		}
		return
	}
	ch.Caption = fmt.Sprintf(caption, total, len(rows))
	ch.SVG = stackedBars(ch.Title, xLabel, names, cats, shares)
}

// groupsSection: the labels of every field per group (action type, model, …): which models
// resist misleading, where correctness drops.
func groupsSection(s *ScoreData) Section {
	const id = "groups"
	if s == nil || s.By == "" {
		return omitted(id, "Labels per group", "Left out: no grouping asked for (--by).")
	}
	sec := Section{ID: id, Title: "Labels per " + s.By,
		Intro: "The annotators' labels pooled per " + s.By + ": the share of each category, every annotator's label counted once."}
	if len(s.Groups) == 0 {
		sec.Omitted = "Left out: no group has labels."
		return sec
	}
	order := make([]int, len(s.Groups))
	for i := range order {
		order[i] = i
	}
	note := ""
	if len(order) > maxGroups {
		slices.SortStableFunc(order, func(a, b int) int { return nRatings(s.Groups[b]) - nRatings(s.Groups[a]) })
		order = order[:maxGroups]
		slices.Sort(order)
		note = fmt.Sprintf(" Only the %d of %d groups with the most labels are shown.", maxGroups, len(s.Groups))
	}
	for fi, r := range s.Overall {
		var names []string
		var counts [][]int
		for _, g := range order {
			if fi >= len(s.GroupData[g]) {
				continue
			}
			d := &s.GroupData[g][fi]
			row := make([]int, len(d.Field.Categories))
			for _, c := range d.Ratings.Codes {
				if c != agree.Missing {
					row[c]++
				}
			}
			names = append(names, s.Groups[g].Value)
			counts = append(counts, row)
		}
		ch := Chart{ID: "group-labels-" + slug(r.Field.Name), Title: "Labels per " + s.By + " · " + r.Field.Name}
		shareChart(&ch, s.By, "share of the group's labels (%)", names, r.Field.Categories, counts,
			"Share of the labels in each category (%%), categories light to dark in rubric order; n = %d labels in %d groups."+strings.ReplaceAll(note, "%", "%%"))
		sec.Charts = append(sec.Charts, ch)
	}
	return sec
}

func nRatings(s render.Section) int {
	n := 0
	for _, r := range s.Results {
		n += r.NRatings
	}
	return n
}

// slug makes an element id out of a name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
