package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/importer"
)

func newImportScoresCmd(g *globalOptions) *cobra.Command {
	o := importer.NewImportScoresCommand()
	cmd := &cobra.Command{
		Use:   "import-scores --judge NAME FILE...",
		Short: "Import an automatic judge's scores per sample_id (JSON, JSONL or CSV)",
		Long: `import-scores stores an automatic judge's scores of imported turns, for the scale and
choice fields of the rubric, as that judge's. A file is
  - a JSON array of objects {"sample_id": ..., "<field>": value, ...},
  - JSON Lines of such objects, or
  - CSV (RFC 4180) with the header sample_id,<field>,<field>,...
Scale fields take numbers within the scale: whole numbers, or continuous scores such as 3.7
(kept as given; the agreement statistics leave them out of exact match and kappa and use
them in the correlations). Choice fields take one of the choices (any case); null and NA
mean the rubric's NA choice. An absent key or an empty CSV cell means no score. Values obey
the rubric's rules for the turn, as human labels do (a field fixed to NA must be NA).
Each file imports in one transaction: on an error nothing of that file is written.
Re-importing identical scores changes nothing; a changed score is an error unless --replace.
A judge's file in its own layout is read with --map sample_id=PATH --map FIELD=PATH (JSON
paths such as result.judge, or a .csv/.tsv table's column names; "4" and 4 alike; other
keys ignored). --skip-unknown skips the
scores of samples not imported, --on-duplicate first|last chooses between a sample's records.`,
		Example: `  m3eval import-scores --judge gpt4o scores.jsonl
  m3eval import-scores --judge rules --replace rule_scores.csv
  m3eval import-scores --judge cogvlm --map sample_id=score_id --map overall_quality=result.judge --skip-unknown --on-duplicate first judge.jsonl`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			return usageIf(o.Run(cmd.Context(), g.io(cmd)))
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"judge": judgeName.fresh()})
	return cmd
}
