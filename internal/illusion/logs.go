package illusion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/m3bench/m3eval/internal/lmmslog"
)

// LogRecord is one sample of an lmms-eval --log_samples file, reduced to what scoring needs.
type LogRecord struct {
	Where     string // "file:line" for JSONL, "file: logs[i]" for the oldest format
	DocID     int
	Response  string
	ImageName string // from doc.image_name when the log keeps the doc (older versions)
	// ShapeGT and SceneGT are doc.shape_gt and doc.scene_gt, the task's ground truth, when
	// the log keeps the doc.
	ShapeGT, SceneGT string
	// InputMedia is the input_media list newer versions write: image paths or data URLs.
	InputMedia []string
	// Metrics holds the numeric per-metric keys lmms-eval wrote, e.g. shape_recall.
	Metrics map[string]float64
}

// Log is a parsed sample log of one task.
type Log struct {
	Path    string
	Task    string // the task name guessed from the file name
	Date    string // the run's date_id before "_samples_" in the file name, "" if none
	Model   string // the folder lmms-eval writes a model's logs into (model_name_sanitized)
	Records []LogRecord
}

// metricKeys are the per-sample metric keys of the lab's IllusionBench tasks.
var metricKeys = []string{"shape_recall", "scene_recall"}

// ReadLog reads an lmms-eval sample log in any of its layouts: JSON Lines with one sample
// per line (current versions; older ones also keep the whole doc), or one JSON object per
// task whose "logs" list holds the samples (the oldest versions). Errors name the file, the
// line (or logs index) and the field.
func ReadLog(ctx context.Context, path string) (*Log, error) {
	lg := &Log{Path: path, Task: taskFromFileName(path), Date: dateFromFileName(path),
		Model: filepath.Base(filepath.Dir(path))}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Versions before 0.1 dumped the samples as one JSON array, also into .jsonl files; the
	// oldest wrote one object per task with a "logs" list.
	arr, isArray, err := arrayLayout(data, path)
	if err != nil {
		return nil, err
	}
	where := "%s: [%d]"
	if !isArray {
		if wrapped, ok := oldestLayout(data); ok {
			arr, isArray, where = wrapped, true, "%s: logs[%d]"
		}
	}
	if isArray {
		for i, raw := range arr {
			rec, err := parseRecord(raw, fmt.Sprintf(where, path, i))
			if err != nil {
				return nil, err
			}
			lg.Records = append(lg.Records, rec)
		}
		if len(lg.Records) == 0 {
			return nil, fmt.Errorf("%s: no samples", path)
		}
		return lg, nil
	}
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec, err := parseRecord(line, fmt.Sprintf("%s:%d", path, lineNo))
		if err != nil {
			return nil, err
		}
		lg.Records = append(lg.Records, rec)
	}
	if len(lg.Records) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return lg, nil
}

// arrayLayout recognises a file whose first non-blank byte opens a JSON array.
func arrayLayout(data []byte, path string) ([]json.RawMessage, bool, error) {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\ufeff"))
	if len(t) == 0 || t[0] != '[' {
		return nil, false, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(t, &arr); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(t[:min(int(se.Offset), len(t))], []byte("\n")) + bytes.Count(data[:len(data)-len(t)], []byte("\n"))
			return nil, true, fmt.Errorf("%s:%d: not a valid JSON array: %w", path, line, err)
		}
		return nil, true, fmt.Errorf("%s: not a JSON array of samples: %w", path, err)
	}
	return arr, true, nil
}

// oldestLayout recognises a file that is a single JSON object with a "logs" list.
func oldestLayout(data []byte) ([]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var top struct {
		Logs  []json.RawMessage `json:"logs"`
		DocID *json.RawMessage  `json:"doc_id"`
	}
	if err := dec.Decode(&top); err != nil || top.Logs == nil || top.DocID != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // more values follow: JSON Lines after all
	}
	return top.Logs, true
}

func parseRecord(raw []byte, where string) (LogRecord, error) {
	rec := LogRecord{Where: where}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return rec, fmt.Errorf("%s: not a JSON object: %w", where, err)
	}
	id, err := lmmslog.DocID(m)
	if err != nil {
		return rec, fmt.Errorf("%s: field %w", where, err)
	}
	rec.DocID = int(id)
	if rec.Response, err = lmmslog.Response(m); err != nil {
		return rec, fmt.Errorf("%s: field %w", where, err)
	}

	if docRaw, ok := m["doc"]; ok {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(docRaw, &doc); err != nil {
			return rec, fmt.Errorf("%s: field doc: not an object", where)
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{ImageNameColumn, &rec.ImageName}, {"shape_gt", &rec.ShapeGT}, {"scene_gt", &rec.SceneGT}} {
			if raw, ok := doc[f.key]; ok && string(raw) != "null" {
				if err := json.Unmarshal(raw, f.dst); err != nil {
					return rec, fmt.Errorf("%s: field doc.%s: not a string: %.80s", where, f.key, raw)
				}
			}
		}
	}
	if raw, ok := m["input_media"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &rec.InputMedia); err != nil {
			return rec, fmt.Errorf("%s: field input_media: not a list of strings: %.80s", where, raw)
		}
	}
	for _, k := range metricKeys {
		if v, ok := m[k]; ok {
			var f float64
			if err := json.Unmarshal(v, &f); err == nil {
				if rec.Metrics == nil {
					rec.Metrics = map[string]float64{}
				}
				rec.Metrics[k] = f
			} else if rec.Metrics == nil {
				// A non-numeric metric value still tells which task this is.
				rec.Metrics = map[string]float64{k: -1}
			} else {
				rec.Metrics[k] = -1
			}
		}
	}
	return rec, nil
}

// taskFromFileName strips lmms-eval's decorations from a sample file name: an optional
// "{date}_" prefix, "samples_" and the extension, e.g.
// 20250101_120000_samples_illusionbench_arshia_icon_shape_test.jsonl.
func taskFromFileName(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(strings.TrimSuffix(base, filepath.Ext(base)), ".json")
	if i := strings.Index(base, "samples_"); i >= 0 {
		base = base[i+len("samples_"):]
	}
	return base
}

// dateFromFileName returns the date_id lmms-eval puts before "_samples_" in a sample file
// name (e.g. 20250101_120000 or 2025-01-01T12-00-00.123456), "" when there is none.
func dateFromFileName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, "_samples_"); i > 0 {
		return base[:i]
	}
	return ""
}

// Kinds reports the kinds a log scores: from its per-metric keys when present, else from
// the words "shape" and "scene" in the task name. It returns nil when neither tells.
func (lg *Log) Kinds() []Kind {
	var shape, scene bool
	for _, r := range lg.Records {
		_, s := r.Metrics["shape_recall"]
		_, c := r.Metrics["scene_recall"]
		shape, scene = shape || s, scene || c
	}
	if !shape && !scene {
		for _, tok := range taskTokens(lg.Task) {
			shape, scene = shape || tok == "shape", scene || tok == "scene"
		}
	}
	var ks []Kind
	if shape {
		ks = append(ks, KindShape)
	}
	if scene {
		ks = append(ks, KindScene)
	}
	return ks
}

func taskTokens(task string) []string {
	return strings.FieldsFunc(strings.ToLower(task), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
}

// SplitOf picks the split a log belongs to among the given split names by matching the
// split's short name (ICON in Illusion_ICON) with a word of the task name, e.g.
// illusionbench_arshia_icon_shape_test. It returns "" unless exactly one split matches.
func (lg *Log) SplitOf(splits []string) string {
	found := ""
	toks := taskTokens(lg.Task)
	for _, s := range splits {
		short := strings.ToLower(s)
		if i := strings.LastIndexAny(short, "_-"); i >= 0 {
			short = short[i+1:]
		}
		for _, t := range toks {
			if t == short || t == strings.ToLower(s) {
				if found != "" && found != s {
					return ""
				}
				found = s
			}
		}
	}
	return found
}
