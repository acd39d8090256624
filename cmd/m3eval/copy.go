package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/store"
)

func newCopyCmd() *cobra.Command {
	var from, to string
	var opts store.CopyOptions
	var force bool
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageErrorf("copy needs both --from and --to (an SQLite file or postgres://…)")
			}
			for _, end := range []struct{ flag, db string }{{"--from", from}, {"--to", to}} {
				if err := store.CheckAddress(end.db); err != nil {
					return usageErrorf("%s: %v", end.flag, err)
				}
			}
			ctx := cmd.Context()
			// The copy's own connections are named apart, so that it counts only others'.
			src, err := store.Open(ctx, from, store.Options{ReadOnly: true, Application: "m3eval copy"})
			if err != nil {
				return fmt.Errorf("copy --from: %w", err)
			}
			defer src.Close()
			// A target file this copy creates is removed again if the copy fails: a failed
			// copy leaves the target as it was, absent included.
			created := false
			if !store.IsPostgres(to) {
				if _, err := os.Stat(to); errors.Is(err, fs.ErrNotExist) {
					created = true
				}
			}
			// Durable: the copy is on disk (or on the server's) when it is said to be done.
			dst, err := store.Open(ctx, to, store.Options{Durable: true, Application: "m3eval copy"})
			if err != nil {
				return fmt.Errorf("copy --to: %w", err)
			}
			ok := false
			defer func() {
				if !ok && dst.CreatedTables() {
					// A PostgreSQL schema this copy filled with empty tables is left as it
					// was, as a created file is: on a context of its own, since an
					// interrupted copy ends here too.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					if err := dst.DropCreatedTables(ctx); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "copy: the empty m3eval tables this copy created in %s stay there (%v); a rerun copies into them\n", dst.Path(), err)
					}
					cancel()
				}
				dst.Close()
				if created && !ok {
					for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
						os.Remove(to + suffix)
					}
				}
			}()
			if opts.Replace && !force {
				n, err := dst.OtherSessions(ctx)
				if err != nil {
					return fmt.Errorf("copy --to: %w", err)
				}
				if n > 0 {
					verb := "are"
					if n == 1 {
						verb = "is"
					}
					return fmt.Errorf("copy: %s %s connected to the database of %s: replacing the campaign under them would leave their screens showing what is no longer there; nothing was copied (stop them first, or --force)",
						plural.N(n, "other m3eval session"), verb, dst.Path())
				}
			}
			rep, err := store.Copy(ctx, src, dst, opts)
			if err != nil {
				return err
			}
			ok = true
			fmt.Fprintln(cmd.ErrOrStderr(), copySummary(rep, src.Path(), dst.Path()))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the database to copy: an SQLite file or postgres://…")
	f.StringVar(&to, "to", "", "the database to copy into: an SQLite file (created if missing) or postgres://…")
	f.BoolVar(&opts.Replace, "replace", false, "delete the campaign the target holds, in the copy's transaction")
	f.BoolVar(&force, "force", false, "with --replace: replace even while other m3eval sessions are connected to the target's PostgreSQL database")
	return cmd
}

// copySummary is the line copy prints: what moved, in the words of the campaign.
func copySummary(rep store.CopyReport, from, to string) string {
	var parts []string
	for _, c := range []struct{ table, noun string }{
		{"turns", "turn"}, {"annotators", "annotator"}, {"annotations", "annotation"},
		{"judges", "judge"}, {"samples", "sample"}, {"final_labels", "final label"},
	} {
		if n := rep.Count(c.table); n > 0 {
			parts = append(parts, plural.N(int(n), c.noun))
		}
	}
	line := fmt.Sprintf("copied %s", plural.N(int(rep.Rows()), "row"))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	line += " from " + from + " to " + to
	if rep.Replaced > 0 {
		line += fmt.Sprintf("; the %s of the campaign it held were deleted", plural.N(int(rep.Replaced), "row"))
	}
	return line
}
