package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
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
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s: %d items in %d episodes\n", textsafe.Line(g.dbPath), st.Turns, st.Episodes)
			if len(st.Annotators) == 0 {
				fmt.Fprintln(out, "no annotations yet")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "annotator\tdone\tdraft\tflagged\tskipped\tmedian active\t")
			for _, a := range st.Annotators {
				median := "—"
				if a.HasMedian {
					median = a.MedianActive.Round(time.Second).String()
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", textsafe.Line(a.Name), a.Done, a.Draft, a.Flagged, a.Skipped, median)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, a := range st.Annotators {
				if a.Stale > 0 {
					fmt.Fprintf(out, "%s: %d drafts were made on earlier content of replaced turns: re-confirm them in m3eval annotate\n", a.Name, a.Stale)
				}
			}
			return nil
		},
	}
}
