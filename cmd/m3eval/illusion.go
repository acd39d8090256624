package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/render"
)

func newIllusionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "illusion",
		Short: "Build IllusionBench test sets and score shape/scene recall",
		Long: `illusion builds the lab's IllusionBench test sets (difficulty-stratified samples of
arshiahemmat/IllusionBench, identical row for row to make_arshia_testset.py) and scores
lmms-eval sample logs on them by shape and scene recall. See docs/illusionbench.md.`,
		Example: `  m3eval illusion sample --out testset --split Illusion_ICON=Illusion_ICON-00000-of-00001.parquet
  m3eval illusion score --testset Illusion_ICON=testset/illusion_icon_test1000.parquet icon_shape.jsonl`,
	}
	cmd.AddCommand(newIllusionSampleCmd(), newIllusionScoreCmd())
	return cmd
}

func newIllusionSampleCmd() *cobra.Command {
	var o illusion.SampleRequest
	cmd := &cobra.Command{
		Use:   "sample --split NAME=FILE [--split NAME=FILE ...] --out DIR",
		Short: "Draw the stratified test set of each split",
		Long: `sample draws --n rows from every split, stratified by difficulty, with Python's
random.Random(--seed) shared by the splits in the order given, exactly as the guide's
make_arshia_testset.py does. A split is a Hugging Face Parquet file or JSON Lines with an
image_name field, or its shards (FILE,FILE... or a quoted glob); the test set keeps its
format and rows: DIR/<split lowercased>_test<n>.<ext>, with DIR/summary.json.`,
		Example: `  m3eval illusion sample --out testset \
    --split Illusion_ICON=Illusion_ICON-00000-of-00001.parquet \
    --split Illusion_LOGO=Illusion_LOGO-00000-of-00001.parquet \
    --split Illusion_IN=Illusion_IN-00000-of-00001.parquet`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageIf(o.Run(cmd.Context(), cmdIO(cmd)))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newIllusionScoreCmd() *cobra.Command {
	var o illusion.ScoreRequest
	cmd := &cobra.Command{
		Use:   "score [--testset NAME=FILE ...] LOG|NAME=LOG ...",
		Short: "Shape and scene recall of lmms-eval sample logs",
		Long: `score reads lmms-eval --log_samples files, joins each doc_id to its image_name through
the test set, and reports shape or scene recall per split and difficulty with n and a 95%
Wilson interval, then the most frequent wrong answers. A response is right when it contains
the ground-truth class after both are normalized; --rule lmms-eval uses the task's own
_recall_match instead. A log's split is NAME of NAME=LOG, else the test set named in its
file name; shape or scene comes from the log unless --kind says. Two logs of the same task
and split are an error unless --latest or --pool. See docs/illusionbench.md.`,
		Example: `  m3eval illusion score \
    --testset Illusion_ICON=testset/illusion_icon_test1000.parquet \
    --testset Illusion_IN=testset/illusion_in_test1000.parquet \
    --latest logs/*/*_samples_*illusionbench_arshia_*_test.jsonl
  m3eval illusion score --by scene --format md -o by_scene.md --testset Illusion_ICON=icon.parquet Illusion_ICON=shape.jsonl`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Logs, o.Render = args, writeIllusion
			return usageIf(o.Run(cmd.Context(), cmdIO(cmd)))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// writeIllusion is render.WriteIllusion for illusion.ScoreRequest.Render: render imports
// illusion, so the command hands the writer over.
func writeIllusion(w io.Writer, rep *illusion.Report, format string, color bool) error {
	return render.WriteIllusion(w, rep, render.Format(format), color)
}
