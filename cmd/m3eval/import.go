package main

import (
	"context"
	"errors"
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
		drop      bool
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
The labels of a turn --replace changes were made on earlier content: they are kept as drafts
marked stale (out of score until re-confirmed in annotate) and listed, or deleted with
--drop-labels; values the new content does not allow are removed.
FILE - reads standard input (JSON formats; xlsx and tsv are read from their file).
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
			if drop && !replace {
				return usageErrorf("--drop-labels goes with --replace: only a replaced turn's labels are dropped")
			}
			return oneStdin(append(args, g.rubricPath)...)
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
			imp := &importer{s: s, rubric: r, annotator: annotator, opts: store.ImportOptions{Replace: replace, DropLabels: drop, Rubric: r},
				out: cmd.OutOrStdout(), in: cmd.InOrStdin(),
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
	cmd.Flags().BoolVar(&drop, "drop-labels", false, "with --replace: delete the labels of turns whose content changed, instead of keeping them as drafts to re-confirm")
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
	in        io.Reader
	from      ingest.Format
	paths     []ingest.FieldPath
	media     *ingest.Media
}

func (imp *importer) file(ctx context.Context, path string) error {
	f, name, err := openInput(path, imp.in)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	// Relative image paths name files beside the imported file, wherever import ran from;
	// standard input has no directory.
	base := ""
	if path != "-" {
		if base, err = filepath.Abs(filepath.Dir(path)); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	format := imp.from
	var r io.Reader = f
	switch {
	case len(imp.paths) > 0:
		format = ingest.FormatMap
	case format == "":
		var why string
		format, why, r, err = ingest.DetectReader(name, f)
		switch {
		case errors.Is(err, ingest.ErrNoRecords):
			format = ingest.FormatM3eval // reads nothing, and says so
		case err != nil:
			return fmt.Errorf("import: %w", err)
		default:
			fmt.Fprintf(imp.out, "%s: detected format %s: %s (give --from to choose)\n", textsafe.Line(name), format, why)
		}
	}
	opts := ingest.Options{Format: format, Map: imp.paths, Media: imp.media}
	if format == ingest.FormatVLMEvalKit && ingest.IsSheet(name) {
		// xlsx and tsv are read from their file (a zip needs random access).
		src, closer, err := ingest.Open(path, opts)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer closer.Close()
		return imp.streamFrom(ctx, name, src, base)
	}
	src, err := ingest.NewSource(name, r, opts)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return imp.streamFrom(ctx, name, src, base)
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
		// The demo's images are embedded; their paths stay as written (the annotator
		// reads them from the binary).
		err = imp.stream(ctx, path.Join("annotations", name), f, "")
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (imp *importer) stream(ctx context.Context, name string, r io.Reader, imageBase string) error {
	return imp.streamFrom(ctx, name, ingest.NewReader(name, r), imageBase)
}

// streamFrom imports one source; relative image paths are resolved against imageBase
// when it is set.
func (imp *importer) streamFrom(ctx context.Context, name string, src ingest.Source, imageBase string) error {
	opts := imp.opts
	opts.Source = name
	tx, err := imp.s.BeginImport(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lo := ingest.LabelOptions{Rubric: imp.rubric, Annotator: imp.annotator, Now: imp.s.Now(), ImageBase: imageBase}
	before := imp.media.Written()
	counts, err := ingest.ImportFrom(ctx, tx, name, src, lo)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if counts.Turns == [3]int{} {
		// An empty file, [] or only blank lines: say so, rather than print a row of zeros
		// that looks like an import.
		fmt.Fprintf(imp.out, "%s: no records in the file: imported nothing\n", textsafe.Line(name))
		return nil
	}
	fmt.Fprintf(imp.out, "%s: %s\n", textsafe.Line(name), counts)
	if n := imp.media.Written() - before; n > 0 {
		fmt.Fprintf(imp.out, "%s: %d embedded images written to %s\n", textsafe.Line(name), n, textsafe.Line(imp.media.Dir))
	}
	printStale(imp.out, tx.StaleLabels())
	return nil
}

// printStale lists the labels of turns whose content the import replaced.
func printStale(w io.Writer, stale []store.StaleLabel) {
	if len(stale) == 0 {
		return
	}
	fmt.Fprintf(w, "%d labels were made on earlier content of replaced turns:\n", len(stale))
	for _, l := range stale {
		what := "kept as a draft to re-confirm (m3eval annotate)"
		switch {
		case l.Deleted:
			what = "deleted (--drop-labels)"
		case l.WasDone:
			what = "was done; kept as a draft to re-confirm (m3eval annotate)"
		}
		if len(l.Dropped) > 0 {
			what += "; removed, not allowed for the new content: " + strings.Join(l.Dropped, ", ")
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", textsafe.Line(l.SampleID), textsafe.Line(l.Annotator), what)
	}
}
