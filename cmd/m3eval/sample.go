package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newSampleCmd(g *globalOptions) *cobra.Command {
	o := &workflow.SampleCommand{}
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
			return notFoundHint(usageIf(o.Run(cmd.Context(), g.io(cmd))), "m3eval sample --list")
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"show": sampleName, "judge": judgeName})
	return cmd
}
