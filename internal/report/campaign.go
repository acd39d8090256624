package report

import (
	"fmt"
	"github.com/m3bench/m3eval/internal/plural"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot/plotter"
)

// campaignSection: items, annotators, progress over time and active time.
func campaignSection(c *Campaign) Section {
	const id, title = "campaign", "Campaign"
	if c == nil {
		return omitted(id, title, "Left out: no database was read.")
	}
	sec := Section{ID: id, Title: title,
		Intro: fmt.Sprintf("%s in %s; %s started.", plural.N(c.Turns, "item"), plural.N(c.Episodes, "episode"), map[bool]string{true: "1 annotator has", false: plural.N(len(c.Annotators), "annotator") + " have"}[len(c.Annotators) == 1])}
	if len(c.Annotators) == 0 {
		sec.Omitted = "Left out: nobody has annotated yet."
		return sec
	}
	sec.Charts = append(sec.Charts, progressChart(c), activeChart(c))
	return sec
}

func progressChart(c *Campaign) Chart {
	ch := Chart{ID: "campaign-progress", Title: "Done items per annotator over time",
		Table: Table{Columns: []string{"annotator", "done", "draft", "flagged", "skipped", "first submitted (UTC)", "last submitted (UTC)"}}}
	var names []string
	var series []plotter.XYs
	total := 0
	for _, a := range c.Annotators {
		first, last := Text("—"), Text("—")
		if n := len(a.Submitted); n > 0 {
			first, last = Text(a.Submitted[0].UTC().Format(time.DateTime)), Text(a.Submitted[n-1].UTC().Format(time.DateTime))
			// One point per submission would make a huge SVG for big campaigns; a step line
			// needs a point only where the count changes, and at most ~200 points per
			// annotator are visible at chart width.
			step := max(1, n/200)
			xy := plotter.XYs{{X: float64(a.Submitted[0].Unix()), Y: 0}}
			for i := step - 1; i < n; i += step {
				xy = append(xy, plotter.XY{X: float64(a.Submitted[i].Unix()), Y: float64(i + 1)})
			}
			if (n-1)%step != step-1 {
				xy = append(xy, plotter.XY{X: float64(a.Submitted[n-1].Unix()), Y: float64(n)})
			}
			names = append(names, cleanLabel(a.Name))
			series = append(series, xy)
		}
		total += a.Done
		ch.Table.add(Text(a.Name), Int(a.Done), Int(a.Draft), Int(a.Flagged), Int(a.Skipped), first, last)
	}
	if len(series) == 0 {
		ch.Note = "No annotation has been submitted yet."
		return ch
	}
	ch.Caption = fmt.Sprintf("Cumulative count of done annotations (items) by submission time (UTC); one line style per annotator; n = %d done annotations by %d annotators. Flagged: items the annotator flagged for review.", total, len(c.Annotators))
	ch.SVG = timeLines(ch.Title, "done annotations (items)", names, series)
	return ch
}

// niceStep rounds a bin width up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// quantile is the linear-interpolation quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	i := int(h)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

func activeChart(c *Campaign) Chart {
	ch := Chart{ID: "campaign-active", Title: "Active time per done annotation",
		Table: Table{Columns: []string{"from (s)", "to (s)", "annotations"}}}
	xs := slices.Clone(c.ActiveSeconds)
	if len(xs) == 0 {
		ch.Note = "No done annotation yet."
		return ch
	}
	slices.Sort(xs)
	// Bins up to the 99th percentile; the long tail goes into the last, open bin.
	top := quantile(xs, 0.99)
	w := niceStep(top / 20)
	nb := int(math.Floor(top/w)) + 1
	counts := make([]int, nb+1)
	for _, x := range xs {
		b := int(math.Floor(x / w))
		counts[min(max(b, 0), nb)]++
	}
	var cats []string
	var vals []bar
	for b, n := range counts {
		if b == nb && n == 0 {
			break
		}
		from, to := float64(b)*w, float64(b+1)*w
		toCell := Num(to)
		label := fmt.Sprintf("%g", from)
		if b == nb {
			toCell, label = Text("∞"), fmt.Sprintf("≥%g", from)
		}
		cats = append(cats, label)
		vals = append(vals, bar{Value: float64(n), Lo: math.NaN(), Hi: math.NaN()})
		ch.Table.add(Num(from), toCell, Int(n))
	}
	ch.Caption = fmt.Sprintf("Histogram of the time each done annotation was on screen and active (seconds, bins of %g s, last bin open); n = %d annotations; median %.1f s, 90th percentile %.1f s.",
		w, len(xs), quantile(xs, 0.5), quantile(xs, 0.9))
	ch.SVG = barChart(ch.Title, "active time (s, bin start)", "annotations", cats, nil, [][]bar{vals}, 0)
	return ch
}

// illusionSection: IllusionBench recall per split and difficulty.
func illusionSection(d *IllusionData) Section {
	const id, title = "illusion", "IllusionBench recall"
	if d == nil || len(d.Rows) == 0 {
		return omitted(id, title, "Left out: no IllusionBench sample log given (--illusion LOG with --illusion-testset NAME=FILE).")
	}
	sec := Section{ID: id, Title: title, Intro: "Shape and scene recall of lmms-eval sample logs, with 95% Wilson intervals."}
	ch := Chart{ID: "illusion-recall", Title: "Recall per split and difficulty",
		Table: Table{Columns: []string{"split", "kind", "group", "n", "hits", "recall", "ci95 low", "ci95 high"}}}
	// Categories: split · kind; series: the groups (all, Easy, Medium, Hard) in order.
	cats, groups, series, _ := barSeries(len(d.Rows), func(i int) (string, string, bar, int) {
		r := d.Rows[i]
		ch.Table.add(Text(r.Split), Text(string(r.Kind)), Text(r.Group), Int(r.N), Int(r.Hits), Num(r.Recall), Num(r.Lo), Num(r.Hi))
		return r.Split + " · " + string(r.Kind), r.Group, bar{Value: r.Recall, Lo: r.Lo, Hi: r.Hi, HasCI: r.N > 0}, r.N
	})
	n := 0
	for _, r := range d.Rows {
		if r.Group == "all" {
			n += r.N
		}
	}
	ch.Caption = fmt.Sprintf("Recall (share of answers naming the true class, 0–1) per split and kind, overall and per difficulty, with 95%% Wilson intervals; n = %d answers.", n)
	ch.SVG = barChart(ch.Title, "split · kind", "recall", cats, groups, series, 1)
	sec.Charts = []Chart{ch}
	return sec
}
