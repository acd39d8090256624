package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// ImportCommand is m3eval import's options: the importer's Options and the flags as given,
// which Check and Run turn into Options (Run sets DB, In, Out and Progress from its IO).
type ImportCommand struct {
	Options
	Files []string // the FILE arguments
	Demo  bool     // --demo: the built-in demo episodes instead of Files
	Maps  []string // --map FIELD=PATH
	// MapFile holds --map lines, one FIELD=PATH a line, or names a built-in map.
	MapFile string
	// ImagesDir and ImageMap are --images and --image-map.
	ImagesDir, ImageMap string
	// The limits as given (sizes such as 64MB), read into Limits by Check.
	MaxRecord, MaxCell, MaxUnzipped string
}

// NewImportCommand has the default limits, as the flags give them.
func NewImportCommand() *ImportCommand {
	return &ImportCommand{MaxRecord: ingest.FormatSize(ingest.DefaultMaxRecord), MaxCell: ingest.FormatSize(ingest.DefaultMaxCell),
		MaxUnzipped: ingest.FormatSize(ingest.DefaultMaxUnzipped)}
}

// AddFlags defines the flags of m3eval import on fs.
func (q *ImportCommand) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&q.Annotator, "annotator", "", "annotator of labels that do not name one")
	f.BoolVar(&q.Store.Replace, "replace", false, "overwrite records that changed under an existing sample_id")
	f.BoolVar(&q.Store.DropLabels, "drop-labels", false, "with --replace: delete the labels of turns whose content changed, instead of keeping them as drafts to re-confirm")
	f.BoolVar(&q.Demo, "demo", false, "import the built-in demo episodes")
	f.BoolVar(&q.AllowUnknownActions, "allow-unknown-actions", false, "import turns whose action_type is not in the action-type catalogue (the rubric then asks every field on them)")
	cmdutil.EnumVar(f, &q.From, "from", "", ingest.Formats, "format of the files (detected when not given)")
	f.StringVar(&q.MaxRecord, "max-record-size", q.MaxRecord, "the longest record (a JSON line or value) read; a longer one fails the file")
	f.StringVar(&q.MaxCell, "max-cell-size", q.MaxCell, "xlsx: the longest cell text read; a longer one fails the file")
	f.StringVar(&q.MaxUnzipped, "max-unzipped-size", q.MaxUnzipped, "xlsx: the most a file may unzip to; a larger one is refused")
	f.StringArrayVar(&q.Maps, "map", nil, "FIELD=PATH: take a turn field, the annotator or a label field (label.FIELD) from a JSON path of each record, e.g. vlm_response=response.text; repeatable")
	f.StringVar(&q.ImagesDir, "images", "", "folder of the images the logs refer to but do not carry: a turn without images gets DIR/<question id>.<png|jpg|...> (or the --image-map file); relative image paths resolve against it")
	f.StringVar(&q.ImageMap, "image-map", "", "with --images: a CSV file of id,file lines, the image file of each question id (lmms-eval doc_id, VLMEvalKit index, a conversation's id)")
	f.StringVar(&q.MapFile, "map-file", "", "a file of --map lines, one FIELD=PATH a line (# comments), or the name of a built-in one (mllm-judge); --map flags add to it")
}

// Check finds the usage errors of the flags and arguments before the database is opened
// (usage.Err), and reads the --map flags and the limits. The maps of a --map-file are read
// and checked by Run instead: a map file is data, like the files it maps, so its problems
// are errors of the data (exit status 1), naming it.
func (q *ImportCommand) Check() error {
	if q.Demo != (len(q.Files) == 0) {
		return usage.Errorf("give FILE arguments or --demo")
	}
	if q.ImageMap != "" && q.ImagesDir == "" {
		return usage.Errorf("--image-map names files in --images DIR: give --images too")
	}
	if q.Store.DropLabels && !q.Store.Replace {
		return usage.Errorf("--drop-labels goes with --replace: only a replaced turn's labels are dropped")
	}
	var err error
	if q.MapFile == "" {
		if q.Map, err = ingest.ParseFieldPaths(q.Maps); err != nil {
			return usage.Wrap(err)
		}
		if q.From == "" {
			if err := ingest.CheckTurnMap(q.Map); err != nil {
				return usage.Wrap(err)
			}
		}
	}
	for _, l := range []struct {
		flag, value string
		dst         *int64
	}{{"--max-record-size", q.MaxRecord, &q.Limits.MaxRecord}, {"--max-cell-size", q.MaxCell, &q.Limits.MaxCell},
		{"--max-unzipped-size", q.MaxUnzipped, &q.Limits.MaxUnzipped}} {
		if *l.dst, err = ingest.ParseSize(l.value); err != nil {
			return usage.Errorf("%s %v", l.flag, err)
		}
	}
	return nil
}

// Run is m3eval import once its flags are parsed (docs/architecture.md, "How a command is
// wired"): it checks the command, opens the database (creating an SQLite file if there is
// none), and imports the Files (or the demo) under a progress bar, one line per file said
// on e's output. A database file it created is removed again when no file was imported: a
// failed import leaves no empty database behind (#39).
func (q *ImportCommand) Run(ctx context.Context, e *cmdio.IO) error {
	if err := q.Check(); err != nil {
		return err
	}
	fresh := false
	if !store.IsPostgres(e.DB) {
		_, statErr := os.Stat(e.DB)
		fresh = errors.Is(statErr, fs.ErrNotExist)
	}
	s, r, err := cmdstore.Open(ctx, e, store.Options{}, true)
	if err != nil {
		if fresh {
			removeSQLite(e.DB)
		}
		return err
	}
	committed := 0
	defer func() {
		s.Close()
		if fresh && committed == 0 {
			removeSQLite(e.DB)
		}
	}()
	if err := q.prepare(r); err != nil {
		return err
	}
	q.DB, q.In = e.DB, e.In
	return e.WithBar("import", progress.Bytes, func(p progress.Func, out, _ io.Writer) error {
		q.Progress, q.Out = p, out
		imp := New(s, q.Options)
		err := imp.Run(ctx, q.Files, q.Demo)
		committed = imp.Committed()
		return err
	})
}

// removeSQLite removes an SQLite database file with its journal files.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

// prepare reads the --map-file and the --images into the options, and checks the label
// fields the maps name against the rubric r.
func (q *ImportCommand) prepare(r *rubric.Rubric) error {
	if q.MapFile != "" {
		// A map file is data, like the files it maps: its problems exit 1, naming it.
		builtin, _ := fs.Sub(annotations.Maps, "maps")
		fromFile, err := ingest.ReadMapFileOr(q.MapFile, builtin)
		if err != nil {
			return fmt.Errorf("--map-file %w", err)
		}
		if q.Map, err = ingest.ParseFieldPaths(append(fromFile, q.Maps...)); err == nil && q.From == "" {
			err = ingest.CheckTurnMap(q.Map)
		}
		if err != nil {
			return fmt.Errorf("--map-file %s: %w", q.MapFile, err)
		}
	}
	if q.ImagesDir != "" {
		dir, err := filepath.Abs(q.ImagesDir)
		if err != nil {
			return err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--images %s: not a folder", q.ImagesDir)
		}
		q.Images = &ingest.ImageDir{Dir: dir}
		if q.ImageMap != "" {
			if q.Images.ByID, err = ingest.ReadImageMap(q.ImageMap); err != nil {
				return fmt.Errorf("--image-map %w", err)
			}
		}
	}
	q.Rubric = r
	var err error
	if q.Actions, err = rubric.ParseActions(annotations.Actions); err != nil {
		return err
	}
	if err := ingest.CheckLabelFields(q.Map, func(n string) bool { _, ok := r.Field(n); return ok }, r.FieldNames()); err != nil {
		return usage.Wrap(err)
	}
	return nil
}

// ImportScoresCommand is m3eval import-scores' options: the score importer's ScoreOptions
// and the flags as given, which Check turns into ScoreOptions (Run sets In, Out and Progress
// from its IO).
type ImportScoresCommand struct {
	ScoreOptions
	Files              []string // the FILE arguments
	Maps               []string // --map FIELD=PATH
	MaxRecord, MaxCell string   // the limits as given (sizes such as 64MB)
}

// NewImportScoresCommand has the default limits, as the flags give them, and fails a file
// that lists a sample twice.
func NewImportScoresCommand() *ImportScoresCommand {
	return &ImportScoresCommand{MaxRecord: ingest.FormatSize(ingest.DefaultMaxRecord), MaxCell: ingest.FormatSize(ingest.DefaultMaxCell),
		ScoreOptions: ScoreOptions{OnDuplicate: DuplicatesError}}
}

// AddFlags defines the flags of m3eval import-scores on fs.
func (q *ImportScoresCommand) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&q.Judge, "judge", "", "name of the automatic judge the scores belong to (required)")
	f.BoolVar(&q.Replace, "replace", false, "overwrite scores that changed since the last import")
	f.StringArrayVar(&q.Maps, "map", nil, "FIELD=PATH: read JSON records of any layout, sample_id and rubric fields from JSON paths, e.g. sample_id=score_id, overall_quality=result.judge; repeatable")
	f.BoolVar(&q.SkipUnknown, "skip-unknown", false, "skip (and count) scores of samples that are not imported, instead of failing the file")
	cmdutil.EnumVar(f, &q.OnDuplicate, "on-duplicate", DuplicatesError, DuplicateChoices, "a sample listed twice in a file: error (naming it), or keep the first or last record")
	f.StringVar(&q.MaxRecord, "max-record-size", q.MaxRecord, "the longest record (a CSV row, a JSON line or value) read; a longer one fails the file")
	f.StringVar(&q.MaxCell, "max-cell-size", q.MaxCell, "the longest value (a CSV cell, a JSON string) read; a longer one fails the file")
}

// Check finds the usage errors of the flags and arguments before the database is opened
// (usage.Err), and reads the limits and, against the rubric r, the --map flags.
func (q *ImportScoresCommand) Check(r *rubric.Rubric) error {
	if q.Judge = strings.TrimSpace(q.Judge); q.Judge == "" {
		return usage.Errorf("--judge NAME is required: the scores are stored as that judge's")
	}
	for _, l := range []struct {
		flag, value string
		dst         *int64
	}{{"--max-record-size", q.MaxRecord, &q.Limits.MaxRecord}, {"--max-cell-size", q.MaxCell, &q.Limits.MaxCell}} {
		var err error
		if *l.dst, err = ingest.ParseSize(l.value); err != nil {
			return usage.Errorf("%s %v", l.flag, err)
		}
	}
	if err := oneStdin(q.Files); err != nil {
		return err
	}
	var err error
	if q.Map, err = ingest.ParseScoreMap(q.Maps, r); err != nil {
		return usage.Wrap(err)
	}
	return nil
}

// Run is m3eval import-scores once its flags are parsed: it checks the command against the
// rubric, opens the database and imports the Files as the judge's scores under a progress
// bar, each file in one transaction, one line per file said on e's output.
func (q *ImportScoresCommand) Run(ctx context.Context, e *cmdio.IO) error {
	r, err := e.LoadRubric()
	if err != nil {
		return err
	}
	if err := q.Check(r); err != nil {
		return err
	}
	s, r, err := cmdstore.Open(ctx, e, store.Options{}, false)
	if err != nil {
		return err
	}
	defer s.Close()
	q.Rubric, q.In = r, e.In
	return e.WithBar("import-scores", progress.Bytes, func(p progress.Func, out, _ io.Writer) error {
		q.Progress, q.Out = p, out
		return Scores(ctx, s, q.Files, q.ScoreOptions)
	})
}

// oneStdin fails when standard input (-) is given for more than one file: it can be read
// only once.
func oneStdin(paths []string) error {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	if n > 1 {
		return usage.Errorf("standard input (-) can be given for one file only")
	}
	return nil
}
