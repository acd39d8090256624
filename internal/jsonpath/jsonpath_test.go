package jsonpath_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

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
