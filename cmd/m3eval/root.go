package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// globalOptions holds the flags every subcommand shares.
type globalOptions struct {
	dbPath     string
	rubricPath string
	quiet      bool
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
	root.SetVersionTemplate("m3eval {{.Version}}")
	db := defaultDB
	if env := os.Getenv("M3EVAL_DB"); env != "" {
		db = env
	}
	pf := root.PersistentFlags()
	pf.StringVar(&opts.dbPath, "db", db, "SQLite database file; $M3EVAL_DB sets the default")
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
			newJudgeCmd(opts), newImportScoresCmd(opts), newScoreCmd(opts), newEstimateCmd(opts), newAgreeCmd(), newReportCmd(opts)}},
		cmdutil.Group{ID: "datasets", Title: "Datasets:", Commands: []*cobra.Command{
			newIllusionCmd(), newConvertCmd(), newSimulateCmd()}},
	)
	root.AddCommand(cmdutil.NewDocsCmd(map[string]string{"db": defaultDB}))
	cmdutil.AddCompletion(root)
	cmdutil.ApplyFlags(root, cmdutil.Registry())
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

// notFoundHint adds where to look when a named thing does not exist.
func notFoundHint(err error, hint string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &usageError{errors.New(err.Error() + " (see " + hint + ")")}
	}
	return err
}

// usageErrorf builds a usageError from a format string.
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exactArgs is cobra.ExactArgs with the error marked as a usage error.
func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }

// minArgs is cobra.MinimumNArgs with the error marked as a usage error.
func minArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MinimumNArgs(n)) }

func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}
