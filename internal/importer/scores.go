package importer

import (
	"context"
	"errors"
	"fmt"
	"github.com/m3bench/m3eval/internal/dataset"
	"io"

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
}

// maxScoreText is longer than any score or choice a rubric spells.
const maxScoreText = 256

// Scores imports the judge's score files one after the other, each in one transaction, and
// prints the counts of each.
func Scores(ctx context.Context, s Store, paths []string, o ScoreOptions) error {
	files := progress.NewFiles(paths, o.Progress)
	for _, path := range paths {
		c, name, err := scoresFile(ctx, s, path, files, o)
		if err != nil {
			return err
		}
		files.Next()
		fmt.Fprintf(o.Out, "%s: judge %s: %d scores new, %d unchanged, %d replaced\n",
			name, o.Judge, c[dataset.Inserted], c[dataset.Unchanged], c[dataset.Replaced])
	}
	return nil
}

// scoresFile reads one file into the store in one transaction and returns the counts by
// outcome and the name errors give the file.
func scoresFile(ctx context.Context, s Store, path string, files *progress.Files, o ScoreOptions) ([3]int, string, error) {
	var counts [3]int
	f, name, err := ingest.OpenInput(path, o.In) // named in errors as m3eval import names its files
	if err != nil {
		return counts, name, fmt.Errorf("import-scores: %w", err)
	}
	defer f.Close()
	im, err := s.BeginScoreImport(ctx, o.Judge, store.ImportOptions{Replace: o.Replace})
	if err != nil {
		return counts, name, err
	}
	defer im.Rollback()
	// Sample id → line, to catch a sample listed twice; the only memory that grows with the
	// file, a few bytes per sample.
	seen := map[string]int{}
	err = ingest.ReadScoresLimits(name, files.Reader(f), o.Rubric, o.Limits, func(rec *ingest.ScoreRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		fail := func(field string, err error) error {
			return &ingest.Error{File: name, Line: rec.Line, Field: field, Err: err}
		}
		if first, dup := seen[rec.Sample]; dup {
			return fail("sample_id", fmt.Errorf("%w: %s is listed twice in this file (first on line %d)", ingest.ErrBadRecord, ingest.Excerpt(rec.Sample), first))
		}
		seen[rec.Sample] = rec.Line
		turnID, item, err := im.Turn(rec.Sample)
		if errors.Is(err, store.ErrNotFound) {
			return fail("sample_id", fmt.Errorf("%w: %s is not in the database (import its turn first)", ingest.ErrBadRecord, ingest.Excerpt(rec.Sample)))
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
				return fail(v.Field, err)
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
	})
	if err != nil {
		return counts, name, err
	}
	return counts, name, im.Commit()
}
