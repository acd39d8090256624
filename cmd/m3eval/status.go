package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
)

func newStatusCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Short:   "Show items and each annotator's progress",
		Example: `  m3eval status --db team.db`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.mustExist(); err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), nil, store.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Status(cmd.Context())
			if err != nil {
				return err
			}
			return teamreport.WriteStatus(cmd.OutOrStdout(), store.DisplayName(g.dbPath), st)
		},
	}
}
