package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/plural"
)

// row is one line of the human-readable formats: a statistic with the number of items it
// rests on and, when bootstrapped, its interval.
type row struct {
	group string // "Agreement", "Pairwise", "Human vs auto: <judge>"
	name  string
	key   string // the JSON key path, used by the CSV format
	v     agree.Value
	n     int
	ci    *agree.Interval
	test  *agree.Test // nil: no test for this statistic
	// kappaFamily marks Cohen's and Fleiss' kappas and Gwet's AC1/AC2, the coefficients
	// Landis & Koch's (1977) bands were made for; alpha, the ICCs, correlations and
	// percentages get no band color.
	kappaFamily bool
}

func rowsOf(r agree.FieldResult) []row {
	var out []row
	boot := map[string]*agree.Interval{}
	for i := range r.Bootstrap {
		boot[r.Bootstrap[i].Stat] = &r.Bootstrap[i]
	}
	add := func(group, name, key string, v agree.Value, n int, kappa bool) {
		out = append(out, row{group: group, name: name, key: key, v: v, n: n, ci: boot[strings.ReplaceAll(key, ".", "_")], kappaFamily: kappa})
	}
	withTest := func(t *agree.Test) { out[len(out)-1].test = t }
	continuous := r.Field.Type == agree.Continuous
	if continuous {
		// Numbers, not categories: the ICCs, and below the judges' correlations.
		addICC(r, add, withTest)
	} else {
		out = append(out, categoricalRows(r, boot)...)
	}
	out = append(out, judgeRows(r, boot)...)
	return out
}

// categoricalRows are the rows of the agreement statistics of categories.
func categoricalRows(r agree.FieldResult, boot map[string]*agree.Interval) []row {
	var out []row
	ordinal := r.Field.Type == agree.Ordinal
	add := func(group, name, key string, v agree.Value, n int, kappa bool) {
		out = append(out, row{group: group, name: name, key: key, v: v, n: n, ci: boot[strings.ReplaceAll(key, ".", "_")], kappaFamily: kappa})
	}
	withTest := func(t *agree.Test) { out[len(out)-1].test = t }
	const g = "All raters"
	add(g, "Krippendorff's α (nominal)", "krippendorff_alpha.nominal", r.Alpha.Nominal, r.NItemsPairable, false)
	if ordinal {
		add(g, "Krippendorff's α (ordinal)", "krippendorff_alpha.ordinal", r.Alpha.Ordinal, r.NItemsPairable, false)
		add(g, "Krippendorff's α (interval)", "krippendorff_alpha.interval", r.Alpha.Interval, r.NItemsPairable, false)
	}
	add(g, "Fleiss' κ (complete items)", "fleiss_kappa", r.Fleiss, r.NItemsComplete, true)
	add(g, "Gwet's AC1", "gwet_ac1", r.AC1, r.NItems, true)
	if ordinal {
		add(g, "Gwet's AC2 (linear)", "gwet_ac2_linear", r.AC2Linear, r.NItems, true)
		add(g, "Gwet's AC2 (quadratic)", "gwet_ac2_quadratic", r.AC2Quadratic, r.NItems, true)
	}
	if r.ICC != nil {
		addICC(r, add, withTest)
	}
	add(g, "% all agree (complete items)", "percent_agreement.all_agree_complete_items", r.Percent.AllAgreeComplete, r.NItemsComplete, false)
	add(g, "% agreeing pairs (pairable items)", "percent_agreement.pairwise_mean_pairable_items", r.Percent.PairwiseMeanPairable, r.NItemsPairable, false)
	add(g, "% all agree (pairable items)", "percent_agreement.all_agree_pairable_items", r.Percent.AllAgreePairable, r.NItemsPairable, false)
	for i, p := range r.Pairwise {
		pg := "Pairs"
		who := p.Raters[0] + " – " + p.Raters[1]
		key := fmt.Sprintf("pairwise[%d].", i)
		add(pg, who+": % agreement", key+"percent_agreement", p.PercentAgreement, p.N, false)
		add(pg, who+": Cohen's κ", key+"cohen_kappa", p.Kappa[0], p.N, true)
		withTest(&r.Pairwise[i].KappaTest[0])
		if ordinal {
			add(pg, who+": Cohen's κ (linear)", key+"cohen_kappa_linear", p.Kappa[1], p.N, true)
			withTest(&r.Pairwise[i].KappaTest[1])
			add(pg, who+": Cohen's κ (quadratic)", key+"cohen_kappa_quadratic", p.Kappa[2], p.N, true)
			withTest(&r.Pairwise[i].KappaTest[2])
			add(pg, who+": Pearson r", key+"pearson", p.Pearson, p.N, false)
			withTest(&r.Pairwise[i].PearsonTest)
		}
	}
	return out
}

// judgeRows are the rows of the comparisons with the judges and between them.
func judgeRows(r agree.FieldResult, boot map[string]*agree.Interval) []row {
	var out []row
	ordinal := r.Field.Type != agree.Nominal // numbers to correlate
	labels := r.Field.Type != agree.Continuous
	for ji := range r.Judges {
		j := &r.Judges[ji]
		jg := "Human vs " + j.Judge
		key := "human_vs_auto."
		if len(r.Judges) > 1 {
			key = "human_vs_auto_by_judge." + j.Judge + "."
		}
		bkey := func(stat string) string {
			if len(r.Judges) > 1 {
				return "human_vs_auto." + j.Judge + "." + stat
			}
			return "human_vs_auto." + stat
		}
		addJ := func(name, stat string, v agree.Value, n int, kappa bool, t *agree.Test) {
			out = append(out, row{group: jg, name: name, key: key + stat, v: v, n: n, ci: boot[sanitizeKey(bkey(stat))], kappaFamily: kappa, test: t})
		}
		if ordinal {
			ties := ""
			if j.Ties.TiedX+j.Ties.TiedY > 0 {
				ties = fmt.Sprintf("; ties %d/%d", j.Ties.TiedX, j.Ties.TiedY)
			}
			addJ("Pearson r (item mean)", "pearson", j.Pearson, j.NCorrelation, false, &j.Tests.Pearson)
			addJ("Spearman ρ (item mean)", "spearman", j.Spearman, j.NCorrelation, false, &j.Tests.Spearman)
			addJ("Kendall τ-b (item mean"+ties+")", "kendall_tau_b", j.KendallTauB, j.NCorrelation, false, &j.Tests.Kendall)
		}
		if labels {
			addJ("Exact match with majority", "exact_match_accuracy", j.ExactMatch, j.NMajority, false, nil)
			addJ("Cohen's κ with majority", "cohen_kappa", j.Kappa[0], j.NMajority, true, &j.KappaTest[0])
			if ordinal {
				addJ("Cohen's κ with majority (linear)", "cohen_kappa_linear", j.Kappa[1], j.NMajority, true, &j.KappaTest[1])
				addJ("Cohen's κ with majority (quadratic)", "cohen_kappa_quadratic", j.Kappa[2], j.NMajority, true, &j.KappaTest[2])
			}
		}
		if c := j.SystemLevel; c != nil {
			addJ("System-level Pearson r", "system_level.pearson", c.Pearson, c.N, false, &c.Tests.Pearson)
			addJ("System-level Spearman ρ", "system_level.spearman", c.Spearman, c.N, false, &c.Tests.Spearman)
			addJ("System-level Kendall τ-b", "system_level.kendall_tau_b", c.KendallTauB, c.N, false, &c.Tests.Kendall)
		}
		if c := j.SegmentLevel; c != nil {
			addJ("Segment-level mean Pearson r", "segment_level.pearson", c.Pearson, c.Defined[0], false, nil)
			addJ("Segment-level mean Spearman ρ", "segment_level.spearman", c.Spearman, c.Defined[1], false, nil)
			addJ("Segment-level mean Kendall τ-b", "segment_level.kendall_tau_b", c.KendallTauB, c.Defined[2], false, nil)
		}
	}
	for ci := range r.Comparisons {
		c := &r.Comparisons[ci]
		names := [3]string{"Pearson r", "Spearman ρ", "Kendall τ-b"}
		for s := range agree.CorrNames {
			out = append(out, row{group: "Judges compared (paired)", name: c.A + " − " + c.B + ": " + names[s],
				key: "judge_comparisons[" + fmt.Sprint(ci) + "].difference." + agree.CorrNames[s], v: c.Diff[s], n: c.NCommon, ci: c.CI[s], test: &c.Tests[s]})
		}
	}
	return out
}

// sanitizeKey turns "human_vs_auto.<judge>.pearson" into the bootstrap key agree uses.
func sanitizeKey(k string) string {
	k = strings.Map(func(r rune) rune {
		if r == ' ' || r == '.' {
			return '_'
		}
		return r
	}, k)
	return k
}

// header describes a field in one line.
func header(r agree.FieldResult) string {
	f := r.Field
	cats := strings.Join(f.Categories, ", ")
	if f.Type == agree.Continuous {
		return fmt.Sprintf("%s (continuous) · %s", f.Name, counts(r))
	}
	if f.Type == agree.Ordinal && len(f.Categories) > 1 {
		cats = f.Categories[0] + ".." + f.Categories[len(f.Categories)-1]
	}
	return fmt.Sprintf("%s (%s: %s) · %s", f.Name, f.Type, cats, counts(r))
}

// counts are the sizes of a field's data in its header line, each noun singular for one
// ("1 item", a group may hold one turn).
func counts(r agree.FieldResult) string {
	return plural.N(r.NItems, "item") + " · " + plural.N(len(r.Raters), "rater") + " · " +
		plural.N(r.NRatings, "rating") + " · " + plural.N(r.NMissingCells, "missing cell") + resampled(r)
}

// resampled is " · 12 episodes resampled": the units the field's bootstrap intervals rest on
// ("" without --bootstrap), so the table says it, not only the JSON's n_units.
func resampled(r agree.FieldResult) string {
	for _, iv := range r.Bootstrap {
		if iv.Clusters > 0 { // every interval of a field resamples the same units
			unit := iv.Cluster
			if unit == "" {
				unit = "item"
			}
			return " · " + plural.N(iv.Clusters, unit) + " resampled"
		}
	}
	return ""
}

// band is the Landis–Koch (1977) strength band of a coefficient.
type band struct {
	name  string
	lo    float64 // inclusive lower bound
	color string
}

var bands = []band{
	{"poor (< 0)", -1e308, "#d7263d"},
	{"slight (0–0.20)", 0, "#f46036"},
	{"fair (0.21–0.40)", 0.2 + 1e-12, "#e0a800"},
	{"moderate (0.41–0.60)", 0.4 + 1e-12, "#8ab833"},
	{"substantial (0.61–0.80)", 0.6 + 1e-12, "#2e9b4f"},
	{"almost perfect (0.81–1)", 0.8 + 1e-12, "#1b6ca8"},
}

func bandOf(x float64) int {
	b := 0
	for i, bd := range bands {
		if x >= bd.lo {
			b = i
		}
	}
	return b
}

// format renders a number with d decimals and its interval: "0.62 [0.51, 0.71]".
func format(v agree.Value, ci *agree.Interval, d int) string {
	x, ok := v.Float()
	if !ok {
		return "—"
	}
	s := fmt.Sprintf("%.*f", d, x)
	if ci != nil {
		lo, ok1 := ci.Lo.Float()
		hi, ok2 := ci.Hi.Float()
		if ok1 && ok2 {
			s += fmt.Sprintf(" [%.*f, %.*f]", d, lo, d, hi)
		} else if !ok1 && ci.Lo.Reason() != "" {
			s += " [no interval]" // the reason is a footnote (table) or beside it (Markdown)
		}
	}
	return s
}

// AgreementOptions controls WriteAgreement.
type AgreementOptions struct {
	Format Format
	// Color enables the Landis–Koch colors of the table format (the caller decides from the
	// terminal and NO_COLOR).
	Color bool
	// Bootstrap is the number of replicates, for the note under the tables.
	Bootstrap int
	// CI, Cluster and Adjust describe the intervals and p-values for the notes: the interval
	// method, the resampled unit ("" for items) and the multiple-testing adjustment.
	CI      agree.CIMethod
	Cluster string
	Adjust  agree.Adjustment
	// Matrix, when set, prints only that statistic as a judge × field matrix.
	Matrix string
	Inputs AgreementInputs
	// CSV neutralizes formula-like cells of the CSV format (unless Raw) and may add a byte
	// order mark.
	CSV CSVOptions
}

// WriteAgreement writes agreement results in the format o asks for.
func WriteAgreement(w io.Writer, results []agree.FieldResult, o AgreementOptions) error {
	if o.Matrix != "" {
		return writeMatrix(w, results, o)
	}
	switch o.Format {
	case LaTeX:
		return writeLatex(w, results, o)
	case JSON:
		return AgreementJSON(w, o.Inputs, results)
	case Markdown:
		return writeMarkdown(w, results, o)
	case CSV:
		return writeCSV(w, results, o.CSV)
	case Table, "":
		return writeTable(w, results, o)
	}
	return fmt.Errorf("unknown format %q (table, json, md, csv or latex)", o.Format)
}

// addICC adds the rows of the ICCs; with exchangeable raters only the one-way forms, the
// two-way ones being meaningless there.
func addICC(r agree.FieldResult, add func(group, name, key string, v agree.Value, n int, kappa bool), withTest func(*agree.Test)) {
	for i, e := range iccList(*r.ICC) {
		f := agree.ICCForms[i]
		twoWay := strings.HasPrefix(f.ShroutFleiss, "ICC(2") || strings.HasPrefix(f.ShroutFleiss, "ICC(3")
		if r.Exchangeable && twoWay {
			continue
		}
		add("All raters", f.ShroutFleiss+" / "+f.McGrawWong+" "+f.Short, "icc."+e.name, e.v, r.ICC.N, false)
		withTest(&r.ICC.Tests[i].Test)
	}
}
