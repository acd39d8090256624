package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/jsonpath"
)

// recordJSON is the union of the turn, episode and labeled-sample shapes. Pointers tell a
// missing key from an empty value.
type recordJSON struct {
	SampleID         *string           `json:"sample_id"`
	EpisodeID        *string           `json:"episode_id"`
	Turn             *int              `json:"turn"`
	ActionType       *string           `json:"action_type"`
	TaskType         *string           `json:"task_type"`
	UserMessage      *string           `json:"user_message"`
	VLMResponse      *string           `json:"vlm_response"`
	ExpectedAnswer   *string           `json:"expected_answer"`
	Images           []string          `json:"images"`
	Model            *string           `json:"model"`
	Meta             json.RawMessage   `json:"meta"`
	HumanAnnotation  json.RawMessage   `json:"human_annotation"`
	HumanAnnotations []json.RawMessage `json:"human_annotations"`
	Turns            []json.RawMessage `json:"turns"`
}

// recordOptions decode with encoding/json's semantics (the JSON v2 decoder set to behave as
// v1 is about three times faster), except that invalid UTF-8 and a key given twice are
// errors: encoding/json would silently put U+FFFD in the text, or keep the last value.
var recordOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
	jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false))

// unmarshalRecord decodes a record. When the fast decoder fails for any other reason,
// encoding/json decodes again, so errors keep the types and wording that fieldError knows.
func unmarshalRecord(b []byte, rec *recordJSON) error {
	if off, esc := loneSurrogate(b); off >= 0 {
		return &strictError{lines: bytes.Count(b[:off], []byte("\n")), msg: surrogateMsg(esc)}
	}
	err := jsonv2.Unmarshal(b, rec, recordOptions)
	if err == nil {
		return nil
	}
	if se := asStrictError(b, err); se != nil {
		return se
	}
	*rec = recordJSON{}
	return json.Unmarshal(b, rec)
}

// strictError is invalid UTF-8 or a duplicate key, where in the record it is.
type strictError struct {
	lines int    // line breaks in the record before the problem
	field string // dotted path
	msg   string
}

func (e *strictError) Error() string { return e.msg }

// asStrictError tells whether err is one of the two strict rules, and where. The decoder in v1
// mode reports a v1 SyntaxError, which carries no path; a token walk over the
// record, done only then, finds it.
func asStrictError(b []byte, err error) *strictError {
	var v1 *jsonv1.SyntaxError
	if !errors.As(err, &v1) {
		return nil
	}
	var msg string
	switch {
	case strings.Contains(v1.Error(), jsontext.ErrDuplicateName.Error()):
		msg = "the key is given twice (which value is meant?)"
	case !utf8.Valid(b):
		msg = "invalid UTF-8 (save the file as UTF-8)"
	default:
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false))
	for {
		_, err := dec.ReadToken()
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			off := min(max(se.ByteOffset, 0), int64(len(b)))
			return &strictError{lines: bytes.Count(b[:off], []byte("\n")), field: jsonpath.Pointer(se.JSONPointer), msg: msg}
		}
		if err != nil {
			return &strictError{msg: msg}
		}
	}
}

// splitSampleID splits a sample id of the form <episode>_turn_<n>, as the regular expression
// ^(.+)_turn_([0-9]+)$ would (only the last "_turn_" can be followed by nothing but digits).
func splitSampleID(id string) (episode, turn string, ok bool) {
	i := strings.LastIndex(id, "_turn_")
	if i < 1 {
		return "", "", false
	}
	turn = id[i+len("_turn_"):]
	if turn == "" || strings.TrimLeft(turn, "0123456789") != "" {
		return "", "", false
	}
	return id[:i], turn, true
}

// parse turns one top-level JSON value into its records: one for a turn, one per turn for an
// episode.
func (r *Reader) parse(line int, raw json.RawMessage) ([]Record, error) {
	var rec recordJSON
	if err := unmarshalRecord(raw, &rec); err != nil {
		return nil, r.fieldError(line, "", err)
	}
	return r.build(line, &rec)
}

// build checks a decoded record and returns its turns.
func (r *Reader) build(line int, rec *recordJSON) ([]Record, error) {
	if rec.Turns == nil {
		t, err := r.turn(line, "", rec, nil)
		if err != nil {
			return nil, err
		}
		return []Record{*t}, nil
	}
	// An episode record: its turns inherit its id and images.
	if rec.EpisodeID == nil || *rec.EpisodeID == "" {
		return nil, r.errorf(line, "episode_id", "missing (an episode record needs its id)")
	}
	if len(rec.Turns) == 0 {
		return nil, r.errorf(line, "turns", "empty: an episode record needs at least one turn")
	}
	out := make([]Record, 0, len(rec.Turns))
	for i, rawTurn := range rec.Turns {
		prefix := fmt.Sprintf("turns[%d].", i)
		var tr recordJSON
		if err := unmarshalRecord(rawTurn, &tr); err != nil {
			return nil, r.fieldError(line, prefix, err)
		}
		if tr.Turns != nil {
			return nil, r.errorf(line, prefix+"turns", "episodes cannot nest")
		}
		t, err := r.turn(line, prefix, &tr, rec)
		if err != nil {
			return nil, err
		}
		if t.Turn.Turn == 0 {
			t.Turn.Turn = i + 1
		}
		out = append(out, *t)
	}
	return out, nil
}

// turn checks one turn record; ep is the enclosing episode record, if any.
func (r *Reader) turn(line int, prefix string, j *recordJSON, ep *recordJSON) (*Record, error) {
	rec := &Record{Line: line}
	t := &rec.Turn
	if j.SampleID == nil || strings.TrimSpace(*j.SampleID) == "" {
		return nil, r.errorf(line, prefix+"sample_id", "missing")
	}
	t.SampleID = *j.SampleID
	switch {
	case j.EpisodeID != nil && *j.EpisodeID != "":
		t.EpisodeID = *j.EpisodeID
		if ep != nil && t.EpisodeID != *ep.EpisodeID {
			return nil, r.errorf(line, prefix+"episode_id", "%q differs from the episode's %q", t.EpisodeID, *ep.EpisodeID)
		}
	case ep != nil:
		t.EpisodeID = *ep.EpisodeID
	}
	if j.Turn != nil {
		if *j.Turn < 1 {
			return nil, r.errorf(line, prefix+"turn", "%d: turns count from 1", *j.Turn)
		}
		t.Turn = *j.Turn
	}
	plain := false // not an M3Bench conversation: a sample on its own
	if t.EpisodeID == "" || t.Turn == 0 {
		episode, turn, ok := splitSampleID(t.SampleID)
		switch {
		case ok:
			n, err := strconv.Atoi(turn)
			if err != nil || n < 1 {
				return nil, r.errorf(line, prefix+"sample_id", "%q: the turn number after _turn_ must be 1 or more", t.SampleID)
			}
			if t.EpisodeID == "" {
				t.EpisodeID = episode
			}
			if t.Turn == 0 {
				t.Turn = n
			}
		case t.EpisodeID == "" && ep == nil:
			// Data that is not an M3Bench conversation (#39): each sample is a one-turn
			// episode of its own, and the M3Bench-only fields have defaults below.
			t.EpisodeID, plain = t.SampleID, true
			if t.Turn == 0 {
				t.Turn = 1
			}
		case t.EpisodeID == "":
			return nil, r.errorf(line, prefix+"episode_id", "missing, and sample_id %q is not of the form <episode>_turn_<n>", t.SampleID)
		case ep == nil:
			return nil, r.errorf(line, prefix+"turn", "missing, and sample_id %q is not of the form <episode>_turn_<n>", t.SampleID)
		}
	}
	// Every missing field at once, not one per run (#39).
	var missing []string
	for _, f := range []struct {
		name string
		src  *string
		dst  *string
	}{
		{"action_type", j.ActionType, &t.ActionType},
		{"task_type", j.TaskType, &t.TaskType},
		{"user_message", j.UserMessage, &t.UserMessage},
		{"vlm_response", j.VLMResponse, &t.VLMResponse},
		{"expected_answer", j.ExpectedAnswer, &t.ExpectedAnswer},
	} {
		if f.src == nil {
			if plain && f.name != "user_message" && f.name != "vlm_response" {
				// A plain sample: no action type ("unknown", which the rubric treats as a
				// turn that does not mislead), no task type, no expected answer.
				if f.name == "action_type" {
					*f.dst = DefaultActionType
				}
				continue
			}
			missing = append(missing, prefix+f.name)
			continue
		}
		*f.dst = *f.src
	}
	if len(missing) > 0 {
		hint := ""
		if len(missing) > 1 {
			hint = " (records in another layout: import --map, docs/importing.md)"
		}
		return nil, r.errorf(line, strings.Join(missing, ", "), "missing%s", hint)
	}
	if strings.TrimSpace(t.ActionType) == "" {
		return nil, r.errorf(line, prefix+"action_type", "empty")
	}
	t.Images = j.Images
	if t.Images == nil && ep != nil {
		t.Images = ep.Images
	}
	t.Omitted.Images = t.Images == nil
	t.Omitted.Model = j.Model == nil
	t.Omitted.Meta = len(j.Meta) == 0
	if j.Model != nil {
		t.Model = *j.Model
	}
	if len(j.Meta) > 0 && !bytes.Equal(bytes.TrimSpace(j.Meta), []byte("null")) {
		if m := bytes.TrimSpace(j.Meta); len(m) == 0 || m[0] != '{' {
			return nil, r.errorf(line, prefix+"meta", "must be a JSON object")
		}
		t.Meta = append(json.RawMessage(nil), j.Meta...)
		// The keys with a fixed meaning must have their type (docs/judge.md); others pass as given.
		if _, err := dataset.ParseMeta(t.Meta); err != nil {
			var me *dataset.MetaError
			if errors.As(err, &me) && me.Key != "" {
				return nil, r.errorf(line, prefix+"meta."+me.Key, "%s", me.Msg)
			}
			return nil, r.errorf(line, prefix+"meta", "%v", err)
		}
	}
	if len(j.HumanAnnotation) > 0 && j.HumanAnnotations != nil {
		return nil, r.errorf(line, prefix+"human_annotations", "give human_annotation or human_annotations, not both")
	}
	if len(j.HumanAnnotation) > 0 && !bytes.Equal(bytes.TrimSpace(j.HumanAnnotation), []byte("null")) {
		l, err := r.rawLabel(line, prefix+"human_annotation", j.HumanAnnotation)
		if err != nil {
			return nil, err
		}
		rec.Labels = append(rec.Labels, l)
	}
	for i, raw := range j.HumanAnnotations {
		l, err := r.rawLabel(line, fmt.Sprintf("%shuman_annotations[%d]", prefix, i), raw)
		if err != nil {
			return nil, err
		}
		rec.Labels = append(rec.Labels, l)
	}
	return rec, nil
}

func (r *Reader) rawLabel(line int, field string, raw json.RawMessage) (RawLabel, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return RawLabel{}, r.errorf(line, field, "must be a JSON object")
	}
	return RawLabel{Field: field, Line: line, Fields: m}, nil
}

// fieldError turns a json type error into an Error naming the field.
func (r *Reader) fieldError(line int, prefix string, err error) error {
	var se *strictError
	if errors.As(err, &se) {
		return r.errorf(line+se.lines, strings.TrimSuffix(prefix+se.field, "."), "%s", se.msg)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return r.errorf(line, strings.TrimSuffix(prefix, "."), "a record must be a JSON object, not %s", te.Value)
		}
		return r.errorf(line, prefix+field, "expected %s, got %s", kindName(te.Type.Kind().String()), te.Value)
	}
	return r.errorf(line, strings.TrimSuffix(prefix, "."), "%v", err)
}

func kindName(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "a number"
	case "string", "ptr":
		return "text"
	case "slice":
		return "a list"
	}
	return k
}

// loneSurrogate finds an escaped UTF-16 surrogate that is not half of a pair ("\ud800"
// alone) in the strings of a JSON text, which decoders turn silently into U+FFFD: it is no
// character, like invalid UTF-8. It returns the escape's offset and text, or -1.
func loneSurrogate(b []byte) (int, string) {
	if !bytes.Contains(b, []byte(`\u`)) {
		return -1, ""
	}
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escape such as \\ or \": its second byte is not a backslash that starts one
			continue
		}
		switch {
		case r >= 0xd800 && r <= 0xdbff:
			if lo, ok := hex4(i + 6); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 11
				continue
			}
			return i, string(b[i : i+6])
		case r >= 0xdc00 && r <= 0xdfff:
			return i, string(b[i : i+6])
		}
		i += 5
	}
	return -1, ""
}

func surrogateMsg(esc string) string {
	return "a lone surrogate " + esc + " is not a character (save the file as UTF-8, or escape the pair in full)"
}
