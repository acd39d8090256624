package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newSampleCmd(g *globalOptions) *cobra.Command {
	o := &workflow.SampleRequest{}
	cmd := &cobra.Command{
		Use:   "sample --name NAME --n N --by KEY [--by KEY]...",
		Short: "Draw a named, stratified sample of the imported turns for a campaign",
		Long: `Sample draws N of the imported turns, stratified by one or more turn attributes
(` + strings.Join(store.SampleKeys(), ", ") + `), allocated in proportion
(largest remainder; --min-per-stratum K guarantees rare strata), drawn with Python's
random.sample from random.Random(--seed): the same database, options and seed give the
same sample. A sampled turn brings its episode's earlier turns as context. The sample and
its options are stored; --list lists the samples, --show NAME shows one per stratum.
See docs/campaign.md.`,
		Example: `  m3eval sample --name pilot --n 300 --by action_type --seed 42
  m3eval sample --name zh --n 100 --by action_type --by model --min-per-stratum 5 --where meta.language=zh
  m3eval sample --list
  m3eval sample --show pilot --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return usageIf(err)
			}
			s, r, err := g.openDB(cmd.Context(), o.StoreOptions(), false)
			if err != nil {
				return err
			}
			defer s.Close()
			write, err := o.Run(cmd.Context(), s, r)
			if err != nil {
				return notFoundHint(usageIf(err), "m3eval sample --list")
			}
			if err := writeOutput(cmd, o.Output, func(w io.Writer, _ bool) error { return write(w) }); err != nil {
				return err
			}
			return printNotes(cmd, o.Notes())
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to FILE instead of standard output")
	names(cmd, map[string]name{"show": sampleName, "judge": judgeName})
	return cmd
}

// printNotes prints a command's notes on standard error, after its output.
func printNotes(cmd *cobra.Command, notes []string) error {
	for _, line := range notes {
		if _, err := fmt.Fprintln(cmd.ErrOrStderr(), line); err != nil {
			return err
		}
	}
	return nil
}
