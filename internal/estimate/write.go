package estimate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/ppi"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// WriteTable writes the result as text for a terminal: one block per field, the estimates
// per model (and group), then the differences and the ranking. (The JSON is the Result
// itself, written by render.WriteJSON.)
func WriteTable(w io.Writer, res *Result) error { return writeTable(w, res) }

func num(v Num, digits int) string {
	if math.IsNaN(float64(v)) {
		return "—"
	}
	return fmt.Sprintf("%.*f", digits, float64(v))
}

func ci(c [2]Num) string {
	if math.IsNaN(float64(c[0])) {
		return ""
	}
	return "[" + num(c[0], 2) + ", " + num(c[1], 2) + "]"
}

// writeTable writes one block per field: the estimates per model (and group), then the
// differences and the ranking. Names from data (fields, models, groups) are neutralized for
// the terminal.
func writeTable(w io.Writer, res *Result) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "Model scores: the human labels combined with judge %q (prediction-powered, 95%% intervals)\n", res.Judge)
	if res.Design == "active" {
		waiting := 0
		for _, r := range res.Rows {
			waiting += r.SampledNotLabeled
		}
		fmt.Fprintf(b, "Labels of the active sample %s only, each weighted by 1/its inclusion probability.\n", textsafe.Line(res.Sample))
		if waiting > 0 {
			fmt.Fprintf(b, "Not every drawn turn is labeled yet (%d field values missing): it counts them as not drawn, which biases it: finish labeling the sample first.\n", waiting)
		}
	}
	if len(res.Rows) == 0 {
		fmt.Fprintf(b, "\nNo turn has a score of judge %q on a scale or Yes/No field.\n", res.Judge)
		_, err := io.WriteString(w, b.String())
		return err
	}
	defined := false
	adjustedShown := false // differences shown with simultaneous intervals and adjusted p
	var fieldOrder []string
	for _, r := range res.Rows {
		if len(fieldOrder) == 0 || fieldOrder[len(fieldOrder)-1] != r.Field {
			fieldOrder = append(fieldOrder, r.Field)
		}
	}
	for _, f := range fieldOrder {
		fmt.Fprintf(b, "\n%s\n", textsafe.Line(f))
		head := []string{"model"}
		if res.By != "" {
			head = append(head, res.By)
		}
		rows := [][]string{append(head, "labeled", "unlabeled", "episodes", "PPI estimate [95% interval]", "human only", "judge mean", "effective n", "λ")}
		for _, r := range res.Rows {
			if r.Field != f {
				continue
			}
			row := []string{r.Model}
			if res.By != "" {
				row = append(row, r.Group)
			}
			row = append(row, strconv.Itoa(r.NLabeled), strconv.Itoa(r.NUnlabeled), strconv.Itoa(r.NLabeledEpisodes))
			if r.Undefined != "" {
				row = append(row, num(r.Estimate, 2)+" ("+r.Undefined+")", num(r.HumanOnly.Estimate, 2),
					num(r.JudgeOnly.Estimate, 2), "—", num(r.Lambda, 2)) // λ: the estimate used it
			} else {
				defined = true
				row = append(row, num(r.Estimate, 2)+" "+ci(r.CI), num(r.HumanOnly.Estimate, 2)+" "+ci(r.HumanOnly.CI),
					num(r.JudgeOnly.Estimate, 2), num(r.EffectiveN, 1), num(r.Lambda, 2))
			}
			rows = append(rows, row)
		}
		if err := render.Aligned(b, "  ", rows, nil); err != nil {
			return err
		}
		if lo := res.LeftOut(f); lo != "" {
			fmt.Fprintf(b, "  %s\n", lo)
		}
		var diffs [][]string
		pairs := map[string]int{} // per group: the pairs of its family
		for _, d := range res.Differences {
			if d.Field == f && d.Undefined == "" {
				pairs[d.Group]++
				g := groupTag(res.By, d.Group)
				if res.Adjust == "none" {
					diffs = append(diffs, []string{d.A + " − " + d.B + g, num(d.Estimate, 2), ci(d.CI), "p " + pval(d.P)})
				} else {
					diffs = append(diffs, []string{d.A + " − " + d.B + g, num(d.Estimate, 2), ci(d.CISimultaneous), "p " + pval(d.PAdjusted)})
				}
			}
		}
		if len(diffs) > 0 {
			adjustedShown = adjustedShown || res.Adjust != "none"
			most := 0
			for _, k := range pairs {
				most = max(most, k)
			}
			fam := plural.N(most, "pair") + " of models"
			if res.By != "" && len(pairs) > 1 {
				fam = "pairs of models of each group (at most " + strconv.Itoa(most) + ")"
			}
			switch res.Adjust {
			case "none":
				fmt.Fprintf(b, "  differences (A − B), 95%% interval and p of each pair alone, not adjusted for the %s:\n", fam)
			default:
				fmt.Fprintf(b, "  differences (A − B), 95%% simultaneous intervals (max-t) and p adjusted (%s) over the %s:\n", adjustName(res.Adjust), fam)
			}
			if err := render.Aligned(b, "    ", diffs, nil); err != nil {
				return err
			}
		}
		var left []string
		for _, r := range res.Rows {
			if r.Field == f && r.Undefined != "" && r.NLabeled > 0 {
				left = append(left, textsafe.Line(r.Model+groupTag(res.By, r.Group)))
			}
		}
		if len(left) > 0 {
			fmt.Fprintf(b, "  not compared or ranked (no interval): %s\n", strings.Join(left, ", "))
		}
		var ranks []RankRow
		for _, r := range res.Ranking {
			if r.Field == f {
				ranks = append(ranks, r)
			}
		}
		if len(ranks) > 0 && defined {
			writeRanking(b, res, ranks)
		}
	}
	fmt.Fprintf(b, `
labeled: turns with a done human label, the rest only scored by the judge. PPI estimate: the
judge's mean corrected by its error on the labeled turns (λ: how much the judge is trusted,
0 = not at all). human only: the labeled turns alone. judge mean: the judge alone (biased as
the judge is). effective n: how many human labels alone would give an interval as narrow.
episodes: the episodes with a labeled turn, what the interval rests on. Intervals count
episodes, not turns, as independent (a jackknife over episodes with a t quantile), need
labeled turns from at least %d episodes, and are clipped to the field's range. A rank set
holds the ranks a model can have with 95%% confidence, for all models of the field at once.
docs/statistics.md explains every number.
`, ppi.MinEpisodes)
	if adjustedShown {
		// The two answer different questions and can disagree at the margin: say so where
		// a reader sees p < 0.05 beside an interval holding 0 (docs/statistics.md).
		fmt.Fprintf(b, `Differences: the simultaneous intervals hold for all pairs of a field at once; the
adjusted p (%s) can disagree with them at the margin, p < 0.05 beside an interval
holding 0 or the reverse.
`, adjustName(res.Adjust))
	}
	if !defined {
		fmt.Fprintf(b, "No interval yet: label turns from at least %d episodes per model (m3eval annotate) to get one.\n", ppi.MinEpisodes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pval(p Num) string {
	switch {
	case math.IsNaN(float64(p)):
		return "—"
	case p < 0.001:
		return "< 0.001"
	}
	return fmt.Sprintf("= %.3f", float64(p))
}

// rankSet writes a rank confidence set: "rank 2" or "ranks 1–3".
func rankSet(rs [2]int) string {
	if rs[0] == 0 {
		return "no rank set"
	}
	if rs[0] == rs[1] {
		return fmt.Sprintf("rank %d", rs[0])
	}
	return fmt.Sprintf("ranks %d–%d", rs[0], rs[1])
}

// adjustName is the name of an adjustment as the table says it.
func adjustName(a string) string {
	switch a {
	case "holm":
		return "Holm"
	case "bh":
		return "Benjamini–Hochberg, false discovery rate"
	}
	return a
}

// LeftOut says, for one field, how many labeled turns the estimate leaves out because the
// judge gave them no score (outside the population it covers), per model: "" when none.
// The table and the report print it, so that a reader is not left to find it in the JSON.
func (res *Result) LeftOut(field string) string {
	turns, values := 0, 0
	var parts []string
	for _, r := range res.Rows {
		if r.Field != field || r.LabelsWithoutScore == 0 {
			continue
		}
		turns += r.LabelsWithoutScore
		values += r.ValuesWithoutScore
		parts = append(parts, fmt.Sprintf("%s %d", textsafe.Line(r.Model+groupTag(res.By, r.Group)), r.LabelsWithoutScore))
	}
	if turns == 0 {
		return ""
	}
	return fmt.Sprintf("left out: %d labeled turns (%d labels) have no score of judge %s (%s)", turns, values, textsafe.Line(res.Judge), strings.Join(parts, ", "))
}

// writeRanking writes one field's ranking line: each model's rank and 95% rank set, with the
// share of bootstrap replicates holding the rank when the ranking was resampled.
func writeRanking(b io.Writer, res *Result, ranks []RankRow) {
	sort.SliceStable(ranks, func(i, j int) bool {
		return ranks[i].Group < ranks[j].Group || ranks[i].Group == ranks[j].Group && ranks[i].Rank < ranks[j].Rank
	})
	parts := make([]string, 0, len(ranks))
	for _, r := range ranks {
		held := rankSet(r.RankSet)
		if res.Bootstrap > 0 {
			held = render.Pct(float64(r.Share)) + "; " + held
		}
		parts = append(parts, fmt.Sprintf("%d. %s (%s)", r.Rank, textsafe.Line(r.Model+groupTag(res.By, r.Group)), held))
	}
	head := "95% rank sets for all models at once"
	if res.Bootstrap > 0 {
		head = fmt.Sprintf("share of %d bootstrap replicates holding the rank; 95%% rank set for all models at once", res.Bootstrap)
	}
	fmt.Fprintf(b, "  ranking (%s): %s\n", head, strings.Join(parts, ", "))
}

// groupTag is how a row names its group after the model, " [group]", when the estimates are
// grouped (--by), and nothing when they are not.
func groupTag(by, group string) string {
	if by == "" {
		return ""
	}
	return " [" + group + "]"
}
