package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

func newImportCmd(g *globalOptions) *cobra.Command {
	var (
		o    importer.Options
		demo bool
		from string
		maps []string
		// mapFile holds --map lines, one FIELD=PATH a line.
		mapFile string
		// imagesDir and imageMap are --images and --image-map.
		imagesDir, imageMap string
		// The limits as given (sizes such as 64MB): checked with the other flags.
		maxRecord, maxCell, maxUnzipped string
	)
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
			if demo != (len(args) == 0) {
				return usageErrorf("give FILE arguments or --demo")
			}
			if imageMap != "" && imagesDir == "" {
				return usageErrorf("--image-map names files in --images DIR: give --images too")
			}
			if o.Store.DropLabels && !o.Store.Replace {
				return usageErrorf("--drop-labels goes with --replace: only a replaced turn's labels are dropped")
			}
			var err error
			// With --map-file the maps are checked with the file's (RunE): a map file is data.
			if mapFile == "" {
				if o.Map, err = ingest.ParseFieldPaths(maps); err != nil {
					return usageErrorf("%v", err)
				}
				if from == "" {
					if err := ingest.CheckTurnMap(o.Map); err != nil {
						return usageErrorf("%v", err)
					}
				}
			}
			for _, l := range []struct {
				flag, value string
				dst         *int64
			}{{"--max-record-size", maxRecord, &o.Limits.MaxRecord}, {"--max-cell-size", maxCell, &o.Limits.MaxCell},
				{"--max-unzipped-size", maxUnzipped, &o.Limits.MaxUnzipped}} {
				if *l.dst, err = ingest.ParseSize(l.value); err != nil {
					return usageErrorf("%s %v", l.flag, err)
				}
			}
			return oneStdin(append(args, g.rubricPath)...)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// A new SQLite file that ends up holding nothing (the first file failed) is
			// removed again: a failed import leaves no empty database behind (#39).
			fresh := false
			if !store.IsPostgres(g.dbPath) {
				_, statErr := os.Stat(g.dbPath)
				fresh = errors.Is(statErr, fs.ErrNotExist)
			}
			s, r, err := g.openDB(cmd.Context(), store.Options{}, true)
			if err != nil {
				if fresh {
					removeSQLite(g.dbPath)
				}
				return err
			}
			imp := (*importer.Importer)(nil)
			defer func() {
				s.Close()
				if fresh && (imp == nil || imp.Committed() == 0) {
					removeSQLite(g.dbPath)
				}
			}()
			if mapFile != "" {
				// A map file is data, like the files it maps: its problems exit 1, naming it.
				builtin, _ := fs.Sub(annotations.Maps, "maps")
				fromFile, err := ingest.ReadMapFileOr(mapFile, builtin)
				if err != nil {
					return fmt.Errorf("--map-file %w", err)
				}
				if o.Map, err = ingest.ParseFieldPaths(append(fromFile, maps...)); err == nil && from == "" {
					err = ingest.CheckTurnMap(o.Map)
				}
				if err != nil {
					return fmt.Errorf("--map-file %s: %w", mapFile, err)
				}
			}
			if imagesDir != "" {
				dir, err := filepath.Abs(imagesDir)
				if err != nil {
					return err
				}
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					return fmt.Errorf("--images %s: not a folder", imagesDir)
				}
				o.Images = &ingest.ImageDir{Dir: dir}
				if imageMap != "" {
					if o.Images.ByID, err = ingest.ReadImageMap(imageMap); err != nil {
						return fmt.Errorf("--image-map %w", err)
					}
				}
			}
			o.Rubric, o.From, o.DB, o.In = r, ingest.Format(from), g.dbPath, cmd.InOrStdin()
			if o.Actions, err = rubric.ParseActions(annotations.Actions); err != nil {
				return err
			}
			if err := ingest.CheckLabelFields(o.Map, func(n string) bool { _, ok := r.Field(n); return ok }, r.FieldNames()); err != nil {
				return usageErrorf("%v", err)
			}
			return withBar(cmd, "import", progress.Bytes, func(p progress.Func, out, errw io.Writer) error {
				o.Progress, o.Out = p, out
				imp = importer.New(s, o)
				return imp.Run(cmd.Context(), args, demo)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Annotator, "annotator", "", "annotator of labels that do not name one")
	f.BoolVar(&o.Store.Replace, "replace", false, "overwrite records that changed under an existing sample_id")
	f.BoolVar(&o.Store.DropLabels, "drop-labels", false, "with --replace: delete the labels of turns whose content changed, instead of keeping them as drafts to re-confirm")
	f.BoolVar(&demo, "demo", false, "import the built-in demo episodes")
	f.BoolVar(&o.AllowUnknownActions, "allow-unknown-actions", false, "import turns whose action_type is not in the action-type catalogue (the rubric then asks every field on them)")
	cmdutil.EnumVar(f, &from, "from", "", cmdutil.Strings(ingest.Formats...), "format of the files (detected when not given)")
	f.StringVar(&maxRecord, "max-record-size", ingest.FormatSize(ingest.DefaultMaxRecord), "the longest record (a JSON line or value) read; a longer one fails the file")
	f.StringVar(&maxCell, "max-cell-size", ingest.FormatSize(ingest.DefaultMaxCell), "xlsx: the longest cell text read; a longer one fails the file")
	f.StringVar(&maxUnzipped, "max-unzipped-size", ingest.FormatSize(ingest.DefaultMaxUnzipped), "xlsx: the most a file may unzip to; a larger one is refused")
	f.StringArrayVar(&maps, "map", nil, "FIELD=PATH: take a turn field, the annotator or a label field (label.FIELD) from a JSON path of each record, e.g. vlm_response=response.text; repeatable")
	f.StringVar(&imagesDir, "images", "", "folder of the images the logs refer to but do not carry: a turn without images gets DIR/<question id>.<png|jpg|...> (or the --image-map file); relative image paths resolve against it")
	f.StringVar(&imageMap, "image-map", "", "with --images: a CSV file of id,file lines, the image file of each question id (lmms-eval doc_id, VLMEvalKit index, a conversation's id)")
	f.StringVar(&mapFile, "map-file", "", "a file of --map lines, one FIELD=PATH a line (# comments), or the name of a built-in one (mllm-judge); --map flags add to it")
	names(cmd, map[string]name{"annotator": annotatorName.fresh()})
	return cmd
}

// removeSQLite removes a SQLite database file with its journal files.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}
