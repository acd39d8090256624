// Package longform reads the long-form CSV files of the agreement oracle
// (item,rater,field,value ratings; item,field,value or item,judge,field,value automatic
// scores) and its schema.json into agree.FieldData. It streams the CSV (RFC 4180 quoting,
// UTF-8) and reports errors as file:line: column: message.
package longform

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
)

// DefaultJudge names the judge of an automatic-score file without a judge column.
const DefaultJudge = "auto"

// ReadSchema reads a schema file:
// {"fields": {"fluency": {"type": "ordinal", "categories": [1,2,3,4,5]},
// "factual": {"type": "nominal", "categories": ["No","Yes"]}}}.
func ReadSchema(path string) ([]agree.Field, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	return ParseSchema(filepath.Base(path), data)
}

// ParseSchema parses the contents of a schema file; name is used in error messages.
func ParseSchema(name string, data []byte) ([]agree.Field, error) {
	var doc struct {
		Fields map[string]struct {
			Type       string            `json:"type"`
			Categories []json.RawMessage `json:"categories"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []agree.Field
	for fname, spec := range doc.Fields {
		var f agree.Field
		switch spec.Type {
		case "ordinal":
			var vals []int64
			for _, raw := range spec.Categories {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw)
				}
				v, ok := agree.ParseInt(strings.TrimSpace(s))
				if !ok {
					return nil, fmt.Errorf("%s: field %s: ordinal category %s is not an integer", name, fname, raw)
				}
				vals = append(vals, v)
			}
			f = agree.NewOrdinal(fname, vals...)
		case "nominal":
			var labels []string
			for _, raw := range spec.Categories {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw)
				}
				labels = append(labels, s)
			}
			f = agree.NewNominal(fname, labels...)
		case "continuous":
			f = agree.NewContinuous(fname)
		default:
			return nil, fmt.Errorf("%s: field %s: type %q is not ordinal, nominal or continuous", name, fname, spec.Type)
		}
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// table is a CSV file whose header has been read and its columns located.
type table struct {
	name string
	r    *csv.Reader
	cols map[string]int
}

func openTable(name string, rd io.Reader, need []string) (*table, error) {
	r := csv.NewReader(rd)
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file (expected a header %s)", name, strings.Join(need, ","))
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	t := &table{name: name, r: r, cols: map[string]int{}}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		t.cols[h] = i
	}
	for _, c := range need {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s:1: header: no column %q (the header must have %s)", name, c, strings.Join(need, ","))
		}
	}
	return t, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// batchRows is the number of records the parsing goroutine hands over at a time.
const batchRows = 4096

type batch struct {
	vals  []string // len(cols) values per record
	lines []int
	err   error
}

// each calls fn for each record with the values of the named columns. Parsing runs on its
// own goroutine, one batch of records ahead of fn, so that CSV decoding and the caller's
// work (interning ids) overlap on two cores.
func (t *table) each(cols []string, fn func(vals []string, line int) error) error {
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = t.cols[c]
	}
	out := make(chan batch, 4)
	free := make(chan batch, 6) // consumed batches come back for reuse
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(out)
		next := func() batch {
			select {
			case b := <-free:
				return batch{vals: b.vals[:0], lines: b.lines[:0]}
			default:
				return batch{vals: make([]string, 0, batchRows*len(cols)), lines: make([]int, 0, batchRows)}
			}
		}
		b := next()
		send := func() bool {
			select {
			case out <- b:
				b = next()
				return true
			case <-done:
				return false
			}
		}
		for {
			rec, err := t.r.Read()
			if err == io.EOF {
				send()
				return
			}
			if err != nil {
				b.err = csvError(t.name, err)
				send()
				return
			}
			line, _ := t.r.FieldPos(0)
			for i, j := range idx {
				if j >= len(rec) {
					b.err = fmt.Errorf("%s:%d: %s: missing (the record has %d fields)", t.name, line, cols[i], len(rec))
					send()
					return
				}
				b.vals = append(b.vals, rec[j])
			}
			b.lines = append(b.lines, line)
			if len(b.lines) == batchRows && !send() {
				return
			}
		}
	}()
	k := len(cols)
	for b := range out {
		for r, line := range b.lines {
			if err := fn(b.vals[r*k:r*k+k], line); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
		select {
		case free <- b:
		default:
		}
	}
	return nil
}

// ReadRatings streams a ratings CSV (header with item, rater, field, value; other columns
// ignored) into b; name is the file name used in error messages.
func ReadRatings(b *agree.Builder, name string, rd io.Reader) error {
	cols := []string{"item", "rater", "field", "value"}
	t, err := openTable(name, rd, cols)
	if err != nil {
		return err
	}
	return t.each(cols, func(v []string, line int) error {
		return b.Add(v[0], v[1], v[2], v[3], agree.Location{File: name, Line: line})
	})
}

// ReadScores streams an automatic-score CSV (header item, field, value, and optionally
// judge) into b. Without a judge column every score belongs to DefaultJudge.
func ReadScores(b *agree.Builder, name string, rd io.Reader) error {
	t, err := openTable(name, rd, []string{"item", "field", "value"})
	if err != nil {
		return err
	}
	if _, ok := t.cols["judge"]; ok {
		return t.each([]string{"judge", "item", "field", "value"}, func(v []string, line int) error {
			return b.AddScore(strings.TrimSpace(v[0]), v[1], v[2], v[3], agree.Location{File: name, Line: line})
		})
	}
	b.AddJudge(DefaultJudge)
	return t.each([]string{"item", "field", "value"}, func(v []string, line int) error {
		return b.AddScore(DefaultJudge, v[0], v[1], v[2], agree.Location{File: name, Line: line})
	})
}

// Options says which files to read.
type Options struct {
	Ratings    string // required
	Auto       string // optional
	Schema     string // optional
	NACategory bool
	// Missing lists further missing codes ("NULL", "-").
	Missing []string
	// Warn, when set, receives the builder's warnings (values that look like missing codes
	// in fields without a schema entry).
	Warn func(string)
}

// Load reads the files of o and returns the fields ready for agree.Analyze.
func Load(o Options) ([]agree.FieldData, error) {
	var schema []agree.Field
	if o.Schema != "" {
		s, err := ReadSchema(o.Schema)
		if err != nil {
			return nil, err
		}
		schema = s
	}
	b, err := agree.NewBuilder(schema)
	if err != nil {
		return nil, err
	}
	b.NACategory = o.NACategory
	b.Missing = o.Missing
	if st, err := os.Stat(o.Ratings); err == nil {
		// A ratings row takes at least about 20 bytes and most items have several rows;
		// over-estimating costs only map slots.
		b.SizeHint(int(min(st.Size()/64, 1<<26)))
	}
	if err := readFile(o.Ratings, func(name string, r io.Reader) error { return ReadRatings(b, name, r) }); err != nil {
		return nil, err
	}
	if o.Auto != "" {
		if err := readFile(o.Auto, func(name string, r io.Reader) error { return ReadScores(b, name, r) }); err != nil {
			return nil, err
		}
	}
	fields, err := b.Build(filepath.Base(o.Ratings))
	if err == nil && o.Warn != nil {
		for _, w := range b.Warnings() {
			o.Warn(filepath.Base(o.Ratings) + ": " + w)
		}
	}
	return fields, err
}

func readFile(path string, fn func(string, io.Reader) error) error {
	if path == "-" { // standard input, as for every file argument of m3eval
		return fn("stdin", bufio.NewReaderSize(os.Stdin, 1<<20))
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// A large buffer: encoding/csv keeps a bufio.Reader it is given instead of wrapping the
	// file in a 4 KiB one.
	return fn(filepath.Base(path), bufio.NewReaderSize(f, 1<<20))
}
