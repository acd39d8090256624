package ingest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
)

// Sink stores records; the store's Importer is one. Outcomes index Counts.
type Sink interface {
	// PutTurns stores a batch; on error len(ids) is the index of the turn that failed.
	PutTurns(ts []dataset.Turn) (ids []int64, outcomes []dataset.Outcome, err error)
	PutLabel(turnID int64, l *dataset.Label) (dataset.Outcome, error)
}

// LabelBatcher is a Sink that stores many labels in one call, with PutLabel's outcomes and
// errors: Import hands it each batch's labels together (#44: a statement or two per batch
// instead of several per label). On error, len(outcomes) is the index of the label that failed.
type LabelBatcher interface {
	PutLabels(turnIDs []int64, ls []*dataset.Label) (outcomes []dataset.Outcome, err error)
}

// Flusher is a Sink that can end its current transaction; Import calls Flush before it waits
// for the parser, so that no lock is held while the input is slow.
type Flusher interface {
	Flush() error
}

// flushAfter is how long the writer waits for the parser before it flushes the sink. The
// parser is normally batches ahead; a wait this long means the input itself is slow.
const flushAfter = 5 * time.Millisecond

// Counts tallies an import by outcome (indexed by dataset.Outcome): new, unchanged, replaced.
type Counts struct {
	Turns, Labels [3]int
	// MissingImages counts the turns' local image files that do not exist or cannot be read;
	// MissingList names the first ten.
	MissingImages int
	MissingList   []string
}

// String is the line m3eval import prints for a file.
func (c Counts) String() string {
	const in, un, re = dataset.Inserted, dataset.Unchanged, dataset.Replaced
	return fmt.Sprintf("%d turns new, %d unchanged, %d replaced; %d labels new, %d unchanged, %d replaced",
		c.Turns[in], c.Turns[un], c.Turns[re], c.Labels[in], c.Labels[un], c.Labels[re])
}

// batchSize is how many records travel together from the parser to the writer.
const batchSize = 256

type batch struct {
	recs []Record
	// labels are the records' labels read against the rubric, in order, when the sink takes
	// them in batches: on the parser's goroutine, off the writer's.
	labels []labelRead
	err    error // the error that ended parsing, after recs
}

// labelRead is a label as Label reads it, or why it does not read.
type labelRead struct {
	l   *dataset.Label
	err error
}

// Import reads every record of r and puts it into sink, stopping at the first error (the
// caller rolls the sink back then, so a file lands whole or not at all). Parsing runs in its
// own goroutine, a few batches ahead of the writes, so JSON decoding and SQLite use both cores
// while memory stays bounded.
func Import(ctx context.Context, sink Sink, name string, r io.Reader, lo LabelOptions) (Counts, error) {
	return ImportFrom(ctx, sink, name, NewReader(name, r), lo)
}

// Source yields records one at a time, io.EOF after the last: a Reader of m3eval's own
// records or one of the converting readers of other formats (see Open).
type Source interface {
	Next() (*Record, error)
}

// ImportFrom is Import for any Source.
func ImportFrom(ctx context.Context, sink Sink, name string, rd Source, lo LabelOptions) (Counts, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, 4)
	missing := &missingImages{seen: map[string]bool{}} // written by the parser, read after it ends
	lb, batched := sink.(LabelBatcher)
	go func() {
		defer close(batches)
		var images *ImageResolver
		if lo.ImageBase != "" {
			images = NewImageResolver(lo.ImageBase, func(p string) bool { _, err := os.Stat(p); return err == nil })
		}
		b := batch{recs: make([]Record, 0, batchSize)}
		for {
			rec, err := rd.Next()
			if err == nil {
				err = checkAction(name, rec, lo)
			}
			if err == nil {
				if images != nil && len(rec.Turn.Images) > 0 {
					rec.Turn.Images = append([]string(nil), rec.Turn.Images...) // episode images are shared
					images.Resolve(rec.Turn.Images)
				}
				if images != nil { // a file's images (the demo's are built in)
					missing.check(rec.Turn.Images)
				}
				rec.Turn.Sum = rec.Turn.Hash() // here, off the writer's goroutine
				b.recs = append(b.recs, *rec)
				if batched {
					r := &b.recs[len(b.recs)-1]
					for j := range r.Labels {
						l, err := Label(name, r, r.Labels[j], lo)
						b.labels = append(b.labels, labelRead{l, err})
					}
				}
				if len(b.recs) < batchSize {
					continue
				}
			} else if err != io.EOF {
				b.err = err
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
			b = batch{recs: make([]Record, 0, batchSize)}
		}
	}()
	var c Counts
	turns := make([]dataset.Turn, 0, batchSize)
	flusher, _ := sink.(Flusher)
	for {
		var b batch
		var ok bool
		select {
		case b, ok = <-batches:
		case <-time.After(flushAfter):
			// The input is slow (a pipe, a network disk): let the sink end its transaction
			// rather than hold it while waiting.
			if flusher != nil {
				if err := flusher.Flush(); err != nil {
					return c, fmt.Errorf("%s: %w", name, err)
				}
			}
			b, ok = <-batches
		}
		if !ok {
			c.MissingImages, c.MissingList = missing.n, missing.list
			break
		}
		if err := ctx.Err(); err != nil {
			return c, err
		}
		turns = turns[:0]
		for i := range b.recs {
			turns = append(turns, b.recs[i].Turn)
		}
		ids, outcomes, err := sink.PutTurns(turns)
		for _, o := range outcomes {
			c.Turns[o]++
		}
		if err != nil {
			if len(ids) < len(b.recs) {
				return c, fmt.Errorf("%s: %w", b.recs[len(ids)].Where(name), err)
			}
			// Every turn was written, and ending the transaction failed (a full disk, an
			// interrupt): no record is at fault.
			return c, fmt.Errorf("%s: %w", name, err)
		}
		if batched {
			if err := putLabelBatch(lb, name, b.recs, b.labels, ids, &c); err != nil {
				return c, err
			}
		} else {
			for i := range b.recs {
				if err := putLabels(sink, name, &b.recs[i], ids[i], lo, &c); err != nil {
					return c, err
				}
			}
		}
		if b.err != nil {
			return c, b.err
		}
	}
	return c, ctx.Err()
}

// checkAction refuses an action type the catalogue does not have, naming the nearest one:
// a misspelled type would otherwise import silently and lose the fields its rules decide.
func checkAction(name string, rec *Record, lo LabelOptions) error {
	a := rec.Turn.ActionType
	if lo.Actions == nil || lo.AllowUnknownActions {
		return nil
	}
	if _, ok := lo.Actions[a]; ok {
		return nil
	}
	hint := ""
	if near, ok := lo.Actions.Nearest(a); ok {
		hint = "; did you mean " + near + "?"
	}
	return &Error{File: name, Line: rec.Line, Row: rec.Row, Field: "action_type",
		Err: fmt.Errorf("%w: %s: not an action type%s (--allow-unknown-actions imports it; the rubric then asks every field)", ErrBadRecord, a, hint)}
}

// missingImages finds the local image files of the turns that cannot be read, each path once.
type missingImages struct {
	seen map[string]bool
	n    int
	list []string
}

func (m *missingImages) check(images []string) {
	for _, p := range images {
		if p == "" || strings.Contains(p, "://") || strings.HasPrefix(p, "data:") || m.seen[p] {
			continue
		}
		m.seen[p] = true
		f, err := os.Open(p)
		if err == nil {
			f.Close()
			continue
		}
		m.n++
		if len(m.list) < 10 {
			m.list = append(m.list, p)
		}
	}
}

func putLabels(sink Sink, name string, rec *Record, id int64, lo LabelOptions, c *Counts) error {
	for _, raw := range rec.Labels {
		l, err := Label(name, rec, raw, lo)
		if err != nil {
			return err
		}
		outcome, err := sink.PutLabel(id, l)
		if err != nil {
			return fmt.Errorf("%s:%d: %s: %w", name, raw.Line, raw.Field, err)
		}
		c.Labels[outcome]++
	}
	return nil
}

// putLabelBatch stores the labels of a batch of records (read[k] is the k-th label of the
// batch, read by the parser), in order, with one PutLabels call. A label that does not read
// stops the batch there, after the labels before it are stored: the error reported is the
// first one in file order, as putLabels gives it.
func putLabelBatch(sink LabelBatcher, name string, recs []Record, read []labelRead, ids []int64, c *Counts) error {
	var turnIDs []int64
	var ls []*dataset.Label
	var raws []*RawLabel
	var readErr error
	k := 0
read:
	for i := range recs {
		for j := range recs[i].Labels {
			raw := &recs[i].Labels[j]
			l, err := read[k].l, read[k].err
			k++
			if err != nil {
				readErr = err
				break read
			}
			turnIDs, ls, raws = append(turnIDs, ids[i]), append(ls, l), append(raws, raw)
		}
	}
	if len(ls) > 0 {
		outcomes, err := sink.PutLabels(turnIDs, ls)
		for _, o := range outcomes {
			c.Labels[o]++
		}
		if err != nil {
			if k := len(outcomes); k < len(raws) {
				return fmt.Errorf("%s:%d: %s: %w", name, raws[k].Line, raws[k].Field, err)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return readErr
}
