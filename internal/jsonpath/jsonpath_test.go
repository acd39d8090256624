package jsonpath

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"objects_per_image", "0", "1", "attributes", "color"}, "objects_per_image[0][1].attributes.color"},
		{[]string{"0", "x"}, "[0].x"},
	} {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSchemaProblem(t *testing.T) {
	schema := `{"type":"object","required":["id"],"properties":{"items":{"type":"array","items":{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}}}}`
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	c := jsonschema.NewCompiler()
	c.AddResource("s.json", doc)
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, field, msg string }{
		{`{"items":[]}`, "id", "missing"},
		{`{"id":1,"items":[{"n":1},{}]}`, "items[1].n", "missing"},
		{`{"id":1,"items":[{"n":"x"}]}`, "items[0].n", "got string, want integer"},
	} {
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.in)))
		var ve *jsonschema.ValidationError
		if !errors.As(sch.Validate(inst), &ve) {
			t.Fatalf("%s validated", tc.in)
		}
		if f, m := SchemaProblem(ve); f != tc.field || m != tc.msg {
			t.Errorf("%s: %q %q, want %q %q", tc.in, f, m, tc.field, tc.msg)
		}
	}
}
