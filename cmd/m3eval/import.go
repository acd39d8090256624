package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/importer"
)

func newImportCmd(g *globalOptions) *cobra.Command {
	o := importer.NewImportCommand()
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import turn records, labeled samples or other tools' conversation logs",
		Long: `Import reads turn records, episode records and labeled samples (JSON array or JSON
Lines), and other tools' logs: openai chat logs, sharegpt conversations, vlmevalkit
predictions (xlsx, tsv, json), lmms-eval --log_samples, or any JSON records (or CSV/TSV
rows, columns as keys) with --map FIELD=PATH (turn fields, annotator, label.FIELD; with
--from the maps add to the format's turns). --from names the format; without it, it is detected and printed. Embedded
images are written beside the database (DB name + "-media").
Each file imports in one transaction: on a bad record nothing of that file is written.
Re-importing an identical file changes nothing; a changed record is an error unless
--replace, which keeps the labels of changed turns as stale drafts to re-confirm (or
deletes them with --drop-labels). FILE - reads standard input (JSON formats).
See docs/importing.md for the fields and formats.`,
		Example: `  m3eval import turns.jsonl
  m3eval import --annotator alice labeled.json
  m3eval import --from openai requests.jsonl
  m3eval import outputs/Qwen2-VL-7B/Qwen2-VL-7B_MMDU.xlsx
  m3eval import --map user_message=question --map vlm_response=response.text --map model=meta.model runs.jsonl
  m3eval import --demo`,
		Args: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := o.Check(); err != nil {
				return usageIf(err)
			}
			return oneStdin(append(args, g.rubricPath)...)
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return usageIf(o.Run(cmd.Context(), g.io(cmd))) },
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"annotator": annotatorName.fresh()})
	return cmd
}
