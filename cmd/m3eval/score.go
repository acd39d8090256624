package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

func newScoreCmd(g *globalOptions) *cobra.Command {
	o := &scoring.Request{}
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Agreement of the annotators with each other and with the automatic judges, from the database",
		Long: `score computes m3eval agree's statistics from the database for every scale and choice field
of the rubric: the annotators with each other and every judge against them (done labels
unless --include-drafts; --by adds a block per group of turns; --bootstrap B resamples
episodes for 95% intervals). docs/statistics.md defines every number and flag.`,
		Example: `  m3eval score
  m3eval score --by action_type --judge gpt4o --format md -o agreement.md
  m3eval score --annotator alice --annotator bob --bootstrap 1000 --seed 7 --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runScore(cmd, g, o) },
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to FILE instead of standard output")
	names(cmd, map[string]name{"judge": judgeName, "annotator": annotatorName})
	return cmd
}

func runScore(cmd *cobra.Command, g *globalOptions, o *scoring.Request) error {
	st, err := o.Check()
	if err != nil {
		return usageIf(err)
	}
	// Score only reads: a read-only user in a read-only directory can score too.
	s, r, err := g.openDB(cmd.Context(), store.Options{ReadOnly: true}, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if o.Metrics {
		if len(o.Judges) > 0 {
			// The metrics read the rule judge's verdicts with their evidence (did the answer
			// take the update, list the candidates, reject the false premise), recomputed from
			// the turns; a stored judge's scores hold only the rubric's values.
			return usageErrorf("--metrics comes from the rule judge's verdicts, recomputed with their evidence; a judge's stored scores (--judge %s) hold only the rubric's values: drop --judge", o.Judges[0])
		}
		if !cmd.Flags().Changed("bootstrap") {
			o.Bootstrap = -1 // the metrics' default, 2000 replicates; --bootstrap 0 is none
		}
		if o.Format != render.JSON && o.Format != render.CSV {
			st, err := s.Status(cmd.Context())
			if err != nil {
				return err
			}
			if st.Turns == 0 {
				return writeOutput(cmd, o.Output, func(w io.Writer, _ bool) error {
					_, err := fmt.Fprintln(w, noTurnsLine)
					return err
				})
			}
		}
	}
	// Whether there are labels to score, asked once for the two checks below.
	labeled := true
	if !o.Metrics && (len(o.Judges) >= 2 || (o.Format != render.JSON && o.Format != render.CSV)) {
		if labeled, err = hasLabels(cmd, s, o.IncludeDrafts); err != nil {
			return err
		}
	}
	if !o.Metrics && len(o.Judges) >= 2 {
		// Judges are compared through the human labels (each against the humans, and their
		// difference tested on the same labeled turns); without labels there is nothing to
		// compare them on, and one "nothing to score" line would read as success.
		if !labeled {
			return fmt.Errorf("--judge %s: score compares judges through human labels, and %s has none: label turns with m3eval annotate, or import labels (m3eval import --annotator NAME FILE)",
				strings.Join(o.Judges, " --judge "), store.DisplayName(g.dbPath))
		}
	}
	if !o.Metrics && o.Format != render.JSON && o.Format != render.CSV {
		// Nothing to score: one line, as status says it, rather than every statistic's
		// table full of "—". JSON and CSV keep their shape for the programs that read them.
		if !labeled {
			return writeOutput(cmd, o.Output, func(w io.Writer, _ bool) error {
				_, err := fmt.Fprintln(w, noLabelsLine)
				return err
			})
		}
	}
	var write func(io.Writer, bool) error
	err = withBar(cmd, "score", progress.Unit{Name: "replicates"}, func(p progress.Func, _, _ io.Writer) error {
		o.Progress = p
		write, err = scoring.Score(cmd.Context(), s, r, o, st)
		return err
	})
	if err != nil {
		return err
	}
	return writeOutput(cmd, o.Output, write)
}

// noTurnsLine is what score --metrics says of a database without turns.
const noTurnsLine = "no turns yet: nothing to measure (import turns with m3eval import)"

// noLabelsLine is what score and report say of a database without labels to compare.
const noLabelsLine = "no annotations yet: nothing to score (label turns with m3eval annotate, or import labels)"

// hasLabels says whether any annotator has a done label (or a draft, with drafts).
func hasLabels(cmd *cobra.Command, s *store.Store, drafts bool) (bool, error) {
	st, err := s.Status(cmd.Context())
	if err != nil {
		return false, err
	}
	for _, a := range st.Annotators {
		if a.Done > 0 || (drafts && a.Draft > 0) {
			return true, nil
		}
	}
	return false, nil
}
