package workflow

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// CopyCommand is m3eval copy's options: the two databases (SQLite files or postgres://
// addresses) and what may happen to the target. Unlike the other commands, copy opens its
// databases itself (--db is not used): it needs two, opened each its own way.
type CopyCommand struct {
	From, To string
	store.CopyOptions
	// Force replaces even while other m3eval sessions are connected to the target's
	// PostgreSQL database.
	Force bool
}

// AddFlags defines the flags of m3eval copy on fs.
func (q *CopyCommand) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&q.From, "from", "", "the database to copy: an SQLite file or postgres://…")
	f.StringVar(&q.To, "to", "", "the database to copy into: an SQLite file (created if missing) or postgres://…")
	f.BoolVar(&q.Replace, "replace", false, "delete the campaign the target holds, in the copy's transaction")
	f.BoolVar(&q.Force, "force", false, "with --replace: replace even while other m3eval sessions are connected to the target's PostgreSQL database")
}

// Check finds the usage errors of the flags before anything is opened (usage.Err).
func (q *CopyCommand) Check() error {
	if q.From == "" || q.To == "" {
		return usage.Errorf("copy needs both --from and --to (an SQLite file or postgres://…)")
	}
	for _, end := range []struct{ flag, db string }{{"--from", q.From}, {"--to", q.To}} {
		if err := store.CheckAddress(end.db); err != nil {
			return usage.Errorf("%s: %v", end.flag, err)
		}
	}
	return nil
}

// Run is m3eval copy: it checks the command, opens both databases (not e's: --db is not
// used), copies the source's campaign into the target in one transaction and says what
// moved on e's standard error. A failed copy leaves the target as it was: a target file it
// created is removed, and empty tables it created in a PostgreSQL schema are dropped
// (standard error says so if that fails).
func (q *CopyCommand) Run(ctx context.Context, e *cmdio.IO) error {
	if err := q.Check(); err != nil {
		return err
	}
	stderr := e.Stderr()
	// The copy's own connections are named apart, so that it counts only others'.
	src, err := store.Open(ctx, q.From, store.Options{ReadOnly: true, Application: "m3eval copy"})
	if err != nil {
		return fmt.Errorf("copy --from: %w", err)
	}
	defer src.Close()
	// A target file this copy creates is removed again if the copy fails: a failed copy
	// leaves the target as it was, absent included.
	created := false
	if !store.IsPostgres(q.To) {
		if _, err := os.Stat(q.To); errors.Is(err, fs.ErrNotExist) {
			created = true
		}
	}
	// Durable: the copy is on disk (or on the server's) when it is said to be done.
	dst, err := store.Open(ctx, q.To, store.Options{Durable: true, Application: "m3eval copy"})
	if err != nil {
		return fmt.Errorf("copy --to: %w", err)
	}
	ok := false
	defer func() {
		if !ok && dst.CreatedTables() {
			// A PostgreSQL schema this copy filled with empty tables is left as it was, as
			// a created file is: on a context of its own, since an interrupted copy ends
			// here too.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := dst.DropCreatedTables(ctx); err != nil {
				fmt.Fprintf(stderr, "copy: the empty m3eval tables this copy created in %s stay there (%v); a rerun copies into them\n", dst.Path(), err)
			}
			cancel()
		}
		dst.Close()
		if created && !ok {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				os.Remove(q.To + suffix)
			}
		}
	}()
	if q.Replace && !q.Force {
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
	rep, err := store.Copy(ctx, src, dst, q.CopyOptions)
	if err != nil {
		return err
	}
	ok = true
	fmt.Fprintln(stderr, copySummary(rep, src.Path(), dst.Path()))
	return nil
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
