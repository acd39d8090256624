// Package lmmslog reads the fields of an lmms-eval --log_samples sample that both the
// IllusionBench scorer and the conversation importer need: the document id and the
// model's response, in the shapes the versions of lmms-eval have written them.
package lmmslog

import (
	"encoding/json"
	"errors"
	"fmt"
)

// FieldError is a problem with one field of a sample.
type FieldError struct {
	Field string
	Err   error
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the field's error, for errors.Is and errors.As.
func (e *FieldError) Unwrap() error { return e.Err }

// DocID reads doc_id, a non-negative integer.
func DocID(sample map[string]json.RawMessage) (int64, error) {
	raw, ok := sample["doc_id"]
	if !ok {
		return 0, &FieldError{"doc_id", errors.New("missing")}
	}
	var id json.Number
	if err := json.Unmarshal(raw, &id); err != nil {
		return 0, &FieldError{"doc_id", fmt.Errorf("not a number: %s", raw)}
	}
	n, err := id.Int64()
	if err != nil || n < 0 {
		return 0, &FieldError{"doc_id", fmt.Errorf("not a non-negative integer: %s", raw)}
	}
	return n, nil
}

// Response reads the model's answer that the metrics saw. It is filtered_resps, or in older
// logs resps, the raw generation. The field holds a string, or a (nested) list whose first
// string is the answer; an empty list is the empty answer.
func Response(sample map[string]json.RawMessage) (string, error) {
	field := "filtered_resps"
	raw, ok := sample[field]
	if !ok || string(raw) == "null" {
		field = "resps"
		raw, ok = sample[field]
	}
	if !ok {
		return "", &FieldError{"filtered_resps", errors.New("missing (and no resps)")}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", &FieldError{field, err}
	}
	s, ok := FirstString(v)
	if !ok && !EmptyList(v) {
		return "", &FieldError{field, fmt.Errorf("no string in %.80s", raw)}
	}
	return s, nil
}

// FirstString finds the first string in a decoded JSON value. The value is a string, or a
// (nested) list as lmms-eval writes filtered_resps (["text"]) and resps ([["text"]]).
func FirstString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []any:
		for _, e := range x {
			if s, ok := FirstString(e); ok {
				return s, true
			}
		}
	}
	return "", false
}

// EmptyList reports whether v is a list holding nothing but empty lists.
func EmptyList(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		if !EmptyList(e) {
			return false
		}
	}
	return true
}
