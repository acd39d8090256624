package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/lineindex"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

func newImportScoresCmd(g *globalOptions) *cobra.Command {
	var (
		judge   string
		replace bool
	)
	cmd := &cobra.Command{
		Use:   "import-scores --judge NAME FILE...",
		Short: "Import an automatic judge's scores per sample_id (JSON, JSONL or CSV)",
		Long: `import-scores stores an automatic judge's scores of imported turns, for the scale and
choice fields of the rubric, as that judge's. A file is
  - a JSON array of objects {"sample_id": ..., "<field>": value, ...},
  - JSON Lines of such objects, or
  - CSV (RFC 4180) with the header sample_id,<field>,<field>,...
Scale fields take numbers within the scale: whole numbers, or continuous scores such as 3.7
(kept as given; the agreement statistics leave them out of exact match and kappa and use
them in the correlations). Choice fields take one of the choices (any case); null and NA
mean the rubric's NA choice. An absent key or an empty CSV cell means no score. Values obey
the rubric's rules for the turn, as human labels do (a field fixed to NA must be NA).
Each file imports in one transaction: on an error nothing of that file is written.
Re-importing identical scores changes nothing; a changed score is an error unless --replace.`,
		Example: `  m3eval import-scores --judge gpt4o scores.jsonl
  m3eval import-scores --judge rules --replace rule_scores.csv`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(judge) == "" {
				return usageErrorf("--judge NAME is required: the scores are stored as that judge's")
			}
			if err := oneStdin(args...); err != nil {
				return err
			}
			if err := g.mustExist(); err != nil {
				return err
			}
			r, err := g.loadRubric()
			if err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), r, store.Options{})
			if err != nil {
				return err
			}
			defer s.Close()
			for _, name := range args {
				c, err := importScoresFile(cmd.Context(), s, r, strings.TrimSpace(judge), name, cmd.InOrStdin(), store.ImportOptions{Replace: replace})
				if err != nil {
					return err
				}
				if name == "-" {
					name = stdinName
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: judge %s: %d scores new, %d unchanged, %d replaced\n",
					name, strings.TrimSpace(judge), c[store.Inserted], c[store.Unchanged], c[store.Replaced])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&judge, "judge", "", "name of the automatic judge the scores belong to (required)")
	cmd.Flags().BoolVar(&replace, "replace", false, "overwrite scores that changed since the last import")
	return cmd
}

// rawScore is one value of a score record as it stood in the file.
type rawScore struct {
	field string
	text  string // a JSON string unquoted, a JSON number or a CSV cell as written
	null  bool   // JSON null
}

// scoreRecord is one sample's scores.
type scoreRecord struct {
	line   int
	sample string
	values []rawScore
}

// importScoresFile reads one file into the store in one transaction and returns the counts
// by outcome.
func importScoresFile(ctx context.Context, s *store.Store, r *rubric.Rubric, judge, path string, stdin io.Reader, opts store.ImportOptions) ([3]int, error) {
	var counts [3]int
	f, name, err := openInput(path, stdin) // named in errors as m3eval import names its files
	if err != nil {
		return counts, fmt.Errorf("import-scores: %w", err)
	}
	defer f.Close()
	im, err := s.BeginScoreImport(ctx, judge, opts)
	if err != nil {
		return counts, err
	}
	defer im.Rollback()
	// Sample id → line, to catch a sample listed twice; the only memory that grows with the
	// file, a few bytes per sample.
	seen := map[string]int{}
	err = readScoreFile(name, f, r, func(rec *scoreRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		fail := func(field string, err error) error {
			return &ingest.Error{File: name, Line: rec.line, Field: field, Err: err}
		}
		if first, dup := seen[rec.sample]; dup {
			return fail("sample_id", fmt.Errorf("%w: %q is listed twice in this file (first on line %d)", ingest.ErrBadRecord, rec.sample, first))
		}
		seen[rec.sample] = rec.line
		turnID, item, err := im.Turn(rec.sample)
		if errors.Is(err, store.ErrNotFound) {
			return fail("sample_id", fmt.Errorf("%w: %q is not in the database (import its turn first)", ingest.ErrBadRecord, rec.sample))
		}
		if err != nil {
			return fail("sample_id", err)
		}
		for _, v := range rec.values {
			fd, _ := r.Field(v.field) // the reader checked the name
			val, err := judgeValue(fd, v, item)
			if err != nil {
				return fail(v.field, err)
			}
			o, err := im.PutScore(turnID, v.field, val)
			if err != nil {
				return fail(v.field, err)
			}
			if val != "" || o != store.Unchanged { // "no score" where none is stored is not a score
				counts[o]++
			}
		}
		return nil
	})
	if err != nil {
		return counts, err
	}
	return counts, im.Commit()
}

// judgeValue checks a judge's value against the rubric for the turn and returns it as
// stored: "" for no score, a canonical number for scale fields, the rubric's spelling of a
// choice.
func judgeValue(f *rubric.Field, v rawScore, it rubric.Item) (string, error) {
	text := strings.TrimSpace(v.text)
	switch f.Kind {
	case rubric.KindScale:
		if v.null || text == "" || strings.EqualFold(text, "NA") {
			return "", nil
		}
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("%w: %q is not a number from %d to %d", rubric.ErrInvalid, text, f.Min, f.Max)
		}
		if x < float64(f.Min) || x > float64(f.Max) {
			return "", fmt.Errorf("%w: %s is outside %d–%d", rubric.ErrInvalid, text, f.Min, f.Max)
		}
		// One spelling per number, so that "4", "4.0" and 4e0 re-import as unchanged.
		val := strconv.FormatFloat(x, 'f', -1, 64)
		if fixed, rule, ok := f.FixedValue(it); ok && val != fixed {
			return "", fmt.Errorf("%w: %s given, but the field is fixed to %s (%s)", rubric.ErrInvalid, val, fixed, rule.WhyEn)
		}
		return val, nil
	case rubric.KindChoice:
		if !v.null && text == "" {
			return "", nil
		}
		val := ""
		if v.null || strings.EqualFold(text, "NA") {
			for _, c := range f.Choices {
				if c.NA {
					val = c.Value
				}
			}
			if val == "" && v.null {
				return "", nil // no NA choice: null is no score
			}
		}
		if val == "" {
			for _, c := range f.Choices {
				if strings.EqualFold(text, c.Value) {
					val = c.Value
				}
			}
		}
		if val == "" {
			return "", fmt.Errorf("%w: %q is not one of %s", rubric.ErrInvalid, text, choiceValues(f))
		}
		if err := f.Check(val, it); err != nil {
			return "", err
		}
		return val, nil
	}
	return "", fmt.Errorf("%w: %s is a text field; judges score scale and choice fields", rubric.ErrInvalid, f.Name)
}

func choiceValues(f *rubric.Field) string {
	vals := make([]string, len(f.Choices))
	for i, c := range f.Choices {
		vals[i] = c.Value
	}
	return strings.Join(vals, ", ")
}

// scoreField checks that a key or column names a field a judge can score.
func scoreField(r *rubric.Rubric, key string) error {
	f, ok := r.Field(key)
	if !ok {
		return fmt.Errorf("%w: not a field of the rubric %s", ingest.ErrBadRecord, r.Name)
	}
	if f.Kind != rubric.KindScale && f.Kind != rubric.KindChoice {
		return fmt.Errorf("%w: a %s field; judges score scale and choice fields only", ingest.ErrBadRecord, f.Kind)
	}
	return nil
}

// readScoreFile streams the records of a score file to fn: a JSON array or JSON objects when
// the first character is [ or {, CSV otherwise.
func readScoreFile(name string, rd io.Reader, r *rubric.Rubric, fn func(*scoreRecord) error) error {
	lc := lineindex.New(rd, 0)
	br := bufio.NewReaderSize(lc, 64<<10)
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return &ingest.Error{File: name, Line: 1, Err: fmt.Errorf("%w: empty file", ingest.ErrBadRecord)}
		}
		if err != nil {
			return &ingest.Error{File: name, Line: 1, Err: err}
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
		case '[', '{':
			return readScoreJSON(name, br, lc, r, fn)
		}
		return readScoreCSV(name, br, r, fn)
	}
}

// readScoreCSV reads CSV with the header sample_id,<field>,...
func readScoreCSV(name string, br *bufio.Reader, r *rubric.Rubric, fn func(*scoreRecord) error) error {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	csvErr := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &ingest.Error{File: name, Line: pe.Line, Err: fmt.Errorf("%w: %v", ingest.ErrBadRecord, pe.Err)}
		}
		return &ingest.Error{File: name, Line: 1, Err: err}
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
		return &ingest.Error{File: name, Line: 1, Err: fmt.Errorf("%w: the header needs a sample_id column (sample_id,<field>,...)", ingest.ErrBadRecord)}
	}
	for i, h := range head {
		if i != sampleCol && h != "sample_id" {
			if err := scoreField(r, h); err != nil {
				return &ingest.Error{File: name, Line: 1, Field: h, Err: err}
			}
		}
		for _, o := range head[:i] {
			if o == h {
				return &ingest.Error{File: name, Line: 1, Field: h, Err: fmt.Errorf("%w: the column appears twice", ingest.ErrBadRecord)}
			}
		}
	}
	rec := &scoreRecord{}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(err)
		}
		rec.line, _ = cr.FieldPos(0)
		if len(row) != len(head) {
			return &ingest.Error{File: name, Line: rec.line, Err: fmt.Errorf("%w: %d values for %d columns", ingest.ErrBadRecord, len(row), len(head))}
		}
		rec.sample = strings.TrimSpace(row[sampleCol])
		if rec.sample == "" {
			return &ingest.Error{File: name, Line: rec.line, Field: "sample_id", Err: fmt.Errorf("%w: missing", ingest.ErrBadRecord)}
		}
		rec.values = rec.values[:0]
		for i, cell := range row {
			if i != sampleCol {
				rec.values = append(rec.values, rawScore{field: head[i], text: cell})
			}
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// readScoreJSON reads a JSON array of objects or a sequence of objects (JSON Lines).
func readScoreJSON(name string, br *bufio.Reader, lc *lineindex.Reader, r *rubric.Rubric, fn func(*scoreRecord) error) error {
	// Offsets of the decoder count from where it starts reading; the line index counts from
	// the start of the file.
	base := lc.Consumed() - int64(br.Buffered())
	dec := json.NewDecoder(br)
	dec.UseNumber()
	lineAt := func(off int64) int { return lc.LineAt(base + off) }
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &ingest.Error{File: name, Line: lineAt(se.Offset), Err: fmt.Errorf("%w: not valid JSON: %v", ingest.ErrBadRecord, se)}
		}
		if err == io.ErrUnexpectedEOF {
			// The decoder has read everything: name the file's last line.
			return &ingest.Error{File: name, Line: lc.LastLine(), Err: fmt.Errorf("%w: the file ends inside a record", ingest.ErrBadRecord)}
		}
		return &ingest.Error{File: name, Line: lineAt(dec.InputOffset()), Err: err}
	}
	first, _ := br.Peek(1)
	inArray := first[0] == '['
	if inArray {
		if _, err := dec.Token(); err != nil {
			return syntax(err)
		}
	}
	rec := &scoreRecord{}
	for {
		if inArray && !dec.More() {
			if _, err := dec.Token(); err != nil {
				return syntax(err)
			}
			if _, err := dec.Token(); err != io.EOF {
				return &ingest.Error{File: name, Line: lineAt(dec.InputOffset()), Err: fmt.Errorf("%w: unexpected data after the closing ]", ingest.ErrBadRecord)}
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
		rec.line = lineAt(dec.InputOffset() - int64(len(raw)))
		if err := parseScoreObject(name, rec, raw, r); err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// parseScoreObject fills rec from one JSON object, its fields in rubric order so that the
// first error reported does not depend on map order.
func parseScoreObject(name string, rec *scoreRecord, raw json.RawMessage, r *rubric.Rubric) error {
	bad := func(field, format string, args ...any) error {
		return &ingest.Error{File: name, Line: rec.line, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ingest.ErrBadRecord}, args...)...)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return bad("", "a score record must be a JSON object {\"sample_id\": ..., \"<field>\": value}")
	}
	rec.sample = ""
	if s, ok := obj["sample_id"]; ok {
		if json.Unmarshal(s, &rec.sample) != nil {
			return bad("sample_id", "expected text, got %s", s)
		}
	}
	rec.sample = strings.TrimSpace(rec.sample)
	if rec.sample == "" {
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
	rec.values = rec.values[:0]
	for _, k := range keys {
		if err := scoreField(r, k); err != nil {
			return &ingest.Error{File: name, Line: rec.line, Field: k, Err: err}
		}
		v := bytes.TrimSpace(obj[k])
		rs := rawScore{field: k}
		switch {
		case string(v) == "null":
			rs.null = true
		case len(v) > 0 && v[0] == '"':
			if json.Unmarshal(v, &rs.text) != nil {
				return bad(k, "not valid JSON text: %s", v)
			}
		case len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
			rs.text = string(v)
		default:
			return bad(k, "expected a number, text or null, got %s", v)
		}
		rec.values = append(rec.values, rs)
	}
	return nil
}
