package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newStatusCmd(g *globalOptions) *cobra.Command {
	var o workflow.StatusCommand
	return &cobra.Command{
		Use:     "status",
		Short:   "Show items and each annotator's progress",
		Example: `  m3eval status --db team.db`,
		Args:    exactArgs(0),
		RunE:    func(cmd *cobra.Command, _ []string) error { return usageIf(o.Run(cmd.Context(), g.io(cmd))) },
	}
}
