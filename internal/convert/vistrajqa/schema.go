package vistrajqa

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaJSON is the JSON Schema (draft 2020-12) of one input line, the documented contract
// of what the reader accepts. The reader checks records by hand for speed; the schema is
// compiled only to explain a record the hand checks cannot place (a value of the wrong JSON
// type), and TestSchemaAgreement keeps the two in step.
//
//go:embed schema/vistrajqa.schema.json
var SchemaJSON []byte

const schemaURL = "vistrajqa.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// Schema returns the compiled input schema.
func Schema() (*jsonschema.Schema, error) { return compiled() }

var printer = message.NewPrinter(language.English)

// locate turns a decoding error of record b into a field path and a message. encoding/json
// names the field of a type error without array indexes ("step_plan.step_num"), so the
// record is validated against the schema, whose errors carry the full instance location.
func locate(b []byte, decodeErr error) (path, msg string) {
	var syn *json.SyntaxError
	if errors.As(decodeErr, &syn) {
		return "", fmt.Sprintf("invalid JSON at byte %d: %v", syn.Offset, syn)
	}
	if sch, err := compiled(); err == nil {
		if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b)); err == nil {
			var ve *jsonschema.ValidationError
			if errors.As(sch.Validate(doc), &ve) {
				return schemaProblem(ve)
			}
		}
	}
	// The schema accepted what Go could not decode (an integer written as 3.0, say): say
	// what Go said, with the field as it names it.
	var te *json.UnmarshalTypeError
	if errors.As(decodeErr, &te) {
		return te.Field, fmt.Sprintf("JSON %s where %s expected", te.Value, te.Type)
	}
	return "", decodeErr.Error()
}

// schemaProblem picks the first leaf of a validation error tree (the innermost cause) and
// formats it the way the hand checks do.
func schemaProblem(ve *jsonschema.ValidationError) (path, msg string) {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	path = formatPath(ve.InstanceLocation)
	if req, ok := ve.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
		if path != "" {
			path += "."
		}
		return path + req.Missing[0], "missing"
	}
	return path, ve.ErrorKind.LocalizedString(printer)
}

// formatPath writes a JSON Pointer's tokens as step_plan[3].step_num.
func formatPath(tokens []string) string {
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
