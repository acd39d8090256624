package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/convert/domainav2"
	"github.com/m3bench/m3eval/internal/convert/vistrajqa"
)

// newConvertCmd is "m3eval convert": dataset conversion to the eval framework's layout.
func newConvertCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Convert datasets to the eval framework's domain_a_v2 layout and check them",
		Example: `  m3eval convert vistrajqa --input data/sessions-vab.jsonl --output converted/vab
  m3eval convert validate converted/vab`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf("convert needs a subcommand: vistrajqa or validate")
		},
	}
	cmd.AddCommand(newConvertVisTrajQACmd(), newConvertValidateCmd())
	return cmd
}

func newConvertVisTrajQACmd() *cobra.Command {
	var q vistrajqa.Request
	cmd := &cobra.Command{
		Use:   "vistrajqa --input FILE... --output DIR [--multimodal] [--keep-going]",
		Short: "Convert VisTrajQA sessions-*.jsonl into a domain_a_v2 directory",
		Long: `Convert VisTrajQA trajectories (sessions-*.jsonl) into the three files the eval framework
loads, following the VisTrajQA adaptation guide. The output is written beside DIR,
validated, then renamed to DIR: DIR is untouched unless everything succeeds. A bad record
fails the run with file:line: field: problem; --keep-going converts the good records and
lists the bad ones. See docs/vistrajqa.md.`,
		Example: `  m3eval convert vistrajqa --input data/sessions-vab.jsonl data/sessions-arena.jsonl --output converted/all
  m3eval convert vistrajqa --input data/sessions-vab.jsonl --output converted/vab-mm --multimodal`,
		RunE: func(cmd *cobra.Command, args []string) error {
			q.Inputs = append(q.Inputs, args...)
			return usageIf(q.Run(cmd.Context(), cmdIO(cmd)))
		},
	}
	q.AddFlags(cmd.Flags())
	return cmd
}

func newConvertValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate DIR",
		Short: "Check a domain_a_v2 directory the way the eval framework loads it, with statistics",
		Long: `Check a converted directory as the eval framework loads it (every sample complete, every
evidence id resolved, known question types, no id twice), print per-source statistics,
and exit 1 on any problem. See docs/vistrajqa.md.`,
		Example: `  m3eval convert validate converted/all`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := domainav2.ValidateRequest{Dir: args[0]}
			return q.Run(cmd.Context(), cmdIO(cmd))
		},
	}
}
