package render

// Labeled turns in the annotation guide's format (formerly package labeled): JSON (an array),
// JSON Lines, or CSV with one row per label. Field order follows the rubric, so the output
// of two exports of the same data is byte for byte the same.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// LabeledFormats are the formats LabeledWriter writes: m3eval export --format.
var LabeledFormats = []Format{JSON, JSONL, CSV}

// LabeledOptions shape the output.
type LabeledOptions struct {
	Format Format
	Rubric *rubric.Rubric
	// Multi writes every label under "human_annotations" (a list) instead of one
	// "human_annotation" object: used when the export holds several annotators.
	Multi bool
	// Final adds the final_source and adjudicator columns to CSV (export --final).
	Final bool
	// CSV neutralizes formula-like cells (unless Raw) and may add a byte order mark.
	CSV CSVOptions
}

// LabeledWriter writes labeled turns one at a time.
type LabeledWriter struct {
	w   io.Writer
	o   LabeledOptions
	n   int
	csv *CSVWriter
	buf bytes.Buffer
}

// NewLabeledWriter starts an output in the format of o.
func NewLabeledWriter(w io.Writer, o LabeledOptions) (*LabeledWriter, error) {
	lw := &LabeledWriter{w: w, o: o}
	switch o.Format {
	case JSON, JSONL:
	case CSV:
		lw.csv = NewCSVWriter(w, o.CSV)
		if err := lw.csv.Write(lw.csvHeader()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown format %q (use %s)", o.Format, list(LabeledFormats))
	}
	return lw, nil
}

// Write adds one labeled turn.
func (lw *LabeledWriter) Write(l *dataset.Labeled) error {
	defer func() { lw.n++ }()
	if lw.csv != nil {
		for i := range l.Labels {
			if err := lw.csv.Write(lw.csvRow(&l.Turn, &l.Labels[i])); err != nil {
				return err
			}
		}
		return nil
	}
	lw.buf.Reset()
	if err := lw.record(l).write(&lw.buf); err != nil {
		return fmt.Errorf("export %s: %w", l.Turn.SampleID, err)
	}
	var out bytes.Buffer
	if lw.o.Format == JSONL {
		out.Write(lw.buf.Bytes())
		out.WriteByte('\n')
	} else {
		if lw.n == 0 {
			out.WriteString("[\n  ")
		} else {
			out.WriteString(",\n  ")
		}
		if err := json.Indent(&out, lw.buf.Bytes(), "  ", "  "); err != nil {
			return err
		}
	}
	_, err := lw.w.Write(out.Bytes())
	return err
}

// Close ends the output.
func (lw *LabeledWriter) Close() error {
	switch {
	case lw.csv != nil:
		lw.csv.Flush()
		return lw.csv.Error()
	case lw.o.Format == JSON && lw.n == 0:
		_, err := io.WriteString(lw.w, "[]\n")
		return err
	case lw.o.Format == JSON:
		_, err := io.WriteString(lw.w, "\n]\n")
		return err
	}
	return nil
}

func (lw *LabeledWriter) record(l *dataset.Labeled) labeledObject {
	t := &l.Turn
	rec := labeledObject{
		{"sample_id", t.SampleID}, {"episode_id", t.EpisodeID}, {"turn", t.Turn},
		{"action_type", t.ActionType}, {"task_type", t.TaskType}, {"user_message", t.UserMessage},
		{"vlm_response", t.VLMResponse}, {"expected_answer", t.ExpectedAnswer},
	}
	if len(t.Images) > 0 {
		rec = append(rec, labeledKV{"images", t.Images})
	}
	if t.Model != "" {
		rec = append(rec, labeledKV{"model", t.Model})
	}
	if len(t.Meta) > 0 {
		rec = append(rec, labeledKV{"meta", t.Meta})
	}
	if !lw.o.Multi && len(l.Labels) == 1 {
		return append(rec, labeledKV{"human_annotation", lw.label(&l.Labels[0])})
	}
	labels := make([]labeledObject, len(l.Labels))
	for i := range l.Labels {
		labels[i] = lw.label(&l.Labels[i])
	}
	return append(rec, labeledKV{"human_annotations", labels})
}

func (lw *LabeledWriter) label(l *dataset.Label) labeledObject {
	var o labeledObject
	for i := range lw.o.Rubric.Fields {
		f := &lw.o.Rubric.Fields[i]
		v, ok := l.Values[f.Name]
		o = append(o, labeledKV{f.Name, labeledValue(f, v, ok, l.Status == dataset.StatusDraft)})
	}
	o = append(o,
		labeledKV{"annotator", l.Annotator},
		labeledKV{"annotated_at", l.AnnotatedAt.UTC().Format("2006-01-02T15:04:05Z")},
		labeledKV{"active_seconds", json.Number(strconv.FormatFloat(l.ActiveSeconds, 'f', -1, 64))},
		labeledKV{"rubric_version", l.RubricVersion},
		labeledKV{"flagged", l.Flagged},
	)
	if l.FlagReason != "" {
		o = append(o, labeledKV{"flag_reason", l.FlagReason})
	}
	if l.Status == dataset.StatusDraft {
		o = append(o, labeledKV{"status", dataset.StatusDraft})
	}
	if l.Stale {
		o = append(o, labeledKV{"stale", true})
	}
	if f := l.Final; f != nil {
		var src labeledObject
		for _, fd := range lw.o.Rubric.Fields {
			if x, ok := f.Fields[fd.Name]; ok {
				src = append(src, labeledKV{fd.Name, x})
			}
		}
		o = append(o, labeledKV{"final_source", f.Source}, labeledKV{"field_sources", src})
		if f.Adjudicator != "" {
			o = append(o, labeledKV{"adjudicator", f.Adjudicator})
		}
	}
	return o
}

// labeledValue is a field's value in labeled JSON. A done label is complete, so null there is NA,
// as the guide writes it. In a draft null means unanswered, so an explicit NA is written as the
// rubric spells it ("NA"), and the import reads each back as what it was.
func labeledValue(f *rubric.Field, v string, ok, draft bool) any {
	if draft {
		if !ok {
			return nil
		}
		if o, found := f.Option(v); found && o.NA {
			return v
		}
	}
	return f.JSONValue(v, ok)
}

func (lw *LabeledWriter) csvHeader() []string {
	h := []string{"sample_id", "episode_id", "turn", "action_type", "task_type", "model", "annotator", "status"}
	for _, f := range lw.o.Rubric.Fields {
		h = append(h, f.Name)
	}
	h = append(h, "annotated_at", "active_seconds", "rubric_version", "flagged", "flag_reason",
		"user_message", "vlm_response", "expected_answer")
	if lw.o.Final {
		h = append(h, "final_source", "adjudicator")
	}
	return h
}

func (lw *LabeledWriter) csvRow(t *dataset.Turn, l *dataset.Label) []string {
	row := []string{t.SampleID, t.EpisodeID, strconv.Itoa(t.Turn), t.ActionType, t.TaskType, t.Model, l.Annotator, string(l.Status)}
	for i := range lw.o.Rubric.Fields {
		f := &lw.o.Rubric.Fields[i]
		v, ok := l.Values[f.Name]
		if fixed, _, isFixed := f.FixedValue(t.Item()); !ok && isFixed {
			// The annotator leaves a field the rubric fixes for this turn unstored; the
			// import stores the fixed NA. Both are the same answer (docs/data-safety.md).
			v, ok = fixed, true
		}
		if o, found := f.Option(v); ok && found && o.NA {
			row = append(row, v) // NA in the rubric's spelling; unanswered is an empty cell
			continue
		}
		switch x := f.JSONValue(v, ok).(type) {
		case nil:
			row = append(row, "")
		case int:
			row = append(row, strconv.Itoa(x))
		default:
			row = append(row, fmt.Sprint(x))
		}
	}
	row = append(row, l.AnnotatedAt.UTC().Format("2006-01-02T15:04:05Z"),
		strconv.FormatFloat(l.ActiveSeconds, 'f', -1, 64), l.RubricVersion, strconv.FormatBool(l.Flagged), l.FlagReason,
		t.UserMessage, t.VLMResponse, t.ExpectedAnswer)
	if lw.o.Final {
		var src, adj string
		if l.Final != nil {
			src, adj = l.Final.Source, l.Final.Adjudicator
		}
		row = append(row, src, adj)
	}
	return row
}

// labeledObject is a JSON labeledObject that keeps its key order.
type labeledObject []labeledKV

type labeledKV struct {
	k string
	v any
}

func (o labeledObject) write(b *bytes.Buffer) error {
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeLabeledValue(b, e.k); err != nil {
			return err
		}
		b.WriteByte(':')
		var err error
		switch v := e.v.(type) {
		case labeledObject:
			err = v.write(b)
		case []labeledObject:
			b.WriteByte('[')
			for j, x := range v {
				if j > 0 {
					b.WriteByte(',')
				}
				if err = x.write(b); err != nil {
					break
				}
			}
			b.WriteByte(']')
		default:
			err = writeLabeledValue(b, v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.k, err)
		}
	}
	b.WriteByte('}')
	return nil
}

// writeLabeledValue encodes without HTML escaping: exports are read by people and by JSON parsers,
// never embedded in HTML.
func writeLabeledValue(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode adds a newline
	return nil
}
