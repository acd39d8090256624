package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
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
	if _, err := o.Check(); err != nil {
		return usageIf(err)
	}
	o.BootstrapGiven = cmd.Flags().Changed("bootstrap")
	// Score only reads: a read-only user in a read-only directory can score too.
	s, r, err := g.openDB(cmd.Context(), store.Options{ReadOnly: true}, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var write func(io.Writer, bool) error
	err = withBar(cmd, "score", progress.Unit{Name: "replicates"}, func(p progress.Func, _, _ io.Writer) error {
		o.Progress = p
		write, err = o.Run(cmd.Context(), s, r, store.DisplayName(g.dbPath))
		return err
	})
	if err != nil {
		return usageIf(err)
	}
	return writeOutput(cmd, o.Output, write)
}
