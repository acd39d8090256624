package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// globalOptions holds the flags every subcommand shares.
type globalOptions struct {
	dbPath     string
	rubricPath string
}

// defaultDBPath is ./m3eval.db unless $M3EVAL_DB names another file.
func defaultDBPath() string {
	if p := os.Getenv("M3EVAL_DB"); p != "" {
		return p
	}
	return "m3eval.db"
}

func newRootCmd() *cobra.Command {
	opts := &globalOptions{}
	root := &cobra.Command{
		Use:   "m3eval",
		Short: "Human and automatic evaluation of multi-turn VLM conversations (M3Bench)",
		Long: `m3eval imports M3Bench conversation turns, lets annotators label them in the
terminal, exports labeled JSON, and computes agreement and correlation statistics.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&opts.dbPath, "db", defaultDBPath(), "SQLite database file (default from $M3EVAL_DB)")
	root.PersistentFlags().StringVar(&opts.rubricPath, "rubric", "", "rubric file (JSON) to use instead of the built-in M3Bench rubric")
	// Flag parse errors are usage errors (exit status 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })

	root.AddCommand(
		newIllusionCmd(),
		newConvertCmd(),
		newImportCmd(opts),
		newAnnotateCmd(opts),
		newExportCmd(opts),
		newStatusCmd(opts),
		newAgreeCmd(),
		newImportScoresCmd(opts),
		newScoreCmd(opts),
		newReportCmd(opts),
		newJudgeCmd(opts),
		newSampleCmd(opts),
		newAssignCmd(opts),
		newQCCmd(opts),
		newAdjudicateCmd(opts),
		newServeCmd(opts),
		newSimulateCmd(),
	)
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
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with the error marked as a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}
