// Package ingest reads the record files m3eval imports — turn records, episode records and
// labeled samples, as a JSON array or as JSON Lines — and the conversation logs of other
// tools (OpenAI chat logs, ShareGPT, VLMEvalKit predictions, lmms-eval samples, any JSON by
// --map paths), and automatic judges' score files (JSON, JSON Lines or CSV), one record at a
// time, so memory stays flat however large the file. Every error is an Error that names the
// file, the line (a spreadsheet's row) and the field.
package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/lineindex"
)

// Error is a problem with one record, located by file, line and field.
type Error struct {
	File  string
	Line  int
	Field string // dotted path, "" for the record as a whole
	Err   error
	// Row says Line is a spreadsheet row (xlsx), not a line of text.
	Row bool
}

// Error implements error: "file:line: field: what".
func (e *Error) Error() string {
	loc := fmt.Sprintf("%s:%d", e.File, e.Line)
	if e.Row {
		loc = fmt.Sprintf("%s: row %d", e.File, e.Line)
	}
	if e.Field != "" {
		return loc + ": " + e.Field + ": " + e.Err.Error()
	}
	return loc + ": " + e.Err.Error()
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// ErrBadRecord marks input that is not a valid record.
var ErrBadRecord = errors.New("bad record")

// Record is one turn read from a file, with any labels it carried.
type Record struct {
	Line   int  // where the record (for episodes: the episode) starts
	Row    bool // Line is a spreadsheet row
	Turn   dataset.Turn
	Labels []RawLabel
}

// Where locates the record in file name for messages, as "name:line" or "name: row n".
func (r *Record) Where(name string) string {
	if r.Row {
		return fmt.Sprintf("%s: row %d", name, r.Line)
	}
	return fmt.Sprintf("%s:%d", name, r.Line)
}

// RawLabel is a label as it stood in the file, not yet checked against a rubric.
type RawLabel struct {
	Field  string // "human_annotation" or "human_annotations[2]", for error messages
	Line   int
	Fields map[string]json.RawMessage
	// Mapped gives, for a label read by --map, the source path of each key, so that errors
	// name what the file calls it.
	Mapped map[string]string
}

// Reader reads records from one file.
type Reader struct {
	name    string
	lines   *lineindex.Reader
	br      *bufio.Reader
	dec     *json.Decoder
	inArray bool
	pending []Record // the rest of an episode record's turns

	// JSON Lines are read line by line: the line number is exact and each record is parsed
	// once, where a json.Decoder would scan it twice. A file of objects that span lines falls
	// back to the decoder.
	lineMode bool
	lineNo   int
	// maxRecord is the longest record read, in bytes (Limits.MaxRecord).
	maxRecord int64
	records   int    // whole-line records read so far
	long      []byte // a line longer than the read buffer, put together

	// convert turns one top-level JSON value into records; nil reads m3eval's own records.
	// Importers of other formats (openai, sharegpt, ...) set it.
	convert func(line int, raw []byte) ([]Record, error)
	// atEnd, when set, checks the whole file after its last record (a --map path that no
	// record held); its error fails the file.
	atEnd func() error
}

// NewConvertingReader returns a Reader of the records that convert makes of r's JSON values.
// It reads the top-level values of r (a JSON array or JSON Lines) and hands each to convert,
// which returns the value's records (possibly none).
func NewConvertingReader(name string, r io.Reader, convert func(line int, raw []byte) ([]Record, error)) *Reader {
	rd := NewReader(name, r)
	rd.convert = convert
	return rd
}

// Name is the file name used in errors.
func (r *Reader) Name() string { return r.name }

// NewReader returns a Reader of the m3eval records in r. name is used in errors.
func NewReader(name string, r io.Reader) *Reader {
	lc := lineindex.New(r, 0)
	return &Reader{name: name, lines: lc, br: bufio.NewReaderSize(lc, 256<<10), maxRecord: DefaultMaxRecord}
}

// SetLimits sets the longest record the reader takes (Limits.MaxRecord).
func (r *Reader) SetLimits(l Limits) { r.maxRecord = l.withDefaults().MaxRecord }

// tooLong is the error of a record past maxRecord.
func (r *Reader) tooLong(line int) error {
	return &Error{File: r.name, Line: line, Err: fmt.Errorf("%w: a record longer than %s (limit: --max-record-size %s)",
		ErrLimit, FormatSize(r.maxRecord), FormatSize(r.maxRecord))}
}

func (r *Reader) errorf(line int, field string, format string, args ...any) *Error {
	return &Error{File: r.name, Line: line, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
}

// start looks at the first byte that is not white space: '[' opens a JSON array of records,
// '{' starts JSON Lines (or any sequence of JSON objects).
func (r *Reader) start() error {
	b, err := firstByte(r.br)
	if err == io.EOF {
		return io.EOF
	}
	var ie *Error
	if errors.As(err, &ie) {
		return err // already names its line (a CSV row read as JSON)
	}
	if err != nil {
		return &Error{File: r.name, Line: 1, Err: err}
	}
	r.dec = json.NewDecoder(&capReader{r: r.br, rd: r})
	r.dec.UseNumber()
	switch b {
	case '[':
		r.inArray = true
		_, err := r.dec.Token()
		return r.syntax(err)
	case '{':
		r.lineMode = true
		r.lineNo = r.lines.LineAt(r.lines.Consumed()-int64(r.br.Buffered())) - 1
		return nil
	}
	return r.errorf(r.lines.LineAt(r.lines.Consumed()-int64(r.br.Buffered())), "", "expected a JSON array or JSON objects, found %q", b)
}

// firstByte is the one format sniffer of the readers: it skips white space and a UTF-8 byte
// order mark and returns the byte that follows without consuming it ('[' or '{' starts
// JSON), or io.EOF when nothing follows.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.Discard(1)
			continue
		case 0xEF: // a UTF-8 byte order mark
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				br.Discard(3)
				continue
			}
		}
		return b[0], nil
	}
}

// Next returns the next record, or io.EOF after the last.
func (r *Reader) Next() (*Record, error) {
	rec, err := r.next()
	if err == io.EOF && r.atEnd != nil {
		check := r.atEnd
		r.atEnd = nil
		if cerr := check(); cerr != nil {
			return nil, cerr
		}
	}
	return rec, err
}

func (r *Reader) next() (*Record, error) {
	if len(r.pending) > 0 {
		rec := r.pending[0]
		r.pending = r.pending[1:]
		return &rec, nil
	}
	if r.dec == nil {
		if err := r.start(); err != nil {
			return nil, err
		}
	}
	if r.lineMode {
		return r.nextLine()
	}
	for {
		rec, err := r.nextValue()
		if err != nil || rec != nil {
			return rec, err
		}
		// A value without records (a converter skipped it): read on.
	}
}

// nextValue reads one value in decoder mode; nil, nil when it held no records.
func (r *Reader) nextValue() (*Record, error) {
	if r.inArray && !r.dec.More() {
		if _, err := r.dec.Token(); err != nil {
			return nil, r.syntax(err)
		}
		if _, err := r.dec.Token(); err != io.EOF {
			return nil, r.errorf(r.lineAt(r.dec.InputOffset()), "", "unexpected data after the closing ]")
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	if err := r.dec.Decode(&raw); err != nil {
		if err == io.EOF && !r.inArray {
			return nil, io.EOF
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, r.errorf(r.lineAt(r.dec.InputOffset()), "", "the file ends inside a record")
		}
		return nil, r.syntax(err)
	}
	// The decoder stands just after the value; the value starts len(raw) bytes before.
	line := r.lineAt(r.dec.InputOffset() - int64(len(raw)))
	var recs []Record
	var err error
	if r.convert != nil {
		recs, err = r.convert(line, raw)
	} else {
		recs, err = r.parse(line, raw)
	}
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	r.pending = recs[1:]
	return &recs[0], nil
}

// nextLine reads one record of a JSON Lines file.
func (r *Reader) nextLine() (*Record, error) {
	for {
		line, err := r.readLine()
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		var ie *Error
		if errors.As(err, &ie) {
			return nil, err
		}
		if err != nil && err != io.EOF {
			return nil, &Error{File: r.name, Line: r.lineNo + 1, Err: err}
		}
		r.lineNo++
		atEOF := err == io.EOF
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		if r.convert != nil {
			recs, err := r.convert(r.lineNo, trimmed)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				if se.Offset >= int64(len(trimmed)) && r.records == 0 {
					return r.fallBackToDecoder(line, !atEOF) // as for m3eval's records below
				}
				return nil, r.errorf(r.lineNo, "", "not valid JSON: %v", err)
			}
			if err != nil {
				return nil, err
			}
			if len(recs) == 0 {
				continue
			}
			r.records++
			r.pending = recs[1:]
			return &recs[0], nil
		}
		var rec recordJSON
		if err := unmarshalRecord(trimmed, &rec); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				if se.Offset >= int64(len(trimmed)) && r.records == 0 {
					// A value cut by a line break: not one object per line, so read the
					// rest as a stream of JSON values. After whole-line records, it is a
					// broken record, reported on its own line, not where the decoder would
					// give up.
					return r.fallBackToDecoder(line, !atEOF)
				}
				return nil, r.errorf(r.lineNo, "", "not valid JSON: %v", err)
			}
			return nil, r.fieldError(r.lineNo, "", err)
		}
		recs, err := r.build(r.lineNo, &rec)
		if err != nil {
			return nil, err
		}
		r.records++
		r.pending = recs[1:]
		return &recs[0], nil
	}
}

// readLine returns the next line without its newline, however long.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if int64(len(r.long)) > r.maxRecord {
				return nil, r.tooLong(r.lineNo + 1)
			}
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if int64(len(line)) > r.maxRecord {
		return nil, r.tooLong(r.lineNo + 1)
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}

// fallBackToDecoder continues with a json.Decoder from the line just read; newline says
// whether a line break ended it (not at the end of the file), so none is made up.
func (r *Reader) fallBackToDecoder(first []byte, newline bool) (*Record, error) {
	r.lineMode = false
	startLine := r.lineNo
	again := append([]byte(nil), first...)
	if newline {
		again = append(again, '\n')
	}
	rest := io.MultiReader(bytes.NewReader(again), r.br)
	r.lines = lineindex.New(rest, startLine-1)
	r.br = bufio.NewReaderSize(r.lines, 256<<10)
	r.dec = json.NewDecoder(&capReader{r: r.br, rd: r})
	r.dec.UseNumber()
	return r.Next()
}

func (r *Reader) lineAt(off int64) int { return r.lines.LineAt(off) }

// capReader feeds the json.Decoder of a file of JSON values, and fails once the decoder
// holds more than maxRecord bytes beyond the last value it returned: the decoder keeps a
// whole value in memory. (Written by hand: encoding/json has no limit of its own.)
type capReader struct {
	r    io.Reader
	rd   *Reader
	read int64 // bytes given to the decoder, whose InputOffset counts from the same start
}

func (c *capReader) Read(p []byte) (int, error) {
	// Small reads: the decoder then holds at most capRead bytes past the value it scans.
	const capRead = 64 << 10
	if len(p) > capRead {
		p = p[:capRead]
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	if c.rd.dec != nil && c.read-c.rd.dec.InputOffset() > c.rd.maxRecord+capRead {
		// None of the data: the decoder reports a read error only once it needs more, and
		// with these bytes it might complete the value.
		return 0, c.rd.tooLong(c.rd.lineAt(c.rd.dec.InputOffset()))
	}
	return n, err
}

func (r *Reader) syntax(err error) error {
	if err == nil {
		return nil
	}
	var ie *Error
	if errors.As(err, &ie) {
		return err // a record past the limit (capReader)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return r.errorf(r.lineAt(se.Offset), "", "not valid JSON: %v", se)
	}
	return &Error{File: r.name, Line: r.lineAt(r.dec.InputOffset()), Err: err}
}
