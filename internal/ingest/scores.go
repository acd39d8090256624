package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/m3bench/m3eval/internal/jsonpath"
	"github.com/m3bench/m3eval/internal/lineindex"
	"github.com/m3bench/m3eval/internal/rubric"
)

// ScoreValue is one value of a judge's score record as it stood in the file.
type ScoreValue struct {
	Field string
	Text  string // a JSON string unquoted, a JSON number or a CSV cell as written
	Null  bool   // JSON null
}

// ScoreRecord is one sample's scores from an automatic judge's file (m3eval import-scores).
// ReadScores reuses one record for every call: copy what you keep.
type ScoreRecord struct {
	Line   int
	Sample string
	Values []ScoreValue
}

// checkScoreField checks that a key or column names a field a judge can score.
func checkScoreField(r *rubric.Rubric, key string) error {
	f, ok := r.Field(key)
	if !ok {
		return fmt.Errorf("%w: not a field of the rubric %s", ErrBadRecord, r.Name)
	}
	if f.Kind != rubric.KindScale && f.Kind != rubric.KindChoice {
		return fmt.Errorf("%w: a %s field; judges score scale and choice fields only", ErrBadRecord, f.Kind)
	}
	return nil
}

// ScoreMap says where each JSON record of a score file holds its sample id and its scores
// (import-scores --map). It reads judges' files in their own layout, such as
// {"score_id": 3, "result": {"judge": "4"}}.
// Keys no path names are ignored.
type ScoreMap struct {
	Sample FieldPath
	Fields []FieldPath // Field is a rubric field

	// Per file: which field paths some record holds, and the first record's keys. A
	// path that no record holds is a typo in --map (output.ratng), not a judge that
	// scored nothing: the file fails instead of importing 0 scores with exit 0.
	found     []bool
	firstKeys []string
	read      bool // a record was read
}

// checkFound reports the mapped field paths that no record of the file held.
func (m *ScoreMap) checkFound(name string) error {
	var absent []string
	for i, fp := range m.Fields {
		if !m.found[i] {
			absent = append(absent, fmt.Sprintf("%s (mapped to %s)", fp.Path, fp.Field))
		}
	}
	if len(absent) == 0 || !m.read {
		return nil
	}
	return &Error{File: name, Line: 1, Field: strings.Join(absent, ", "), Err: fmt.Errorf(
		"%w: in no record of the file; check the --map path (the first record's keys: %s)", ErrBadRecord, strings.Join(m.firstKeys, ", "))}
}

// ParseScoreMap parses import-scores --map flags: sample_id=PATH and FIELD=PATH for rubric
// fields. A field not mapped is not read.
func ParseScoreMap(flags []string, r *rubric.Rubric) (*ScoreMap, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	m := &ScoreMap{}
	seen := map[string]bool{}
	for _, f := range flags {
		field, path, ok := strings.Cut(f, "=")
		if !ok || field == "" || path == "" {
			return nil, fmt.Errorf("--map %q: want FIELD=PATH, e.g. sample_id=id", f)
		}
		if seen[field] {
			return nil, fmt.Errorf("--map: %s given twice", field)
		}
		seen[field] = true
		steps, err := parsePath(path)
		if err != nil {
			return nil, fmt.Errorf("--map %q: %w", f, err)
		}
		fp := FieldPath{Field: field, Path: path, steps: steps}
		if field == "sample_id" {
			m.Sample = fp
			continue
		}
		if err := checkScoreField(r, field); err != nil {
			return nil, fmt.Errorf("--map %q: %s: %w (fields: %s)", f, field, err, strings.Join(r.FieldNames(), ", "))
		}
		m.Fields = append(m.Fields, fp)
	}
	if m.Sample.Field == "" {
		return nil, fmt.Errorf("--map: give sample_id=PATH too (which turn each score is of)")
	}
	if len(m.Fields) == 0 {
		return nil, fmt.Errorf("--map: give at least one FIELD=PATH of a rubric field")
	}
	return m, nil
}

// ReadScores streams the records of a score file to fn. The file is a JSON array or JSON
// objects when its first character is [ or {, and CSV otherwise. It reads within the default Limits.
func ReadScores(name string, rd io.Reader, r *rubric.Rubric, fn func(*ScoreRecord) error) error {
	return ReadScoresWith(name, rd, r, nil, Limits{}, fn)
}

// ReadScoresMapped is ReadScores with --map paths. With nil paths the records are in
// m3eval's layout.
// Mapped files are JSON, or a table named .csv or .tsv whose columns the paths name.
func ReadScoresMapped(name string, rd io.Reader, r *rubric.Rubric, m *ScoreMap, fn func(*ScoreRecord) error) error {
	return ReadScoresWith(name, rd, r, m, Limits{}, fn)
}

// ReadScoresWith is ReadScoresMapped within the limits lim. A record is at most
// lim.MaxRecord bytes and a CSV cell or JSON value at most lim.MaxCell (import's
// --max-record-size and --max-cell-size): a 1 GiB cell took 9.87 GB of memory before it was
// refused.
func ReadScoresWith(name string, rd io.Reader, r *rubric.Rubric, m *ScoreMap, lim Limits, fn func(*ScoreRecord) error) error {
	lim = lim.withDefaults()
	if m != nil && IsDelimited(name) {
		rd = DelimitedAsJSON(name, rd) // a judge's table: the paths name its columns
	}
	lc := lineindex.New(rd, 0)
	guard := &recordGuard{r: lc, max: lim.MaxRecord}
	br := bufio.NewReaderSize(guard, 64<<10)
	fn0 := fn
	fn = func(rec *ScoreRecord) error {
		if int64(len(rec.Sample)) > lim.MaxCell {
			return &Error{File: name, Line: rec.Line, Field: "sample_id", Err: fmt.Errorf("%w: a value of %d bytes, longer than --max-cell-size %s: %s",
				ErrLimit, len(rec.Sample), FormatSize(lim.MaxCell), Excerpt(rec.Sample))}
		}
		for _, v := range rec.Values {
			if int64(len(v.Text)) > lim.MaxCell {
				return &Error{File: name, Line: rec.Line, Field: v.Field, Err: fmt.Errorf("%w: a value of %d bytes, longer than --max-cell-size %s: %s",
					ErrLimit, len(v.Text), FormatSize(lim.MaxCell), Excerpt(v.Text))}
			}
		}
		guard.next()
		return fn0(rec)
	}
	b, err := firstByte(br)
	if err == io.EOF {
		return &Error{File: name, Line: 1, Err: fmt.Errorf("%w: empty file", ErrBadRecord)}
	}
	var ie *Error
	if errors.As(err, &ie) {
		return err // names its line already (a table's row)
	}
	if err != nil {
		return &Error{File: name, Line: 1, Err: err}
	}
	var err2 error
	if b == '[' || b == '{' {
		if m != nil {
			m.found, m.firstKeys, m.read = make([]bool, len(m.Fields)), nil, false
		}
		err2 = readScoresJSON(name, br, lc, r, m, fn)
		if err2 == nil && m != nil && !guard.over {
			err2 = m.checkFound(name)
		}
	} else if m != nil {
		return &Error{File: name, Line: 1, Err: fmt.Errorf("%w: --map reads JSON records, or a table named .csv or .tsv; without --map a CSV file's header is sample_id followed by rubric fields", ErrBadRecord)}
	} else {
		err2 = readScoresCSV(name, br, r, fn)
	}
	if guard.over {
		// The guard stopped the reader inside a record: that is the error, not what the
		// parser made of the cut.
		return &Error{File: name, Line: lc.LastLine(), Err: fmt.Errorf("%w: a record longer than --max-record-size %s", ErrLimit, FormatSize(lim.MaxRecord))}
	}
	return err2
}

// recordGuard fails a read once more than max bytes were read since the last record ended
// (next): the CSV and JSON decoders hold a whole record in memory, and nothing else bounds
// it. (Written by hand: encoding/csv and encoding/json have no such limit.) What the
// decoders read ahead counts toward the next record, a slack of their buffers' size.
type recordGuard struct {
	r    io.Reader
	n    int64
	max  int64
	over bool
}

func (g *recordGuard) Read(p []byte) (int, error) {
	if g.n > g.max {
		g.over = true
		return 0, ErrLimit
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	return n, err
}

// next starts the count of the next record.
func (g *recordGuard) next() { g.n = 0 }

// clipJSON is a JSON fragment for a message, as written, cut as Excerpt cuts.
func clipJSON(b []byte) string {
	if len(b) <= excerptMax {
		return string(b)
	}
	q := Excerpt(string(b))
	return strings.ToValidUTF8(string(b[:excerptMax]), "") + q[strings.LastIndex(q, "…"):]
}

// excerptMax is how much of a value a message quotes.
const excerptMax = 40

// Excerpt quotes at most the first 40 bytes of a value for a message, with its length when
// it is longer. An error about a 100 MiB cell must not repeat the cell.
func Excerpt(s string) string {
	if len(s) <= excerptMax {
		return strconv.Quote(s)
	}
	cut := excerptMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// readScoresCSV reads CSV with the header sample_id,<field>,...
func readScoresCSV(name string, br *bufio.Reader, r *rubric.Rubric, fn func(*ScoreRecord) error) error {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	csvErr := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &Error{File: name, Line: pe.Line, Err: fmt.Errorf("%w: %v", ErrBadRecord, pe.Err)}
		}
		return &Error{File: name, Line: 1, Err: err}
	}
	head, err := cr.Read()
	if err != nil {
		return csvErr(err)
	}
	sampleCol := -1
	for i, h := range head {
		head[i] = strings.TrimSpace(h)
		if head[i] == "sample_id" && sampleCol < 0 {
			sampleCol = i
		}
	}
	if sampleCol < 0 {
		return &Error{File: name, Line: 1, Err: fmt.Errorf("%w: the header needs a sample_id column (sample_id,<field>,...)", ErrBadRecord)}
	}
	for i, h := range head {
		if i != sampleCol && h != "sample_id" {
			if err := checkScoreField(r, h); err != nil {
				return &Error{File: name, Line: 1, Field: h, Err: err}
			}
		}
		for _, o := range head[:i] {
			if o == h {
				return &Error{File: name, Line: 1, Field: h, Err: fmt.Errorf("%w: the column appears twice", ErrBadRecord)}
			}
		}
	}
	rec := &ScoreRecord{}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(err)
		}
		rec.Line, _ = cr.FieldPos(0)
		if len(row) != len(head) {
			return &Error{File: name, Line: rec.Line, Err: fmt.Errorf("%w: %d values for %d columns", ErrBadRecord, len(row), len(head))}
		}
		rec.Sample = strings.TrimSpace(row[sampleCol])
		if rec.Sample == "" {
			return &Error{File: name, Line: rec.Line, Field: "sample_id", Err: fmt.Errorf("%w: missing", ErrBadRecord)}
		}
		rec.Values = rec.Values[:0]
		for i, cell := range row {
			if i != sampleCol {
				rec.Values = append(rec.Values, ScoreValue{Field: head[i], Text: cell})
			}
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// readScoresJSON reads a JSON array of objects or a sequence of objects (JSON Lines).
func readScoresJSON(name string, br *bufio.Reader, lc *lineindex.Reader, r *rubric.Rubric, m *ScoreMap, fn func(*ScoreRecord) error) error {
	// Offsets of the decoder count from where it starts reading; the line index counts from
	// the start of the file.
	base := lc.Consumed() - int64(br.Buffered())
	dec := json.NewDecoder(br)
	dec.UseNumber()
	lineAt := func(off int64) int { return lc.LineAt(base + off) }
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &Error{File: name, Line: lineAt(se.Offset), Err: fmt.Errorf("%w: not valid JSON: %v", ErrBadRecord, se)}
		}
		if err == io.ErrUnexpectedEOF {
			// The decoder has read everything: name the file's last line.
			return &Error{File: name, Line: lc.LastLine(), Err: fmt.Errorf("%w: the file ends inside a record", ErrBadRecord)}
		}
		return &Error{File: name, Line: lineAt(dec.InputOffset()), Err: err}
	}
	first, _ := br.Peek(1)
	inArray := first[0] == '['
	if inArray {
		if _, err := dec.Token(); err != nil {
			return syntax(err)
		}
	}
	rec := &ScoreRecord{}
	for {
		if inArray && !dec.More() {
			if _, err := dec.Token(); err != nil {
				return syntax(err)
			}
			if _, err := dec.Token(); err != io.EOF {
				return &Error{File: name, Line: lineAt(dec.InputOffset()), Err: fmt.Errorf("%w: unexpected data after the closing ]", ErrBadRecord)}
			}
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF && !inArray {
				return nil
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return syntax(err)
		}
		// The decoder stands just after the value, which started len(raw) bytes before.
		rec.Line = lineAt(dec.InputOffset() - int64(len(raw)))
		parse := parseScoreObject
		if m != nil {
			parse = m.parse
		}
		if err := parse(name, rec, raw, r); err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// parseScoreObject fills rec from one JSON object, its fields in rubric order so that the
// first error reported does not depend on map order.
func parseScoreObject(name string, rec *ScoreRecord, raw json.RawMessage, r *rubric.Rubric) error {
	bad := func(field, format string, args ...any) error {
		return &Error{File: name, Line: rec.Line, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return bad("", "a score record must be a JSON object {\"sample_id\": ..., \"<field>\": value}")
	}
	if key, ok := duplicateKey(raw); ok {
		return bad(key, "the key is given twice (which value is meant?)")
	}
	rec.Sample = ""
	if s, ok := obj["sample_id"]; ok {
		if json.Unmarshal(s, &rec.Sample) != nil {
			return bad("sample_id", "expected text, got %s", clipJSON(s))
		}
	}
	rec.Sample = strings.TrimSpace(rec.Sample)
	if rec.Sample == "" {
		return bad("sample_id", "missing")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if k != "sample_id" {
			keys = append(keys, k)
		}
	}
	pos := func(k string) int {
		for i := range r.Fields {
			if r.Fields[i].Name == k {
				return i
			}
		}
		return -1 // unknown keys first: they are the errors
	}
	sort.Slice(keys, func(i, j int) bool {
		pi, pj := pos(keys[i]), pos(keys[j])
		if pi != pj {
			return pi < pj
		}
		return keys[i] < keys[j]
	})
	rec.Values = rec.Values[:0]
	for _, k := range keys {
		if err := checkScoreField(r, k); err != nil {
			return &Error{File: name, Line: rec.Line, Field: k, Err: err}
		}
		v := bytes.TrimSpace(obj[k])
		rs := ScoreValue{Field: k}
		switch {
		case string(v) == "null":
			rs.Null = true
		case len(v) > 0 && v[0] == '"':
			if json.Unmarshal(v, &rs.Text) != nil {
				return bad(k, "not valid JSON text: %s", clipJSON(v))
			}
		case len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
			rs.Text = string(v)
		default:
			return bad(k, "expected a number, text or null, got %s", clipJSON(v))
		}
		rec.Values = append(rec.Values, rs)
	}
	return nil
}

// parse fills rec from one JSON object by the map's paths: numbers and text alike ("4" and
// 4), a number as a sample id's text.
func (m *ScoreMap) parse(name string, rec *ScoreRecord, raw json.RawMessage, _ *rubric.Rubric) error {
	bad := func(field, format string, args ...any) error {
		return &Error{File: name, Line: rec.Line, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return bad("", "%v", err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return bad("", "a score record must be a JSON object")
	}
	if key, ok := duplicateKey(raw); ok {
		return bad(key, "the key is given twice (which value is meant?)")
	}
	if !m.read {
		m.read, m.firstKeys = true, slices.Sorted(maps.Keys(obj))
	}
	var problems []string
	rec.Sample = ""
	switch v, _ := lookup(top, m.Sample.steps); x := v.(type) {
	case string:
		rec.Sample = strings.TrimSpace(x)
	case json.Number:
		rec.Sample = idText(x)
	case nil:
	default:
		problems = append(problems, fmt.Sprintf("%s (mapped to sample_id): expected text or a number, got %s", m.Sample.Path, jsonKind(v)))
	}
	if rec.Sample == "" && len(problems) == 0 {
		problems = append(problems, m.Sample.Path+" (mapped to sample_id): missing")
	}
	rec.Values = rec.Values[:0]
	for i, fp := range m.Fields {
		v, ok := lookup(top, fp.steps)
		if ok && i < len(m.found) {
			m.found[i] = true
		}
		sv := ScoreValue{Field: fp.Field}
		switch x := v.(type) {
		case nil:
			if !ok {
				continue // no score
			}
			sv.Null = true
		case string:
			sv.Text = strings.TrimSpace(x)
		case json.Number:
			sv.Text = x.String()
		default:
			problems = append(problems, fmt.Sprintf("%s (mapped to %s): expected a number, text or null, got %s", fp.Path, fp.Field, jsonKind(v)))
			continue
		}
		rec.Values = append(rec.Values, sv)
	}
	if len(problems) > 0 {
		// Every problem of the record at once, not one per run.
		return bad("", "%s", strings.Join(problems, "; "))
	}
	return nil
}

// duplicateKey tells whether a key of a score record's object is given twice, and which:
// encoding/json keeps the last value silently, and import refuses such records too
// (asStrictError).
func duplicateKey(raw []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(false))
	for {
		_, err := dec.ReadToken()
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && errors.Is(err, jsontext.ErrDuplicateName) {
			return strings.TrimPrefix(jsonpath.Pointer(se.JSONPointer), "."), true
		}
		if err != nil {
			return "", false
		}
	}
}
