package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

// newRubricCmd is m3eval rubric check|show: a lab's rubric is an input like its data, so
// it can be checked before an import and the built-in one copied as a starting point.
func newRubricCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rubric",
		Short: "Check a rubric file, or print the built-in M3Bench rubric",
		Long: `A rubric file says which fields an annotation has, their kinds (scale, choice, text),
their labels in English and Chinese, and the rules that fix a field to NA on some turns.
Every command takes one with --rubric FILE. docs/rubric.md describes the format.`,
		Example: `  m3eval rubric show > my-rubric.json
  m3eval rubric check my-rubric.json`,
		Args: exactArgs(0),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Check a rubric file and summarize its fields",
		Long: `check reads a rubric file as every command would, and prints its fields, or the
first problem with its line and field.`,
		Example: `  m3eval rubric check my-rubric.json`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rubric.CheckCommand{File: args[0]}.Run(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "show",
		Short:   "Print the built-in M3Bench rubric, as a starting point for your own",
		Example: `  m3eval rubric show > my-rubric.json`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(annotations.DefaultRubric)
			return err
		},
	})
	return cmd
}
