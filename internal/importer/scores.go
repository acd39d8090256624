package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"

	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// ScoreOptions control an import of an automatic judge's scores.
type ScoreOptions struct {
	Rubric  *rubric.Rubric
	Judge   string // the scores are stored as this judge's
	Replace bool   // overwrite scores that changed since the last import
	Out     io.Writer
	In      io.Reader // standard input, for the file "-"
	// Progress is told the bytes read of all files and their total size (nil: nothing).
	Progress progress.Func
	// Limits bound a record's and a value's size, as import's (zero: ingest's defaults).
	Limits ingest.Limits
	// Map reads JSON records of the judge's own layout (nil: m3eval's).
	Map *ingest.ScoreMap
	// SkipUnknown skips, and counts, scores of samples that are not imported, instead of
	// failing the file.
	SkipUnknown bool
	// OnDuplicate says what a sample listed twice in a file does.
	OnDuplicate Duplicates
}

// Duplicates is what import-scores does with a sample listed twice in one file.
type Duplicates string

// The choices of --on-duplicate.
const (
	DuplicatesError Duplicates = "error" // fail the file, naming the sample and both lines
	DuplicatesFirst Duplicates = "first" // keep the first record of the sample
	DuplicatesLast  Duplicates = "last"  // keep the last record of the sample
)

// DuplicateChoices lists --on-duplicate's values.
var DuplicateChoices = []Duplicates{DuplicatesError, DuplicatesFirst, DuplicatesLast}

// fileCounts is what one score file did.
type fileCounts struct {
	outcomes   [3]int
	unknown    int      // records of samples not imported, skipped (SkipUnknown)
	duplicates []string // samples listed more than once, each once, in file order
}

// maxScoreText is longer than any score or choice a rubric spells.
const maxScoreText = 256

// Scores imports the judge's score files one after the other, each in one transaction, and
// prints the counts of each.
func Scores(ctx context.Context, s *store.Store, paths []string, o ScoreOptions) error {
	files := progress.NewFiles(paths, o.Progress)
	for _, path := range paths {
		fc, name, err := scoresFile(ctx, s, path, files, o)
		if err != nil {
			return err
		}
		files.Next()
		c := fc.outcomes
		fmt.Fprintf(o.Out, "%s: judge %s: %d scores new, %d unchanged, %d replaced\n",
			name, o.Judge, c[dataset.Inserted], c[dataset.Unchanged], c[dataset.Replaced])
		if fc.unknown > 0 {
			fmt.Fprintf(o.Out, "%s: %d records skipped: their samples are not imported (--skip-unknown)\n", name, fc.unknown)
		}
		if n := len(fc.duplicates); n > 0 {
			fmt.Fprintf(o.Out, "%s: %d samples listed more than once, the %s record kept (--on-duplicate %s): %s\n",
				name, n, o.OnDuplicate, o.OnDuplicate, firstIDs(fc.duplicates, 10))
		}
	}
	return nil
}

// scoresFile reads one file into the store in one transaction and returns the counts by
// outcome and the name errors give the file.
func scoresFile(ctx context.Context, s *store.Store, path string, files *progress.Files, o ScoreOptions) (fileCounts, string, error) {
	var fc fileCounts
	counts := &fc.outcomes
	f, name, err := ingest.OpenInput(path, o.In) // named in errors as m3eval import names its files
	if err != nil {
		return fc, name, fmt.Errorf("import-scores: %w", err)
	}
	defer f.Close()
	im, err := s.BeginScoreImport(ctx, o.Judge, store.ImportOptions{Replace: o.Replace})
	if err != nil {
		return fc, name, err
	}
	defer im.Rollback()
	// Sample id → line, to catch a sample listed twice; the only memory that grows with the
	// file, a few bytes per sample.
	seen := map[string]int{}
	put := func(rec *ingest.ScoreRecord) error {
		fail := func(field string, err error) error {
			return &ingest.Error{File: name, Line: rec.Line, Field: field, Err: err}
		}
		turnID, item, err := im.Turn(rec.Sample)
		if errors.Is(err, store.ErrNotFound) {
			if o.SkipUnknown {
				fc.unknown++
				return nil
			}
			return fail("sample_id", fmt.Errorf("%w: %s is not in the database (import its turn first, or pass --skip-unknown)", ingest.ErrBadRecord, ingest.Excerpt(rec.Sample)))
		}
		if err != nil {
			return fail("sample_id", err)
		}
		for _, v := range rec.Values {
			fd, _ := o.Rubric.Field(v.Field) // the reader checked the name
			if len(v.Text) > maxScoreText {
				// No score is this long; the rubric's message would quote it whole.
				return fail(v.Field, fmt.Errorf("%w: not a score of %s: %s", ingest.ErrBadRecord, v.Field, ingest.Excerpt(v.Text)))
			}
			val, err := fd.ParseScore(v.Text, v.Null, item)
			if err != nil {
				return fail(mappedFrom(o.Map, v.Field), err)
			}
			out, err := im.PutScore(turnID, v.Field, val)
			if err != nil {
				return fail(v.Field, err)
			}
			if val != "" || out != dataset.Unchanged { // "no score" where none is stored is not a score
				counts[out]++
			}
		}
		return nil
	}
	// --on-duplicate last keeps each sample's last record: the records wait in memory until
	// the file is read, in the order their samples first appear.
	var last map[string]*ingest.ScoreRecord
	var order []string
	if o.OnDuplicate == DuplicatesLast {
		last = map[string]*ingest.ScoreRecord{}
	}
	err = ingest.ReadScoresWith(name, files.Reader(f), o.Rubric, o.Map, o.Limits, func(rec *ingest.ScoreRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if first, dup := seen[rec.Sample]; dup {
			switch o.OnDuplicate {
			case DuplicatesFirst, DuplicatesLast:
				if first > 0 {
					fc.duplicates = append(fc.duplicates, rec.Sample)
					seen[rec.Sample] = -first // counted once
				}
				if last != nil {
					last[rec.Sample] = copyScore(rec)
				}
				return nil
			default:
				return &ingest.Error{File: name, Line: rec.Line, Field: "sample_id",
					Err: fmt.Errorf("%w: %s is listed twice in this file (first on line %d; --on-duplicate first or last chooses)", ingest.ErrBadRecord, ingest.Excerpt(rec.Sample), first)}
			}
		}
		seen[rec.Sample] = rec.Line
		if last != nil {
			last[rec.Sample] = copyScore(rec)
			order = append(order, rec.Sample)
			return nil
		}
		return put(rec)
	})
	for _, id := range order {
		if err != nil {
			break
		}
		err = put(last[id])
	}
	if err != nil {
		return fc, name, err
	}
	return fc, name, im.Commit()
}

func copyScore(rec *ingest.ScoreRecord) *ingest.ScoreRecord {
	c := *rec
	c.Values = append([]ingest.ScoreValue(nil), rec.Values...)
	return &c
}

// firstIDs lists up to n ids, and how many more there are.
func firstIDs(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}

// mappedFrom names a score field as the user's file holds it: "output.rating (mapped to
// preference)" under --map, so a bad value is found where it is written.
func mappedFrom(m *ingest.ScoreMap, field string) string {
	if m != nil {
		for _, fp := range m.Fields {
			if fp.Field == field {
				return fp.Path + " (mapped to " + field + ")"
			}
		}
	}
	return field
}
