package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// globalOptions holds the flags every subcommand shares.
type globalOptions struct {
	dbPath     string
	rubricPath string
	quiet      bool
	rubric     *rubric.Rubric // --rubric once read (loadRubric)
}

// defaultDB is the database file when neither --db nor $M3EVAL_DB names one.
const defaultDB = "m3eval.db"

func newRootCmd() *cobra.Command {
	opts := &globalOptions{}
	root := &cobra.Command{
		Use:   "m3eval",
		Short: "Human and automatic evaluation of multi-turn VLM conversations (M3Bench)",
		Long: `m3eval imports M3Bench conversation turns, lets annotators label them in the
terminal, exports labeled JSON, and computes agreement and correlation statistics.`,
		Example:       "  m3eval import --demo\n  m3eval annotate --annotator alice\n  m3eval score --by action_type",
		Version:       cmdutil.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Before any command runs: a --rubric given is read and checked, by every command (status
	// and the others that do not use it accepted any file), and one rule for names the
	// database does not hold.
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("rubric") {
			if _, err := opts.loadRubric(); err != nil {
				return err
			}
		}
		// An address m3eval cannot open is a usage error, said without the address (it may
		// hold a password), before anything could create a file named after it.
		if err := store.CheckAddress(opts.dbPath); err != nil {
			return usageErrorf("--db: %v", err)
		}
		return checkNames(cmd, opts.dbPath)
	}
	root.SetVersionTemplate("m3eval {{.Version}}")
	db := defaultDB
	if env := os.Getenv("M3EVAL_DB"); env != "" {
		db = env
	}
	pf := root.PersistentFlags()
	pf.StringVar(&opts.dbPath, "db", db, "SQLite database file, or a PostgreSQL database as postgres://…; $M3EVAL_DB sets the default")
	// The help shows the default without the password $M3EVAL_DB's address may hold.
	pf.Lookup("db").DefValue = store.DisplayName(db)
	pf.StringVar(&opts.rubricPath, "rubric", "", "rubric file (JSON) to use instead of the built-in M3Bench rubric")
	pf.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress bars (they show only on a terminal anyway)")
	// Flag parse errors are usage errors (exit status 2); an unknown value lists the valid ones.
	root.SetFlagErrorFunc(cmdutil.FlagErrors(func(err error) error { return &usageError{err} }))
	// Each group is where a user looks for its commands (m3eval --help).
	cmdutil.AddGroups(root,
		cmdutil.Group{ID: "annotation", Title: "Annotation:", Commands: []*cobra.Command{
			newImportCmd(opts), newAnnotateCmd(opts), newStatusCmd(opts), newExportCmd(opts),
			newSampleCmd(opts), newAssignCmd(opts), newServeCmd(opts), newQCCmd(opts), newAdjudicateCmd(opts)}},
		cmdutil.Group{ID: "scoring", Title: "Scoring:", Commands: []*cobra.Command{
			newJudgeCmd(opts), newImportScoresCmd(opts), newScoreCmd(opts), newEstimateCmd(opts), newAgreeCmd(), newReportCmd(opts), newRubricCmd()}},
		cmdutil.Group{ID: "datasets", Title: "Datasets:", Commands: []*cobra.Command{
			newIllusionCmd(), newConvertCmd(), newSimulateCmd()}},
		cmdutil.Group{ID: "databases", Title: "Databases:", Commands: []*cobra.Command{
			newCopyCmd()}},
	)
	root.AddCommand(cmdutil.NewDocsCmd(map[string]string{"db": defaultDB}))
	cmdutil.AddCompletion(root)
	// The shell completes each flag with what its declaration says (an enumerated flag's
	// values, suggestions, KEY= keys); names() registered the database's names already.
	cmdutil.CompleteFlags(root)
	return root
}

// usageError marks a mistake in how the command was called; main exits with status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageIf marks the usage errors of the internal packages as usage errors (exit status 2).
func usageIf(err error) error {
	if errors.Is(err, usage.Err) {
		return &usageError{err}
	}
	return err
}

// notFoundHint adds where to look when a named thing does not exist. Like every unknown
// name (names.go), it is an error of the data, not of the command line: exit status 1.
func notFoundHint(err error, hint string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errors.New(err.Error() + " (see " + hint + ")")
	}
	return err
}

// usageErrorf builds a usageError from a format string.
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exactArgs checks that a command got exactly n arguments, in words naming them from its
// Use line (cobra's own "accepts 1 arg(s), received 0" names nothing); a usage error.
func exactArgs(n int) cobra.PositionalArgs { return countArgs(n, n) }

// minArgs checks that a command got at least n arguments (see exactArgs).
func minArgs(n int) cobra.PositionalArgs { return countArgs(n, -1) }

// countArgs checks min ≤ len(args) ≤ max (max < 0: no upper bound).
func countArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		names := positionalNames(cmd.Use)
		switch {
		case len(args) < min:
			line := cmd.Use
			if cmd.HasParent() {
				line = cmd.Parent().CommandPath() + " " + cmd.Use
			}
			return usageErrorf("missing %s: %s", strings.TrimSuffix(strings.Join(names, " "), "..."), line)
		case max == 0 && len(args) > 0:
			return usageErrorf("%s takes no arguments, got %s (options are flags: --name value)", cmd.CommandPath(), quoteArgs(args))
		case max >= 0 && len(args) > max:
			return usageErrorf("%s takes %s, got %d arguments: %s", cmd.CommandPath(), strings.Join(names, " "), len(args), quoteArgs(args))
		}
		return nil
	}
}

// positionalNames picks the positional arguments out of a command's Use line: the words
// after the command's name that are neither flags, nor flag values, nor optional.
func positionalNames(use string) []string {
	var names []string
	words := strings.Fields(use)
	depth := 0 // inside [ ] or ( ): optional or alternative flags
	for i := 1; i < len(words); i++ {
		w := words[i]
		open := strings.Count(w, "[") + strings.Count(w, "(")
		shut := strings.Count(w, "]") + strings.Count(w, ")")
		flagValue := strings.HasPrefix(strings.TrimLeft(words[i-1], "[("), "-") && !strings.ContainsAny(words[i-1], "])")
		if depth == 0 && open == 0 && !strings.HasPrefix(w, "-") && !flagValue && w != "|" && w != "..." {
			names = append(names, w)
		}
		depth += open - shut
	}
	return names
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, " ")
}
