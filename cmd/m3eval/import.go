package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime/debug"
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
	)
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import turn records, episode records or labeled samples (JSON or JSONL)",
		Long: `Import reads JSON arrays and JSON Lines of
  - turn records (sample_id, episode_id, turn, action_type, task_type, user_message,
    vlm_response, expected_answer, images, model, meta),
  - episode records (episode_id, images, turns: [...]),
  - labeled samples (turn fields plus human_annotation or human_annotations).
Each file imports in one transaction: on a bad record nothing of that file is written.
Re-importing an identical file changes nothing; a changed record is an error unless --replace.
The labels of a turn --replace changes were made on earlier content: they are kept as drafts
marked stale (out of score until re-confirmed in annotate) and listed, or deleted with
--drop-labels; values the new content does not allow are removed.
FILE - reads standard input.`,
		Example: `  m3eval import turns.jsonl
  m3eval import --annotator alice labeled.json
  m3eval import --demo`,
		Args: func(cmd *cobra.Command, args []string) error {
			if demo != (len(args) == 0) {
				return usageErrorf("give FILE arguments or --demo")
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
			imp := &importer{s: s, rubric: r, annotator: annotator, opts: store.ImportOptions{Replace: replace, DropLabels: drop, Rubric: r}, out: cmd.OutOrStdout(), in: cmd.InOrStdin()}
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
	return cmd
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
}

func (imp *importer) file(ctx context.Context, path string) error {
	f, name, err := openInput(path, imp.in)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	return imp.stream(ctx, name, f)
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
	opts := imp.opts
	opts.Source = name
	tx, err := imp.s.BeginImport(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lo := ingest.LabelOptions{Rubric: imp.rubric, Annotator: imp.annotator, Now: imp.s.Now()}
	counts, err := ingest.Import(ctx, tx, name, r, lo)
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
