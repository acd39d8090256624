// Package jsonpath names the place of a problem in a JSON document the way m3eval's errors
// do (objects_per_image[0][1].attributes.color), from JSON Pointer tokens or from a JSON
// Schema validation error, and compiles the embedded schemas those errors come from. The readers that validate input (simulate scenes, the VisTrajQA
// and DomainAV2 converters) share it so their messages read alike.
package jsonpath

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

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

// Format writes JSON Pointer tokens as step_plan[3].step_num.
func Format(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
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

var printer = message.NewPrinter(language.English)

// SchemaProblem picks the first leaf of a validation error tree (the innermost cause) and
// says where and what: a missing property is named as the field, with "missing".
func SchemaProblem(ve *jsonschema.ValidationError) (field, msg string) {
	ve = Leaf(ve)
	field = Format(ve.InstanceLocation)
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
