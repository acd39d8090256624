package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/report"
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
		RunE: func(cmd *cobra.Command, _ []string) error { return usageIf(o.Run(cmd.Context(), g.io(cmd))) },
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"judge": judgeName, "campaign": campaignName})
	return cmd
}
