package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

func newImportCmd(g *globalOptions) *cobra.Command {
	var (
		annotator string
		replace   bool
		demo      bool
		from      string
		maps      []string
	)
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import turn records, labeled samples or other tools' conversation logs",
		Long: `Import reads JSON arrays and JSON Lines of
  - turn records (sample_id, episode_id, turn, action_type, task_type, user_message,
    vlm_response, expected_answer, images, model, meta),
  - episode records (episode_id, images, turns: [...]),
  - labeled samples (turn fields plus human_annotation or human_annotations),
and the logs other tools write (--from, detected and printed when not given):
  - openai: chat-completions logs, one conversation per line (messages),
  - sharegpt: conversations with from/value (LLaVA, ShareGPT4V), image or images,
  - vlmevalkit: VLMEvalKit prediction files (xlsx, tsv, json), MMDU multi-turn rows too,
  - lmms-eval: --log_samples files, one-turn episodes,
  - --map FIELD=PATH...: any JSON records, each turn field taken from a JSON path.
Their other fields are kept in meta.source; action_type is "unknown" and
expected_answer empty where the log has none. Images embedded as data URLs or base64
are written to files in the folder beside the database (DB name + "-media").
Each file imports in one transaction: on a bad record nothing of that file is written.
Re-importing an identical file changes nothing; a changed record is an error unless --replace.
See docs/importing.md.`,
		Example: `  m3eval import turns.jsonl
  m3eval import --annotator alice labeled.json
  m3eval import --from openai requests.jsonl
  m3eval import outputs/Qwen2-VL-7B/Qwen2-VL-7B_MMDU.xlsx
  m3eval import --map user_message=question --map vlm_response=response.text --map model=meta.model runs.jsonl
  m3eval import --demo`,
		Args: func(cmd *cobra.Command, args []string) error {
			if demo != (len(args) == 0) {
				return usageErrorf("give FILE arguments or --demo")
			}
			if from != "" && !slices.Contains(ingest.Formats, ingest.Format(from)) {
				return usageErrorf("--from %q: use one of openai, sharegpt, vlmevalkit, lmms-eval, m3eval", from)
			}
			if from != "" && len(maps) > 0 {
				return usageErrorf("--map reads JSON records of any layout: give it without --from")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// The live heap of an import is a few batches of records; collecting less often
			// frees the second core for parsing (about +20% records/s on 2 cores).
			defer debug.SetGCPercent(debug.SetGCPercent(importGCPercent))
			r, err := g.loadRubric()
			if err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), r, store.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			paths, err := ingest.ParseFieldPaths(maps)
			if err != nil {
				return usageErrorf("%v", err)
			}
			imp := &importer{s: s, rubric: r, annotator: annotator, opts: store.ImportOptions{Replace: replace}, out: cmd.OutOrStdout(),
				from: ingest.Format(from), paths: paths, media: &ingest.Media{Dir: mediaDir(g.dbPath)}}
			if demo {
				return imp.demo(cmd.Context())
			}
			for _, name := range args {
				if err := imp.file(cmd.Context(), name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&annotator, "annotator", "", "annotator of labels that do not name one")
	cmd.Flags().BoolVar(&replace, "replace", false, "overwrite records that changed under an existing sample_id")
	cmd.Flags().BoolVar(&demo, "demo", false, "import the built-in demo episodes")
	cmd.Flags().StringVar(&from, "from", "", "format of the files: openai, sharegpt, vlmevalkit, lmms-eval or m3eval (detected when not given)")
	cmd.Flags().StringArrayVar(&maps, "map", nil, "FIELD=PATH: take a turn field from a JSON path of each record, e.g. vlm_response=response.text; repeatable")
	return cmd
}

// mediaDir is where images embedded in imported logs go: beside the database, named
// after it (m3eval.db -> m3eval-media).
func mediaDir(db string) string {
	return strings.TrimSuffix(db, filepath.Ext(db)) + "-media"
}

// importGCPercent is the GOGC of an import.
const importGCPercent = 400

// The store's importer is what ingest.Import fills.
var _ ingest.Sink = (*store.Importer)(nil)

type importer struct {
	s         *store.Store
	rubric    *rubric.Rubric
	annotator string
	opts      store.ImportOptions
	out       io.Writer
	from      ingest.Format
	paths     []ingest.FieldPath
	media     *ingest.Media
}

func (imp *importer) file(ctx context.Context, name string) error {
	format := imp.from
	switch {
	case len(imp.paths) > 0:
		format = ingest.FormatMap
	case format == "":
		f, why, err := ingest.Detect(name)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		format = f
		fmt.Fprintf(imp.out, "%s: detected format %s: %s (give --from to choose)\n", textsafe.Line(name), f, why)
	}
	src, closer, err := ingest.Open(name, ingest.Options{Format: format, Map: imp.paths, Media: imp.media})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer closer.Close()
	return imp.streamFrom(ctx, name, src)
}

// demo imports the embedded demo episodes.
func (imp *importer) demo(ctx context.Context) error {
	names, err := fs.Glob(annotations.Demo, "demo/*.jsonl")
	if err != nil || len(names) == 0 {
		return fmt.Errorf("import --demo: no demo data is built in")
	}
	for _, name := range names {
		f, err := annotations.Demo.Open(name)
		if err != nil {
			return err
		}
		err = imp.stream(ctx, path.Join("annotations", name), f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (imp *importer) stream(ctx context.Context, name string, r io.Reader) error {
	return imp.streamFrom(ctx, name, ingest.NewReader(name, r))
}

func (imp *importer) streamFrom(ctx context.Context, name string, src ingest.Source) error {
	opts := imp.opts
	opts.Source = name
	tx, err := imp.s.BeginImport(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lo := ingest.LabelOptions{Rubric: imp.rubric, Annotator: imp.annotator, Now: imp.s.Now()}
	before := imp.media.Written()
	counts, err := ingest.ImportFrom(ctx, tx, name, src, lo)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(imp.out, "%s: %s\n", textsafe.Line(name), counts)
	if n := imp.media.Written() - before; n > 0 {
		fmt.Fprintf(imp.out, "%s: %d embedded images written to %s\n", textsafe.Line(name), n, textsafe.Line(imp.media.Dir))
	}
	return nil
}
