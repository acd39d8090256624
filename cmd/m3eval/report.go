package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/store"
)

func newReportCmd(g *globalOptions) *cobra.Command {
	o := &report.Request{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "One self-contained HTML report with charts: campaign, agreement, humans vs judges",
		Long: `report writes one self-contained HTML page (inline SVG charts, each with its numbers'
table) that prints to A4: campaign progress, agreement, judges against annotators, labels
per --by group, trends, IllusionBench recall (--illusion); the statistics of m3eval score.
--format json writes the numbers, --pdf prints with headless Chromium. See docs/report.md.`,
		Example: `  m3eval report --db team.db -o report.html
  m3eval report --db team.db --judge gpt4o --by model -o report.html
  m3eval report --db team.db --pdf -o report.pdf
  m3eval report --db team.db --format json -o report.json
  m3eval report --illusion-testset Illusion_ICON=icon.parquet --illusion shape.jsonl -o report.html`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd, g, o) },
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to FILE instead of standard output")
	names(cmd, map[string]name{"judge": judgeName, "campaign": campaignName})
	return cmd
}

func runReport(cmd *cobra.Command, g *globalOptions, o *report.Request) error {
	if err := o.Check(); err != nil {
		return usageIf(err)
	}
	if err := o.FindChromium(); err != nil {
		return err
	}
	if err := g.mustExist(); err != nil {
		return err
	}
	r, err := g.loadRubric()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if err := o.ScoreIllusion(ctx, cmd.ErrOrStderr()); err != nil {
		return usageIf(err)
	}
	s, err := g.openStore(ctx, nil, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	o.ByFromData = !cmd.Flags().Changed("by")
	write, err := o.Run(ctx, s, r, cmd.ErrOrStderr())
	if err != nil {
		return notFoundHint(err, "m3eval sample --list")
	}
	return writeOutput(cmd, o.Output, write)
}
