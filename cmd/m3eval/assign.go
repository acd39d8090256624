package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newAssignCmd(g *globalOptions) *cobra.Command {
	var (
		o          workflow.AssignOptions
		annotators string
		show       bool
		format     string
		output     string
	)
	cmd := &cobra.Command{
		Use:   "assign --sample NAME --annotators A,B,C --overlap K",
		Short: "Give a sample's turns to annotators, each turn to exactly K of them",
		Long: `Assign gives every turn of the sample to exactly --overlap annotators so that their
loads differ by at most one turn and every two annotators share turns (pairwise agreement
exists for every pair). Re-running with more annotators or a larger overlap extends the
assignment: a turn an annotator has started stays theirs. --gold FILE (turns with known
labels, in the guide's format, already imported) mixes gold turns into every queue so that
they make up --gold-rate of it; --repeat R shows R of each annotator's turns to them a
second time once their queue is done (labeled afresh, for intra-annotator agreement in
m3eval qc). Nothing on the annotator's screen tells gold or repeated turns apart.
--show prints the load table and the matrix of turns every pair shares.`,
		Example: `  m3eval assign --sample pilot --annotators alice,bob,carol,dave --overlap 2
  m3eval assign --sample pilot --annotators alice,bob,carol,dave,erin --overlap 2
  m3eval assign --sample pilot --annotators alice,bob,carol,dave --overlap 2 --gold gold.json --gold-rate 0.05
  m3eval assign --sample pilot --show --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := teamreport.ParseFormat(format, teamreport.Table, teamreport.JSON)
			if err != nil {
				return &usageError{err}
			}
			if o.Sample == "" {
				return usageErrorf("--sample NAME is required (see m3eval sample --list)")
			}
			if !show && (annotators == "" || o.Overlap == 0) {
				return usageErrorf("--annotators A,B,... and --overlap K are required (or --show)")
			}
			ctx := cmd.Context()
			s, r, err := g.openExisting(ctx, store.Options{ReadOnly: show})
			if err != nil {
				return err
			}
			o.Rubric = r
			defer s.Close()
			if show {
				c, err := s.Campaign(ctx, o.Sample)
				if err != nil {
					return notFoundHint(err, "m3eval sample --list")
				}
				return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteCampaign(w, c, nil, f) })
			}
			o.Annotators = strings.Split(annotators, ",")
			res, err := workflow.Assign(ctx, s, o)
			if err != nil {
				return notFoundHint(usageIf(err), "m3eval sample --list")
			}
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error {
				return teamreport.WriteCampaign(w, res.Campaign, res.Warnings, f)
			})
		},
	}
	cmd.Flags().StringVar(&o.Sample, "sample", "", "the sample to assign (m3eval sample --list)")
	cmd.Flags().StringVar(&annotators, "annotators", "", "comma-separated annotator names; earlier ones first when extending")
	cmd.Flags().IntVar(&o.Overlap, "overlap", 0, "annotators per turn")
	cmd.Flags().Int64Var(&o.Seed, "seed", 42, "random seed for ties and gold turns")
	cmd.Flags().StringVar(&o.GoldFile, "gold", "", "labeled turns in the guide's format to use as gold")
	cmd.Flags().Float64Var(&o.GoldRate, "gold-rate", 0, "share of each queue that is gold, e.g. 0.05 (default: the earlier run's, or 0.05 with --gold)")
	cmd.Flags().Float64Var(&o.RepeatRate, "repeat", 0, "share of each annotator's turns shown to them again after their queue, e.g. 0.1 (default: the earlier run's)")
	cmd.Flags().BoolVar(&show, "show", false, "show the assignment instead of changing it")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	cmd.PreRun = func(cmd *cobra.Command, _ []string) {
		// Unless given, a re-run keeps the earlier rates (a first run: none, or 0.05 of gold
		// with --gold).
		switch {
		case cmd.Flags().Changed("gold-rate"):
		case o.GoldFile != "":
			o.GoldRate = 0.05
		default:
			o.GoldRate = -1
		}
		if !cmd.Flags().Changed("repeat") {
			o.RepeatRate = -1
		}
	}
	return cmd
}
