package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	res := results(t)
	secs := []Section{{Overall: true, Results: res}, {Value: "mislead", Results: res}, {Value: "", Results: res[:1]}}
	in := ScoreInputs{Database: "m.db", By: "action_type", Judges: []string{"gpt"}}

	var b bytes.Buffer
	if err := WriteSections(&b, secs, in, Options{Format: JSONFmt}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Inputs map[string]any                             `json:"inputs"`
		Fields map[string]json.RawMessage                 `json:"fields"`
		Groups map[string]struct{ Fields map[string]any } `json:"groups"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Inputs["by"] != "action_type" || len(doc.Fields) != 2 || len(doc.Groups) != 2 ||
		len(doc.Groups["mislead"].Fields) != 2 || len(doc.Groups[""].Fields) != 1 {
		t.Fatalf("json: %s", b.String())
	}

	b.Reset()
	if err := WriteSections(&b, secs, in, Options{Format: Table}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\nvaried (ordinal", "action_type = mislead · constant (ordinal", "action_type = (none) · constant"} {
		if !strings.Contains("\n"+out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Count(out, "Strength of κ and AC (Landis & Koch)") != 1 {
		t.Error("the legend is not written once for the whole report")
	}
	if res[0].Field.Name != "constant" {
		t.Fatalf("the caller's result was renamed to %q", res[0].Field.Name)
	}

	b.Reset()
	if err := WriteSections(&b, secs, in, Options{Format: CSV}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var overall, grouped bool
	for _, r := range recs[1:] {
		overall = overall || (r[0] == "" && r[1] == "" && r[2] == "varied")
		grouped = grouped || (r[0] == "action_type" && r[1] == "mislead" && r[2] == "varied")
	}
	if recs[0][0] != "by" || !overall || !grouped {
		t.Fatalf("csv rows: overall %v, grouped %v, header %v", overall, grouped, recs[0])
	}
}
