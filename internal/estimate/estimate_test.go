package estimate

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

// TestFieldsAndValues: the built-in rubric's scale and Yes/No fields are estimated (not its
// comment), Yes is 1 and No 0 in any case, NA and non-numbers are no value.
func TestFieldsAndValues(t *testing.T) {
	r, err := rubric.Load("", nil, annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	fs := fields(r)
	var names []string
	for _, f := range fs {
		names = append(names, f.name)
	}
	if len(fs) != 5 {
		t.Fatalf("fields %v, want the 3 scales and 2 Yes/No fields", names)
	}
	yn := field{name: "x", yesNo: true}
	for s, want := range map[string]float64{"Yes": 1, "yes": 1, "No": 0, "NO": 0} {
		if v, ok := yn.value(s); !ok || v != want {
			t.Errorf("%q → %v %v, want %v", s, v, ok, want)
		}
	}
	for _, s := range []string{"NA", "", "maybe"} {
		if _, ok := yn.value(s); ok {
			t.Errorf("%q counted as a value", s)
		}
	}
	sc := field{name: "s", min: 1, max: 5}
	if v, ok := sc.value("3.5"); !ok || v != 3.5 {
		t.Errorf("3.5 → %v %v", v, ok)
	}
	if _, ok := sc.value("NaN"); ok {
		t.Error("NaN counted as a value")
	}
}

// TestNumJSON: an undefined number is null in JSON, never NaN (which is no JSON).
func TestNumJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		A Num    `json:"a"`
		B Num    `json:"b"`
		C [2]Num `json:"c"`
	}{Num(math.NaN()), 0.25, [2]Num{Num(math.Inf(1)), 1}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a":null,"b":0.25,"c":[null,1]}` {
		t.Errorf("got %s", b)
	}
}
