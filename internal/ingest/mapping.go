package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// mapFields are the turn fields --map can fill; besides them, "annotator" and
// "label.<rubric field>" fill a label (labelPrefix).
var mapFields = []string{"sample_id", "episode_id", "turn", "user_message", "vlm_response",
	"expected_answer", "action_type", "task_type", "images", "model"}

// labelPrefix starts a --map field that is a label's rubric field: label.correctness=score.
const labelPrefix = "label."

// FieldPath is one --map FIELD=PATH: a turn field and where each record holds it, a
// dotted path with list indices, e.g. response.text or messages[1].content.
type FieldPath struct {
	Field string
	Path  string
	steps []pathStep
}

type pathStep struct {
	key   string
	index int // -1 for a key step
}

// ParseFieldPaths parses --map flags, checking field names and paths.
func ParseFieldPaths(flags []string) ([]FieldPath, error) {
	var out []FieldPath
	seen := map[string]bool{}
	for _, f := range flags {
		field, path, ok := strings.Cut(f, "=")
		if !ok || field == "" || path == "" {
			return nil, fmt.Errorf("--map %q: want FIELD=PATH, e.g. user_message=question", f)
		}
		isLabel := strings.HasPrefix(field, labelPrefix) && len(field) > len(labelPrefix)
		if !slices.Contains(mapFields, field) && field != "annotator" && !isLabel {
			return nil, fmt.Errorf("--map %q: unknown field %s; fields are %s, annotator and label.<rubric field>", f, field, strings.Join(mapFields, ", "))
		}
		if seen[field] {
			return nil, fmt.Errorf("--map: %s given twice", field)
		}
		seen[field] = true
		steps, err := parsePath(path)
		if err != nil {
			return nil, fmt.Errorf("--map %q: %w", f, err)
		}
		out = append(out, FieldPath{Field: field, Path: path, steps: steps})
	}
	return out, nil
}

// CheckTurnMap checks that maps that make turns by themselves (without --from) name a
// user message and a response.
func CheckTurnMap(paths []FieldPath) error {
	if len(paths) == 0 {
		return nil
	}
	for _, need := range []string{"user_message", "vlm_response"} {
		if !slices.ContainsFunc(paths, func(p FieldPath) bool { return p.Field == need }) {
			return fmt.Errorf("--map: give %s=PATH too (a turn needs a user message and a response), or --from FORMAT to add to a format's turns", need)
		}
	}
	return nil
}

// overlay applies --map paths given with --from to the turns a format's converter made of
// one source record: turn fields override the converter's, label fields add a label. A
// record that became several turns (a conversation) takes turn fields on every turn and no
// label: which turn would it be of?
func (c *conv) overlay(line int, raw []byte, recs []Record) ([]Record, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, c.errorf(line, "", "%v", err)
	}
	label := map[string]json.RawMessage{}
	c.noteKeys(top)
	for _, fp := range c.paths {
		v, ok := lookup(top, fp.steps)
		c.noteFound(fp, ok)
		if !ok || v == nil {
			continue
		}
		if name, isLabel := strings.CutPrefix(fp.Field, labelPrefix); isLabel || fp.Field == "annotator" {
			if !isLabel {
				name = "annotator"
				v = fmt.Sprint(v)
			}
			if len(recs) > 1 {
				return nil, c.errorf(line, fp.Path, "mapped to %s, but the record is a conversation of %d turns: labels map onto one-turn records only", fp.Field, len(recs))
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, c.errorf(line, fp.Path, "%v", err)
			}
			label[name] = b
			continue
		}
		var text string
		switch x := v.(type) {
		case string:
			text = x
		case json.Number:
			text = x.String()
		case bool:
			text = strconv.FormatBool(x)
		default:
			if fp.Field != "images" {
				return nil, c.errorf(line, fp.Path, "expected text, got %s (mapped to %s)", jsonKind(v), fp.Field)
			}
		}
		for i := range recs {
			t := &recs[i].Turn
			switch fp.Field {
			case "user_message":
				t.UserMessage = text
			case "vlm_response":
				t.VLMResponse = text
			case "expected_answer":
				t.ExpectedAnswer = text
			case "action_type":
				t.ActionType = text
			case "task_type":
				t.TaskType = text
			case "model":
				t.Model = text
			default:
				return nil, c.errorf(line, fp.Path, "--map %s with --from: the format decides it (map user_message, vlm_response, expected_answer, action_type, task_type, model, annotator, label.FIELD)", fp.Field)
			}
		}
	}
	if _, named := label["annotator"]; len(label) > 0 && !(named && len(label) == 1) {
		recs[0].Labels = append(recs[0].Labels, RawLabel{Field: "label", Line: line, Fields: label, Mapped: c.labelPaths()})
	}
	return recs, nil
}

func parsePath(p string) ([]pathStep, error) {
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		key := part
		var idx []int
		if i := strings.IndexByte(part, '['); i >= 0 {
			key = part[:i]
			rest := part[i:]
			for rest != "" {
				j := strings.IndexByte(rest, ']')
				if rest[0] != '[' || j < 0 {
					return nil, fmt.Errorf("path %q: bad index in %q", p, part)
				}
				n, err := strconv.Atoi(rest[1:j])
				if err != nil || n < 0 {
					return nil, fmt.Errorf("path %q: index %q is not a number", p, rest[1:j])
				}
				idx = append(idx, n)
				rest = rest[j+1:]
			}
		}
		if key == "" && len(idx) == 0 {
			return nil, fmt.Errorf("path %q: empty part", p)
		}
		if key != "" {
			steps = append(steps, pathStep{key: key, index: -1})
		}
		for _, n := range idx {
			steps = append(steps, pathStep{index: n})
		}
	}
	return steps, nil
}

// lookup follows steps through a decoded JSON value.
func lookup(v any, steps []pathStep) (any, bool) {
	for _, s := range steps {
		if s.index < 0 {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
			continue
		}
		l, ok := v.([]any)
		if !ok || s.index >= len(l) {
			return nil, false
		}
		v = l[s.index]
	}
	return v, true
}

// CheckLabelFields checks the label.<field> maps against the rubric's fields, so that a
// misspelled field is a usage error before any record is read.
func CheckLabelFields(paths []FieldPath, names func(string) bool, all []string) error {
	for _, p := range paths {
		if f, ok := strings.CutPrefix(p.Field, labelPrefix); ok && !names(f) {
			return fmt.Errorf("--map %s=%s: %s is not a field of the rubric; its fields are %s", p.Field, p.Path, f, strings.Join(all, ", "))
		}
	}
	return nil
}

// mapped converts a record of any layout by the --map paths: one turn per record.
func (c *conv) mapped(line int, raw []byte) ([]Record, error) {
	var rawTop map[string]json.RawMessage
	if err := c.decode(line, raw, &rawTop); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, c.errorf(line, "", "%v", err)
	}
	vals := map[string]string{}
	var images []string
	used := map[string]bool{}
	label := map[string]json.RawMessage{}
	var missing, bad []string // every problem of the record, reported at once
	badf := func(path, format string, args ...any) {
		bad = append(bad, path+": "+fmt.Sprintf(format, args...))
	}
	c.noteKeys(top)
	for _, fp := range c.paths {
		v, ok := lookup(top, fp.steps)
		c.noteFound(fp, ok)
		if len(fp.steps) == 1 {
			used[fp.steps[0].key] = true
		}
		if !ok || v == nil {
			if fp.Field == "user_message" || fp.Field == "vlm_response" {
				missing = append(missing, fmt.Sprintf("%s (mapped to %s)", fp.Path, fp.Field))
			}
			continue
		}
		if name, ok := strings.CutPrefix(fp.Field, labelPrefix); ok {
			// As written ("4" and 4 alike): Label coerces it to the field's kind.
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, c.errorf(line, fp.Path, "%v", err)
			}
			label[name] = raw
			continue
		}
		if fp.Field == "images" {
			var refs []string
			switch x := v.(type) {
			case string:
				refs = []string{x}
			case []any:
				for i, e := range x {
					s, ok := e.(string)
					if !ok {
						badf(fmt.Sprintf("%s[%d]", fp.Path, i), "expected a path or URL (mapped to images)")
						continue
					}
					refs = append(refs, s)
				}
			default:
				badf(fp.Path, "expected a path or a list of paths (mapped to images)")
			}
			for i, r := range refs {
				p, err := c.image(line, fmt.Sprintf("%s[%d]", fp.Path, i), r)
				if err != nil {
					return nil, err
				}
				images = append(images, p)
			}
			continue
		}
		if fp.Field == "annotator" {
			if _, ok := v.(string); !ok {
				if _, ok := v.(json.Number); !ok {
					badf(fp.Path, "expected a name, got %s (mapped to annotator)", jsonKind(v))
					continue
				}
			}
			raw, _ := json.Marshal(fmt.Sprint(v))
			label["annotator"] = raw
			continue
		}
		switch x := v.(type) {
		case string:
			vals[fp.Field] = x
		case json.Number:
			vals[fp.Field] = x.String()
			if fp.Field == "sample_id" || fp.Field == "episode_id" || fp.Field == "turn" {
				vals[fp.Field] = idText(x)
			}
		case bool:
			vals[fp.Field] = strconv.FormatBool(x)
		default:
			badf(fp.Path, "expected text, got %s (mapped to %s)", jsonKind(v), fp.Field)
		}
	}
	if len(bad) > 0 {
		if len(missing) > 0 {
			bad = append(bad, strings.Join(missing, ", ")+": missing")
		}
		return nil, c.errorf(line, "", "%s", strings.Join(bad, "; "))
	}
	if len(missing) > 0 {
		return nil, c.errorf(line, strings.Join(missing, ", "), "missing")
	}
	episode := vals["episode_id"]
	n := 0
	if s, ok := vals["turn"]; ok {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			return nil, c.errorf(line, pathOf(c.paths, "turn"), "%q: turns count from 1", s)
		}
	}
	if id, ok := vals["sample_id"]; ok && (episode == "" || n == 0) {
		if ep, t, ok := splitSampleID(id); ok {
			if episode == "" {
				episode = ep
			}
			if n == 0 {
				n, _ = strconv.Atoi(t)
			}
		}
	}
	if id := vals["sample_id"]; episode == "" && strings.TrimSpace(id) != "" {
		// Not an M3Bench conversation: each sample is its own one-turn episode, so the
		// same sample in several files (one per rater) is the same turn.
		episode = id
		if n == 0 {
			n = 1
		}
	}
	if episode == "" {
		episode = c.episodeID(line)
	}
	if n == 0 {
		c.seen[episode]++
		n = c.seen[episode]
	}
	src := map[string]any{}
	for k, v := range rawTop {
		if !used[k] {
			src[k] = v // as written: numbers keep their digits
		}
	}
	rec, err := c.turn(line, episode, n, vals["user_message"], vals["vlm_response"], vals["expected_answer"], images, vals["model"], src)
	if err != nil {
		return nil, err
	}
	t := &rec.Turn
	if id, ok := vals["sample_id"]; ok && id != "" {
		t.SampleID = id
	}
	if a, ok := vals["action_type"]; ok && strings.TrimSpace(a) != "" {
		t.ActionType = a
	}
	t.TaskType = vals["task_type"]
	// meta.source holds what no map names; another file with the same turns (another
	// rater's, with other extra fields) is the same turn, not a conflict: a stored turn keeps
	// the meta it has.
	t.Omitted.Meta = true
	// Likewise images and model a record does not give (a rater's file that has the
	// question and the answer but not the picture): the stored turn keeps its own, so the
	// labels attach to the turns an earlier, fuller file made instead of conflicting.
	t.Omitted.Images = images == nil
	_, hasModel := vals["model"]
	t.Omitted.Model = !hasModel
	if _, named := label["annotator"]; len(label) > 0 && !(named && len(label) == 1) {
		rec.Labels = append(rec.Labels, RawLabel{Field: "label", Line: line, Fields: label, Mapped: c.labelPaths()})
	}
	return []Record{rec}, nil
}

// noteKeys keeps the first record's keys, for the error of a path that no record holds.
func (c *conv) noteKeys(top any) {
	if obj, ok := top.(map[string]any); ok && c.firstKeys == nil {
		c.firstKeys = slices.Sorted(maps.Keys(obj))
	}
}

// noteFound records that a record held a label or annotator path.
func (c *conv) noteFound(fp FieldPath, ok bool) {
	if ok && c.found != nil && (fp.Field == "annotator" || strings.HasPrefix(fp.Field, labelPrefix)) {
		c.found[fp.Field] = true
	}
}

// checkLabelPaths fails the file when a mapped label or annotator path is in no record: a
// typo in --map (label.correctness=scor) would otherwise import the turns without a
// single label and exit 0. A path that some records lack is no label on those.
func (c *conv) checkLabelPaths() error {
	if c.firstKeys == nil {
		return nil // no record
	}
	var absent []string
	for _, fp := range c.paths {
		if (fp.Field == "annotator" || strings.HasPrefix(fp.Field, labelPrefix)) && !c.found[fp.Field] {
			absent = append(absent, fmt.Sprintf("%s (mapped to %s)", fp.Path, fp.Field))
		}
	}
	if len(absent) == 0 {
		return nil
	}
	return &Error{File: c.name, Line: 1, Field: strings.Join(absent, ", "), Row: c.row, Err: fmt.Errorf(
		"%w: in no record of the file; check the --map path (the first record's keys: %s)", ErrBadRecord, strings.Join(c.firstKeys, ", "))}
}

// labelPaths are the source paths of the mapped label fields, by label key, for errors.
func (c *conv) labelPaths() map[string]string {
	m := map[string]string{}
	for _, p := range c.paths {
		if name, ok := strings.CutPrefix(p.Field, labelPrefix); ok {
			m[name] = p.Path
		} else if p.Field == "annotator" {
			m["annotator"] = p.Path
		}
	}
	return m
}

func pathOf(paths []FieldPath, field string) string {
	for _, p := range paths {
		if p.Field == field {
			return p.Path
		}
	}
	return field
}

// idText is the text of a number used as an id: a whole number in its integer digits, so
// that 7.0 (pandas writes integer columns with missing values as floats) is the same
// sample as 7 and "7" in another file. Other numbers keep their digits as written.
func idText(n json.Number) string {
	s := n.String()
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return s
	}
	return strconv.FormatInt(int64(f), 10)
}

// jsonKind names the kind of a decoded JSON value with its article, for "got an object".
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case bool:
		return "true or false"
	}
	return fmt.Sprintf("a %T", v)
}

// ReadMapFile reads a map file, which holds one FIELD=PATH a line as --map takes it. Blank
// lines and lines starting with # are skipped. A lab saves the map of a format it brings often.
func ReadMapFile(path string) ([]string, error) {
	return ReadMapFileOr(path, nil)
}

// ReadMapFileOr is ReadMapFile with a fallback to the maps m3eval ships. When no file is at
// path and path is a bare name, the map of that name in builtin (NAME.map) is read instead.
func ReadMapFileOr(path string, builtin fs.FS) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && builtin != nil && !strings.ContainsAny(path, `/\.`) {
		if b, berr := fs.ReadFile(builtin, path+".map"); berr == nil {
			data, err = b, nil
		} else {
			names, _ := fs.Glob(builtin, "*.map")
			for i := range names {
				names[i] = strings.TrimSuffix(names[i], ".map")
			}
			return nil, fmt.Errorf("%s: no such file, nor a built-in map (built in: %s)", path, strings.Join(names, ", "))
		}
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, "=") {
			return nil, fmt.Errorf("%s:%d: %q: want FIELD=PATH", path, i+1, line)
		}
		out = append(out, line)
	}
	return out, nil
}
