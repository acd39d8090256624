package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// IsDelimited reports whether name is a CSV or TSV file, by its extension. import --map
// reads the rows of such a file as records (a ratings table item,rater,score).
func IsDelimited(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv":
		return true
	}
	return false
}

// DelimitedAsJSON reads a CSV (TSV for .tsv) file with a header row as JSON Lines. Each row
// becomes an object of the header's names to its cells, so --map paths name columns
// (label.overall_quality=score). An empty cell is null (no value). Each object stands on the
// line where its row starts in the file, blank lines before it, so that errors name the
// file's own line even when a quoted cell spans several. encoding/csv parses; this only
// re-encodes, as no library turns CSV rows into a JSON stream.
func DelimitedAsJSON(name string, r io.Reader) io.Reader {
	cr := csv.NewReader(r)
	if strings.EqualFold(filepath.Ext(name), ".tsv") {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.FieldsPerRecord = -1
	return &delimitedJSON{name: name, cr: cr}
}

type delimitedJSON struct {
	name   string
	cr     *csv.Reader
	header []string
	line   int // lines written so far
	buf    bytes.Buffer
	err    error
}

func (d *delimitedJSON) Read(p []byte) (int, error) {
	for d.buf.Len() == 0 && d.err == nil {
		d.err = d.fill()
	}
	if d.buf.Len() > 0 {
		return d.buf.Read(p)
	}
	return 0, d.err
}

func (d *delimitedJSON) bad(line int, format string, args ...any) error {
	return &Error{File: d.name, Line: line, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
}

// fill writes the next row's object into buf.
func (d *delimitedJSON) fill() error {
	row, err := d.cr.Read()
	if err == io.EOF {
		if d.header == nil {
			return d.bad(1, "an empty file: no header row (the column names)")
		}
		return io.EOF
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return d.bad(pe.StartLine, "%v", pe.Err)
	}
	if err != nil {
		return err
	}
	start, _ := d.cr.FieldPos(0)
	if d.header == nil {
		d.header = append([]string(nil), row...)
		d.header[0] = strings.TrimPrefix(d.header[0], "\ufeff")
		for i, h := range d.header {
			d.header[i] = strings.TrimSpace(h)
			if d.header[i] == "" {
				return d.bad(start, "column %d of the header has no name", i+1)
			}
			for _, o := range d.header[:i] {
				if o == d.header[i] {
					return d.bad(start, "the header names column %s twice", o)
				}
			}
		}
		d.buf.WriteString(strings.Repeat("\n", start-d.line))
		d.line = start
		return nil
	}
	if len(row) != len(d.header) {
		return d.bad(start, "%d cells for the header's %d columns", len(row), len(d.header))
	}
	obj := make(map[string]any, len(row))
	for i, cell := range row {
		if strings.TrimSpace(cell) == "" {
			obj[d.header[i]] = nil
		} else {
			obj[d.header[i]] = cell
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	d.buf.WriteString(strings.Repeat("\n", max(start-1-d.line, 0)))
	d.buf.Write(b)
	d.buf.WriteByte('\n')
	d.line = start
	return nil
}
