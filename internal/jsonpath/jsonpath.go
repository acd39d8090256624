// Package jsonpath spells a location in a JSON document the way m3eval's errors name fields:
// the pointer /turns/0/human_annotation/comments becomes turns[0].human_annotation.comments.
// It also compiles the embedded JSON Schemas that input readers validate against and names
// the field and the problem of a validation error, so those readers' messages read alike.
package jsonpath

import (
	"bytes"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Pointer spells a JSON pointer.
func Pointer(p jsontext.Pointer) string { return spell(p.Tokens()) }

// Tokens spells a pointer given as its tokens (as JSON Schema validators report them).
func Tokens(tokens []string) string { return spell(slices.Values(tokens)) }

// spell writes array indexes as [n] and object keys joined by dots.
func spell(tokens iter.Seq[string]) string {
	var b strings.Builder
	for t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// CompileSchema compiles a JSON Schema document (an embedded file) under a resource name.
func CompileSchema(url string, doc []byte) (*jsonschema.Schema, error) {
	d, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, d); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

var printer = message.NewPrinter(language.English)

// SchemaProblem says where and what a JSON Schema validation error is, from the first leaf
// of its tree (the innermost cause). A missing property is named as the field, with
// "missing".
func SchemaProblem(ve *jsonschema.ValidationError) (field, msg string) {
	ve = Leaf(ve)
	field = Tokens(ve.InstanceLocation)
	if req, ok := ve.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
		return Join(field, req.Missing[0]), "missing"
	}
	return field, ve.ErrorKind.LocalizedString(printer)
}

// Leaf is the first innermost cause of a validation error.
func Leaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

// Join appends a property name to a path.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
