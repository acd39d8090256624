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
	var o workflow.SampleCommand
	var output string
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
		RunE: func(cmd *cobra.Command, _ []string) error { return g.runCampaign(cmd, &o, output) },
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	names(cmd, map[string]name{"show": sampleName, "judge": judgeName})
	return cmd
}

// runCampaign runs a campaign command: check its flags, open the database, run, print.
func (o *globalOptions) runCampaign(cmd *cobra.Command, c workflow.Command, output string) error {
	if err := c.Check(); err != nil {
		return usageIf(err)
	}
	s, r, err := o.openDB(cmd.Context(), c.StoreOptions(), false)
	if err != nil {
		return err
	}
	defer s.Close()
	render, err := c.Run(cmd.Context(), s, r)
	if err != nil {
		return notFoundHint(usageIf(err), "m3eval sample --list")
	}
	if err := writeOutput(cmd, output, func(w io.Writer, _ bool) error { return render(w) }); err != nil {
		return err
	}
	if n, ok := c.(workflow.Noter); ok {
		for _, line := range n.Notes() {
			fmt.Fprintln(cmd.ErrOrStderr(), line)
		}
	}
	return nil
}
