// Package importer runs m3eval import and m3eval import-scores: each file is read by
// internal/ingest and written to the store as one import, which becomes visible whole or
// not at all (on a bad record nothing of that file is written; the store commits it in
// short chunks, so that annotators keep saving meanwhile, and readers see none of it before
// the end), and what was imported is told in one line per file. Each command has one
// request here (Request, ScoreRequest): its flags, their checks, and a Run that the command
// calls once the database is open.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// The store's importer is what ingest.Import fills.
var _ ingest.Sink = (*store.Importer)(nil)

// Options control an import of turn records.
type Options struct {
	Rubric    *rubric.Rubric
	Annotator string // of labels that do not name one
	Store     store.ImportOptions
	From      ingest.Format      // "": detected per file, and the guess printed
	Map       []ingest.FieldPath // any JSON records, each turn field from a path
	DB        string             // the database's path: embedded images go beside it
	Out       io.Writer          // the lines that say what was imported
	In        io.Reader          // standard input, for the file "-"
	// Progress is told the bytes read of all files and their total size (nil: nothing).
	Progress progress.Func
	// Limits bound a record's and an xlsx cell's size (zero: ingest's defaults).
	Limits ingest.Limits
	// Actions is the action-type catalogue a turn's action_type must be in, unless
	// AllowUnknownActions (nil: no check).
	Actions             rubric.Actions
	AllowUnknownActions bool
	// Images finds the pictures of logs that come without them (--images DIR); its
	// folder is then also where relative image paths are resolved.
	Images *ingest.ImageDir
	// Now stamps labels that carry no annotated_at; nil: the current time in UTC, as the
	// store's default clock reads it.
	Now func() time.Time
}

// Importer imports files of turn records, labeled samples and other tools' logs.
type Importer struct {
	s     *store.Store
	o     Options
	media *ingest.Media
	files *progress.Files // reading the files, for Options.Progress
	// committed counts the files whose import was committed, empty ones included.
	committed int
}

// Committed is how many files were imported (committed) so far.
func (imp *Importer) Committed() int { return imp.committed }

// New returns an Importer into s.
func New(s *store.Store, o Options) *Importer {
	o.Store.Rubric = o.Rubric
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	return &Importer{s: s, o: o, media: &ingest.Media{Dir: MediaDir(o.DB)}}
}

// MediaDir is where images embedded in imported logs go: beside the database, named
// after it (m3eval.db -> m3eval-media). A PostgreSQL database has no directory here: its
// images go to the current directory, named after the database (and schema), and every host
// that shows them needs that directory at the same path.
func MediaDir(db string) string {
	if store.IsPostgres(db) {
		return store.BaseName(db) + "-media"
	}
	return strings.TrimSuffix(db, filepath.Ext(db)) + "-media"
}

// gcPercent is the GOGC of an import. The live heap of an import is a few batches of
// records; collecting less often frees the second core for parsing (about +20% records/s
// on 2 cores).
const gcPercent = 400

// memoryLimit is the Go heap an import tries to stay under. Its live heap is a few batches of
// records, far below; but a record near --max-record-size is copied a few times while it is
// read and decoded, and with gcPercent the garbage of those copies would pile up to several
// times that (a 32 MB record took 280 MB). Near the limit the collector runs sooner; it is
// soft, so an import that needs more still gets it.
const memoryLimit = 96 << 20

// Run imports the files one after the other, or the built-in demo episodes when demo is set.
func (imp *Importer) Run(ctx context.Context, paths []string, demo bool) error {
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	if demo {
		return imp.demo(ctx)
	}
	imp.files = progress.NewFiles(paths, imp.o.Progress)
	for _, p := range paths {
		if err := imp.file(ctx, p); err != nil {
			return err
		}
		imp.files.Next()
	}
	return nil
}

func (imp *Importer) file(ctx context.Context, path string) error {
	f, name, err := ingest.OpenInput(path, imp.o.In)
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
	if imp.o.Images != nil {
		base = imp.o.Images.Dir // made absolute by the command
	}
	format := imp.o.From
	r := imp.files.Reader(f)
	switch {
	case len(imp.o.Map) > 0 && format == "":
		format = ingest.FormatMap
		if ingest.IsDelimited(name) {
			r = ingest.DelimitedAsJSON(name, r) // a table's columns are the record's keys
		}
	case format == "":
		var why string
		format, why, r, err = ingest.DetectReaderLimits(name, r, imp.o.Limits)
		switch {
		case errors.Is(err, ingest.ErrNoRecords):
			format = ingest.FormatM3eval // reads nothing, and says so
		case err != nil:
			return fmt.Errorf("import: %w", err)
		default:
			fmt.Fprintf(imp.o.Out, "%s: detected format %s: %s (give --from to choose)\n", textsafe.Line(name), format, why)
		}
	}
	opts := ingest.Options{Format: format, Map: imp.o.Map, Media: imp.media, Limits: imp.o.Limits, Images: imp.o.Images}
	if format == ingest.FormatVLMEvalKit && ingest.IsSheet(name) {
		if len(imp.o.Map) > 0 {
			return fmt.Errorf("import: %s: --map adds to the turns of JSON records; a spreadsheet's columns are the format's", name)
		}
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
func (imp *Importer) demo(ctx context.Context) error {
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
		name = path.Join("annotations", name)
		err = imp.streamFrom(ctx, name, ingest.NewReader(name, f), "")
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// streamFrom imports one source; relative image paths are resolved against imageBase
// when it is set.
func (imp *Importer) streamFrom(ctx context.Context, name string, src ingest.Source, imageBase string) error {
	opts := imp.o.Store
	opts.Source = name
	tx, err := imp.s.BeginImport(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lo := ingest.LabelOptions{Rubric: imp.o.Rubric, Annotator: imp.o.Annotator, Now: imp.o.Now(), ImageBase: imageBase,
		Actions: imp.o.Actions, AllowUnknownActions: imp.o.AllowUnknownActions}
	before := imp.media.Written()
	counts, err := ingest.ImportFrom(ctx, tx, name, src, lo)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	imp.committed++
	out := imp.o.Out
	if counts.Turns == [3]int{} {
		// An empty file, [] or only blank lines: say so, rather than print a row of zeros
		// that looks like an import.
		fmt.Fprintf(out, "%s: no records in the file: imported nothing\n", textsafe.Line(name))
		return nil
	}
	fmt.Fprintf(out, "%s: %s\n", textsafe.Line(name), counts)
	if tx.CommitReplyLost() {
		fmt.Fprintf(out, "%s: the reply to COMMIT was lost, and the import landed (its batch is complete); a rerun would change nothing\n", textsafe.Line(name))
	}
	if n := imp.media.Written() - before; n > 0 {
		fmt.Fprintf(out, "%s: %d embedded images written to %s\n", textsafe.Line(name), n, textsafe.Line(imp.media.Dir))
	}
	if counts.MissingImages > 0 {
		files, them := "image files are", "them"
		if counts.MissingImages == 1 {
			files, them = "image file is", "it"
		}
		fmt.Fprintf(out, "%s: %d %s missing or unreadable (the annotator shows none for %s):\n", textsafe.Line(name), counts.MissingImages, files, them)
		for _, p := range counts.MissingList {
			fmt.Fprintf(out, "  %s\n", textsafe.Line(p))
		}
		if more := counts.MissingImages - len(counts.MissingList); more > 0 {
			fmt.Fprintf(out, "  … and %d more\n", more)
		}
	}
	printStale(out, tx.StaleLabels())
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
