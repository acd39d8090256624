package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newStatusCmd(g *globalOptions) *cobra.Command {
	var o workflow.StatusRequest
	return &cobra.Command{
		Use:     "status",
		Short:   "Show items and each annotator's progress",
		Example: `  m3eval status --db team.db`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.mustExist(); err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), nil, o.StoreOptions())
			if err != nil {
				return err
			}
			defer s.Close()
			write, err := o.Run(cmd.Context(), s, store.DisplayName(g.dbPath))
			if err != nil {
				return err
			}
			return write(cmd.OutOrStdout())
		},
	}
}
