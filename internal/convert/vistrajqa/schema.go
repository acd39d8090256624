package vistrajqa

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"reflect"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/m3bench/m3eval/internal/jsonpath"
)

// SchemaJSON is the JSON Schema (draft 2020-12) of one input line, the documented contract
// of what the reader accepts. The reader checks records by hand for speed; the schema is
// compiled only to explain a record the hand checks cannot place (a value of the wrong JSON
// type), and TestSchemaAgreement keeps the two in step.
//
//go:embed schema/vistrajqa.schema.json
var SchemaJSON []byte

const schemaURL = "vistrajqa.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) { return jsonpath.CompileSchema(schemaURL, SchemaJSON) })

// Schema returns the compiled input schema.
func Schema() (*jsonschema.Schema, error) { return compiled() }

// locate turns a decoding error of record b into a field path and a message. A value of
// the wrong type is explained by validating the record against the schema, so that the
// message reads like the schema's rule ("got string, want integer"); what the schema does not
// forbid but the decoder does (invalid JSON or UTF-8, a key given twice, 3.0 for an integer)
// is explained by the decoder's error and its JSON Pointer.
func locate(b []byte, decodeErr error) (path, msg string) {
	var syn *jsontext.SyntacticError
	if errors.As(decodeErr, &syn) {
		return jsonpath.Pointer(syn.JSONPointer), fmt.Sprintf("invalid JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	}
	if sch, err := compiled(); err == nil {
		if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b)); err == nil {
			var ve *jsonschema.ValidationError
			if errors.As(sch.Validate(doc), &ve) {
				return schemaProblem(ve)
			}
		}
	}
	var se *jsonv2.SemanticError
	if errors.As(decodeErr, &se) {
		msg := "cannot be decoded"
		switch {
		case se.JSONValue != nil && se.GoType != nil:
			msg = fmt.Sprintf("%s, want %s", se.JSONValue, goKind(se.GoType))
		case se.Err != nil:
			msg = se.Err.Error()
		}
		return jsonpath.Pointer(se.JSONPointer), msg
	}
	return "", decodeErr.Error()
}

// goKind names the JSON a Go type of the wire structs wants.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

// schemaProblem picks the first leaf of a validation error tree (the innermost cause) and
// formats it the way the hand checks do.
func schemaProblem(ve *jsonschema.ValidationError) (path, msg string) {
	return jsonpath.SchemaProblem(ve)
}
