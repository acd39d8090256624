package judgerun

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
)

// Metrics judges the chosen turns in memory (nothing is stored) and computes the
// action-space metrics from the verdicts.
func Metrics(ctx context.Context, s *store.Store, j *judge.Judge, f store.TurnFilter, bootstrap int, seed uint64) (judge.MetricsReport, error) {
	m := j.NewMetrics()
	err := s.StreamEpisodes(ctx, f, func(turns []dataset.Turn, _ []int64, chosen []bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		vs, err := j.Episode(turns)
		if err != nil {
			return err
		}
		m.AddEpisode(turns, vs, chosen)
		return nil
	})
	if err != nil {
		return judge.MetricsReport{}, err
	}
	return m.Report(bootstrap, seed), nil
}

// WriteMetrics prints the report: format table, md, csv or json.
func WriteMetrics(w io.Writer, rep judge.MetricsReport, format render.Format, co render.CSVOptions) error {
	if format == render.JSON {
		return render.WriteJSON(w, rep)
	}
	head := []string{"action_type", "model", "metric", "n", "value", "95% CI", "interval"}
	rows := make([][]string, 0, len(rep.Metrics))
	for _, r := range rep.Metrics {
		rows = append(rows, []string{r.Action, r.Model, r.Metric, strconv.Itoa(r.N), f3(r.Value), ci(r.Lo, r.Hi), r.Interval})
	}
	thead := []string{"score", "model", "bin", "n", "value", "95% CI", "interval"}
	trends := map[string][][]string{}
	var dims []string
	for _, t := range rep.Trends {
		if _, ok := trends[t.Dimension]; !ok {
			dims = append(dims, t.Dimension)
		}
		trends[t.Dimension] = append(trends[t.Dimension], []string{t.Score, t.Model, t.Bin, strconv.Itoa(t.N), f3(t.Value), ci(t.Lo, t.Hi), t.Interval})
	}
	if format == render.CSV {
		// One flat table: metric rows leave dimension and bin empty, trend rows action_type.
		cw := render.NewCSVWriter(w, co) // cells from data are neutralized unless --raw
		cw.Write([]string{"table", "action_type", "model", "metric", "dimension", "bin", "n", "value", "ci_low", "ci_high", "interval"})
		num := func(x float64) string {
			if math.IsNaN(x) {
				return "" // undefined: no interval
			}
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		for _, r := range rep.Metrics {
			cw.Write([]string{"metric", r.Action, r.Model, r.Metric, "", "", strconv.Itoa(r.N), num(r.Value), num(r.Lo), num(r.Hi), r.Interval})
		}
		for _, t := range rep.Trends {
			cw.Write([]string{"trend", "", t.Model, t.Score, t.Dimension, t.Bin, strconv.Itoa(t.N), num(t.Value), num(t.Lo), num(t.Hi), t.Interval})
		}
		cw.Flush()
		return cw.Error()
	}
	title := func(s string) {
		if format == render.Markdown {
			fmt.Fprintf(w, "\n### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	boot := fmt.Sprintf("95%% percentile bootstrap resampling episodes, %d replicates, seed %d; — with one episode", rep.Bootstrap, rep.Seed)
	if rep.Bootstrap == 0 {
		boot = "no interval (--bootstrap 0)"
	}
	fmt.Fprintf(w, "Action-space metrics (rules %s; rates: 95%% Wilson interval; scores: %s)\n", rep.Rules, boot)
	title("Per action type and model")
	table(w, format, head, rows)
	for _, d := range dims {
		switch d {
		case judge.DimConfusable:
			title("Cross-image trend: by number of confusable objects")
		case judge.DimConversationLength:
			title("Cross-image trend: by conversation length (turn number)")
		default:
			title("Trend: " + d)
		}
		table(w, format, thead, trends[d])
	}
	return nil
}

func f3(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// ci is an interval, or "—" when it is undefined (one episode, no replicates: the JSON's
// no_interval says why).
func ci(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "—"
	}
	return "[" + f3(lo) + ", " + f3(hi) + "]"
}

// table writes aligned columns (display width, so CJK model names align) or, with md, a
// Markdown table.
func table(w io.Writer, format render.Format, head []string, rows [][]string) {
	if format == render.Markdown {
		render.MarkdownTable(w, head, rows)
		return
	}
	render.Columns(w, head, rows)
}
