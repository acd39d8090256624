package jsonpath_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/m3bench/m3eval/internal/jsonpath"
)

func TestSpelling(t *testing.T) {
	for p, want := range map[jsontext.Pointer]string{
		"":                                   "",
		"/sample_id":                         "sample_id",
		"/turns/0/human_annotation/comments": "turns[0].human_annotation.comments",
		"/a~1b/12":                           "a/b[12]",
	} {
		if got := jsonpath.Pointer(p); got != want {
			t.Errorf("Pointer(%q) = %q, want %q", p, got, want)
		}
	}
	if got := jsonpath.Tokens([]string{"step_plan", "3", "step_num"}); got != "step_plan[3].step_num" {
		t.Errorf("Tokens = %q", got)
	}
}

func TestSchemaProblem(t *testing.T) {
	sch, err := jsonpath.CompileSchema("s.json", []byte(`{"type":"object","required":["id"],"properties":{"items":{"type":"array","items":{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, field, msg string }{
		{`{"items":[]}`, "id", "missing"},
		{`{"id":1,"items":[{"n":1},{}]}`, "items[1].n", "missing"},
		{`{"id":1,"items":[{"n":"x"}]}`, "items[0].n", "got string, want integer"},
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.in)))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		var ve *jsonschema.ValidationError
		if !errors.As(sch.Validate(inst), &ve) {
			t.Fatalf("%s validated", tc.in)
		}
		if f, m := jsonpath.SchemaProblem(ve); f != tc.field || m != tc.msg {
			t.Errorf("%s: %q %q, want %q %q", tc.in, f, m, tc.field, tc.msg)
		}
	}
}
