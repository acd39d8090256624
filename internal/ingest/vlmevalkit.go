package ingest

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"
)

// vlmevalkitNames splits a prediction file's name, {model}_{dataset}.xlsx, written into
// {work_dir}/{model}/ or, in newer versions, {work_dir}/{model}/T{date}_G{commit}/.
func vlmevalkitNames(path string) (model, dataset string) {
	st := stem(path)
	dir := filepath.Dir(path)
	for range 2 {
		m := filepath.Base(dir)
		if m != "." && m != string(filepath.Separator) && strings.HasPrefix(st, m+"_") {
			return m, strings.TrimPrefix(st, m+"_")
		}
		dir = filepath.Dir(dir)
	}
	return "", st
}

// vlmRow is one prediction row: column name to cell, as JSON (a string for xlsx and tsv
// cells; any value in json files).
type vlmRow map[string]json.RawMessage

func (r vlmRow) text(col string) (string, bool) {
	raw, ok := r[col]
	if !ok || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return strings.TrimSpace(string(raw)), true // a number or a list, as its JSON text
}

// list reads a cell that may hold several values: a JSON list (json files) or the Python
// literal of a list (xlsx and tsv cells, written with str()).
func (r vlmRow) list(col string) ([]string, bool, error) {
	raw, ok := r[col]
	if !ok || string(raw) == "null" {
		return nil, false, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false, nil
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "(") {
		return nil, false, nil
	}
	list, err := PyStringList(t)
	if err != nil {
		return nil, false, err
	}
	return list, true, nil
}

// vlmKnown are the columns that become turn fields.
var vlmKnown = []string{"index", "question", "prediction", "answer", "image", "image_path"}

// imageTag is where MMDU questions put an image.
var imageTag = regexp.MustCompile(`<ImageHere>`)

// vlmevalkitRow converts one prediction row: a single question (index, question,
// prediction, answer) as a one-turn episode, or an MMDU row, whose question, answer and
// prediction cells are lists with one entry per turn. Images are image_path (kept as
// paths) or image (base64, written out; a list literal for several).
func (c *conv) vlmevalkitRow(line int, row vlmRow) ([]Record, error) {
	index, ok := row.text("index")
	if !ok || index == "" {
		return nil, c.errorf(line, "index", "missing")
	}
	if _, ok := row["prediction"]; !ok {
		return nil, c.errorf(line, "prediction", "missing")
	}
	var images []string
	if paths, ok, err := row.list("image_path"); err != nil {
		return nil, c.errorf(line, "image_path", "%v", err)
	} else if ok {
		images = paths
	} else if p, ok := row.text("image_path"); ok && p != "" {
		images = []string{p}
	}
	if images == nil {
		cells, ok, err := row.list("image")
		if err != nil {
			return nil, c.errorf(line, "image", "%v", err)
		}
		if !ok {
			if s, has := row.text("image"); has && s != "" {
				cells = []string{s}
			}
		}
		for i, b64 := range cells {
			if len(b64) <= 64 && !strings.HasPrefix(b64, "data:") {
				// A short cell is the index of the row whose image this is (VLMEvalKit
				// stores a repeated image once); kept as a reference, not decoded.
				images = append(images, "vlmevalkit-image-of-index:"+b64)
				continue
			}
			var p string
			var err error
			if strings.HasPrefix(b64, "data:") {
				p, err = c.media.Ref(b64)
			} else {
				p, err = c.media.Base64(b64)
			}
			if err != nil {
				return nil, c.errorf(line, fmt.Sprintf("image[%d]", i), "%v", err)
			}
			images = append(images, p)
		}
	}
	src := map[string]any{"dataset": c.dataset, "index": index}
	for k, v := range row {
		if !slices.Contains(vlmKnown, k) {
			src[k] = v
		}
	}
	episode := index
	if c.dataset != "" {
		episode = c.dataset + "/" + index
	}
	if c.model != "" {
		episode = c.model + "/" + episode
	}
	// MMDU: every one of question, prediction (and answer, when there) a list.
	// A prediction that is a list makes the row multi-turn; the question must be one too.
	ps, pList, pErr := row.list("prediction")
	if pErr != nil {
		pList = false // a single answer that happens to start with '['
	}
	qs, qList, qErr := row.list("question")
	if pList && qErr != nil {
		return nil, c.errorf(line, "question", "%v", qErr)
	}
	if pList && !qList {
		return nil, c.errorf(line, "question", "a single question, but the prediction is a list of %d answers", len(ps))
	}
	if qList && pList {
		as, aList, err := row.list("answer")
		if err != nil {
			return nil, c.errorf(line, "answer", "%v", err)
		}
		if len(ps) != len(qs) {
			return nil, c.errorf(line, "prediction", "%d answers for %d questions", len(ps), len(qs))
		}
		if aList && len(as) != len(qs) {
			return nil, c.errorf(line, "answer", "%d reference answers for %d questions", len(as), len(qs))
		}
		recs := make([]Record, 0, len(qs))
		for i, q := range qs {
			expected := ""
			if aList {
				expected = as[i]
			}
			turnSrc := map[string]any{}
			for k, v := range src {
				turnSrc[k] = v
			}
			if n := strings.Count(q, "<ImageHere>"); n > 0 {
				turnSrc["image_placeholders"] = n
			}
			user := strings.TrimSpace(imageTag.ReplaceAllString(q, ""))
			rec, err := c.turn(line, episode, i+1, user, ps[i], expected, images, c.model, turnSrc)
			if err != nil {
				return nil, err
			}
			recs = append(recs, rec)
		}
		return recs, nil
	}
	q := mcqPrompt(row)
	p, _ := row.text("prediction")
	a, _ := row.text("answer")
	rec, err := c.turn(line, episode, 1, q, p, a, images, c.model, src)
	if err != nil {
		return nil, err
	}
	return []Record{rec}, nil
}

// mcqPrompt is the question as VLMEvalKit's ImageMCQDataset.build_prompt puts it to the
// model when the row has options (columns A, B, ...): hint, question, options; else the
// question alone.
func mcqPrompt(row vlmRow) string {
	q, _ := row.text("question")
	var opts []string
	for c := 'A'; c <= 'Z'; c++ {
		v, ok := row.text(string(c))
		if !ok || v == "" || v == "nan" {
			continue
		}
		opts = append(opts, fmt.Sprintf("%c. %s", c, v))
	}
	if len(opts) < 2 {
		return q
	}
	var b strings.Builder
	if h, ok := row.text("hint"); ok && h != "" && h != "nan" {
		b.WriteString("Hint: " + h + "\n")
	}
	b.WriteString("Question: " + q + "\nOptions:\n" + strings.Join(opts, "\n") + "\n")
	b.WriteString("Please select the correct answer from the options above.")
	return b.String()
}

// vlmevalkitJSON converts one record of a json prediction file (pandas to_dict("records")).
func (c *conv) vlmevalkitJSON(line int, raw []byte) ([]Record, error) {
	var row vlmRow
	if err := c.decode(line, raw, &row); err != nil {
		return nil, err
	}
	return c.vlmevalkitRow(line, row)
}

// rowSource reads rows from a table (tsv or xlsx) and converts them.
type rowSource struct {
	c       *conv
	header  []string
	next    func() ([]string, int, error) // cells and line (or row) number; io.EOF at the end
	pending []Record
}

func (s *rowSource) Next() (*Record, error) {
	for len(s.pending) == 0 {
		cells, line, err := s.next()
		if err != nil {
			return nil, err
		}
		if len(cells) == 0 {
			continue
		}
		row := vlmRow{}
		for i, h := range s.header {
			v := ""
			if i < len(cells) {
				v = cells[i]
			}
			b, _ := json.Marshal(v)
			row[h] = b
		}
		if len(cells) > len(s.header) {
			return nil, s.c.errorf(line, "", "%d cells for %d columns", len(cells), len(s.header))
		}
		recs, err := s.c.vlmevalkitRow(line, row)
		if err != nil {
			return nil, err
		}
		s.pending = recs
	}
	rec := s.pending[0]
	s.pending = s.pending[1:]
	return &rec, nil
}

func newTableConv(path string, opts Options, row bool) *conv {
	c := &conv{name: path, media: opts.Media, stem: stem(path), format: FormatVLMEvalKit, row: row}
	c.model, c.dataset = vlmevalkitNames(path)
	return c
}

// openDelimited reads a tsv prediction file (pandas to_csv with sep="\t", every cell
// quoted) line by line.
func openDelimited(path string, opts Options) (Source, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	c := newTableConv(path, opts, false)
	r := csv.NewReader(f)
	r.Comma = '\t'
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		r.Comma = ','
	}
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		f.Close()
		if err == io.EOF {
			return nil, nil, c.errorf(1, "", "an empty file: no header row")
		}
		return nil, nil, c.errorf(1, "", "%v", err)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	s := &rowSource{c: c, header: header}
	s.next = func() ([]string, int, error) {
		cells, err := r.Read()
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, 0, c.errorf(pe.StartLine, "", "%v", pe.Err)
			}
			return nil, 0, c.errorf(line, "", "%v", err)
		}
		return cells, line, nil
	}
	return s, f, nil
}

// openXLSX reads the first sheet of an xlsx prediction file row by row, with excelize's
// streaming row iterator.
func openXLSX(path string, opts Options) (Source, io.Closer, error) {
	if err := checkXLSX(path, opts.Limits); err != nil {
		return nil, nil, err
	}
	f, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: opts.Limits.withDefaults().MaxUnzipped})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a readable xlsx file: %w", path, err)
	}
	c := newTableConv(path, opts, true)
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		f.Close()
		return nil, nil, fmt.Errorf("%s: no sheet", path)
	}
	rows, err := f.Rows(sheets[0])
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: sheet %s: %w", path, sheets[0], err)
	}
	n := 0
	read := func() ([]string, int, error) {
		if !rows.Next() {
			if err := rows.Error(); err != nil {
				return nil, 0, c.errorf(n+1, "", "%v", err)
			}
			return nil, 0, io.EOF
		}
		n++
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return nil, 0, c.errorf(n, "", "%v", err)
		}
		return cells, n, nil
	}
	header, _, err := read()
	if err != nil {
		rows.Close()
		f.Close()
		if err == io.EOF {
			return nil, nil, c.errorf(1, "", "an empty sheet: no header row")
		}
		return nil, nil, err
	}
	s := &rowSource{c: c, header: header, next: read}
	return s, closers{rows, f}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
