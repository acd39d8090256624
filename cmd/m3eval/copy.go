package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newCopyCmd() *cobra.Command {
	o := &workflow.CopyCommand{}
	cmd := &cobra.Command{
		Use:   "copy --from DB --to DB",
		Short: "Copy a whole campaign to another database (SQLite file or PostgreSQL)",
		Long: `Copy copies everything a database holds (turns, annotators, labels and their history,
judges' scores, samples, campaigns, adjudications) into another database, row for row
with the same ids: from an SQLite file to PostgreSQL (postgres://…), back, or between two
of either. The source is read in one snapshot and not written (a database of an older
m3eval is first upgraded, as every command does); the target is written in one
transaction, so it gets the whole campaign or, if anything fails, nothing. The export of
both is then byte-identical. --db is not used: --from and --to name both ends.

The target must hold no campaign (a new file, an empty PostgreSQL schema) unless
--replace, which deletes the target's campaign in the same transaction as the copy. A
source with an import in progress or interrupted is refused. Stop annotating on the
source before copying: saves made after the copy began stay behind.

Nobody may be using the target during --replace: an annotator's screen or a server
open on it would go on showing the campaign it replaced. On PostgreSQL, --replace is
refused while other m3eval sessions are connected to the target's database (any
schema; --force copies anyway); on SQLite nothing can tell, so stop them first.
Images (the <name>-media directory an import writes) are not copied. A target file
this copy creates is removed again if the copy fails. See docs/postgres.md.`,
		Example: `  m3eval copy --from m3eval.db --to postgres://m3eval@db.lab.example/m3eval
  m3eval copy --from postgres://m3eval@db.lab.example/m3eval --to backup.db
  m3eval copy --from new.db --to postgres://m3eval@db.lab.example/m3eval --replace`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return usageIf(o.Run(cmd.Context(), cmdIO(cmd))) },
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
