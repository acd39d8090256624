package ingest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// labelKeys are the keys of a label that are not rubric fields: who, when, and in what state.
var labelKeys = map[string]bool{
	"annotator": true, "annotated_at": true, "active_seconds": true, "rubric_version": true,
	"flagged": true, "flag_reason": true, "status": true, "stale": true,
}

// MaxActiveSeconds bounds a label's active time. A year is more than anyone spends on one
// turn, and far below where milliseconds overflow the store's int64 (about 9.2e15 s).
const MaxActiveSeconds = 365 * 24 * 3600

// LabelOptions say how raw labels become stored labels.
type LabelOptions struct {
	Rubric *rubric.Rubric
	// Annotator names the annotator of labels that do not name one themselves.
	Annotator string
	// Now stamps labels that carry no annotated_at.
	Now time.Time
	// ImageBase, when set, is the directory relative image paths are resolved against:
	// the imported file's own directory, made absolute, so the stored paths work from any
	// working directory. A relative path that names no file there is kept as written (it
	// may be relative to where annotate runs, as the demo's are). URLs and absolute paths
	// stay as they are.
	ImageBase string
	// Actions, when set, is the action-type catalogue: a turn whose action_type it lacks is
	// refused, unless AllowUnknownActions.
	Actions             rubric.Actions
	AllowUnknownActions bool
}

// ImageResolver resolves relative image paths against a base directory (see
// LabelOptions.ImageBase), looking each distinct path up once.
type ImageResolver struct {
	base   string
	exists func(string) bool
	seen   map[string]string
}

// NewImageResolver returns an ImageResolver that resolves image paths against base. exists
// tells whether a file is there.
func NewImageResolver(base string, exists func(string) bool) *ImageResolver {
	return &ImageResolver{base: base, exists: exists, seen: map[string]string{}}
}

// Resolve rewrites images in place.
func (r *ImageResolver) Resolve(images []string) {
	if r == nil || r.base == "" {
		return
	}
	for i, p := range images {
		if p == "" || filepath.IsAbs(p) || strings.Contains(p, "://") {
			continue
		}
		out, ok := r.seen[p]
		if !ok {
			out = p
			if j := filepath.Join(r.base, p); r.exists(j) {
				out = j
			}
			r.seen[p] = out
		}
		images[i] = out
	}
}

// Label checks a raw label against the rubric and returns it ready to store. A label that
// says nothing of its state is a done one, and a done one must be complete.
func Label(file string, rec *Record, raw RawLabel, o LabelOptions) (*dataset.Label, error) {
	fail := func(field string, err error) error {
		if path, ok := raw.Mapped[field]; ok {
			return &Error{File: file, Line: raw.Line, Field: fmt.Sprintf("%s (mapped to label.%s)", path, field), Err: err}
		}
		if field != "" {
			field = raw.Field + "." + field
		} else {
			field = raw.Field
		}
		return &Error{File: file, Line: raw.Line, Field: field, Err: err}
	}
	failf := func(field, format string, args ...any) error {
		return fail(field, fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...))
	}
	l := &dataset.Label{Annotator: o.Annotator, Values: rubric.Values{}, Status: dataset.StatusDone,
		AnnotatedAt: o.Now.UTC().Truncate(time.Second), RubricVersion: o.Rubric.Version}
	str := func(key string, dst *string) error {
		v, ok := raw.Fields[key]
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return failf(key, "expected text, got %s", v)
		}
		return nil
	}
	var at, annotator string
	status := string(l.Status)
	for _, step := range []error{
		str("annotator", &annotator), str("annotated_at", &at), str("rubric_version", &l.RubricVersion),
		str("flag_reason", &l.FlagReason), str("status", &status),
	} {
		if step != nil {
			return nil, step
		}
	}
	l.Status = dataset.Status(status)
	if annotator != "" {
		l.Annotator = annotator
	}
	if strings.TrimSpace(l.Annotator) == "" {
		return nil, failf("", "the label names no annotator: pass --annotator NAME")
	}
	if err := checkAnnotator(l.Annotator); err != nil {
		field := "annotator"
		if annotator == "" {
			field, err = "", fmt.Errorf("--annotator: %w", err)
		}
		return nil, fail(field, err)
	}
	l.StampedNow = at == ""
	if at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return nil, failf("annotated_at", "%q is not an RFC 3339 time such as 2026-01-31T09:30:00Z", at)
		}
		l.AnnotatedAt = t.UTC()
	}
	if v, ok := raw.Fields["active_seconds"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &l.ActiveSeconds); err != nil || !(l.ActiveSeconds >= 0 && l.ActiveSeconds <= MaxActiveSeconds) {
			return nil, failf("active_seconds", "expected a number of seconds from 0 to %d (a year), got %s", MaxActiveSeconds, v)
		}
	}
	if v, ok := raw.Fields["flagged"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &l.Flagged); err != nil {
			return nil, failf("flagged", "expected true or false, got %s", v)
		}
	}
	if l.Status != dataset.StatusDone && l.Status != dataset.StatusDraft {
		return nil, failf("status", "%q: expected done or draft", l.Status)
	}
	if v, ok := raw.Fields["stale"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &l.Stale); err != nil {
			return nil, failf("stale", "expected true or false, got %s", v)
		}
		if l.Stale && l.Status != dataset.StatusDraft {
			return nil, failf("stale", "a label made on earlier content is a draft until confirmed again: add \"status\": \"draft\"")
		}
	}
	item := rec.Turn.Item()
	for key, v := range raw.Fields {
		if labelKeys[key] {
			continue
		}
		f, ok := o.Rubric.Field(key)
		if !ok {
			return nil, failf(key, "not a field of the rubric %s", o.Rubric.Name)
		}
		// In a draft, null is an unanswered field; in a done label every field is answered,
		// so null there is NA (the guide writes NA as null).
		if l.Status == dataset.StatusDraft && strings.TrimSpace(string(v)) == "null" {
			continue
		}
		val, ok, err := f.ParseJSON(v)
		if err != nil {
			return nil, fail(key, err)
		}
		if !ok {
			continue
		}
		if err := f.Check(val, item); err != nil {
			return nil, fail(key, err)
		}
		l.Values[key] = val
	}
	l.Values = o.Rubric.Apply(l.Values, item)
	if l.Status == dataset.StatusDone {
		if missing := o.Rubric.Missing(l.Values, item); len(missing) > 0 {
			return nil, fail(missing[0], fmt.Errorf("%w: missing (required for a done label; mark drafts with \"status\": \"draft\")", ErrBadRecord))
		}
	}
	return l, nil
}

// checkAnnotator refuses a name that would not print as itself: a control character (an
// escape sequence on every screen and log line that shows the name), a bidirectional or other
// format character (U+202E turns the rest of a line around), invalid UTF-8. serve refuses
// such names too.
func checkAnnotator(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: the annotator's name is not valid UTF-8", ErrBadRecord)
	}
	for _, r := range name {
		if r != ' ' && !unicode.IsPrint(r) {
			return fmt.Errorf("%w: the annotator's name %s has a control or format character (U+%04X)", ErrBadRecord, strconv.QuoteToASCII(name), r)
		}
	}
	return nil
}
