package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
)

func TestSections(t *testing.T) {
	res := results(t)
	secs := []Section{{Overall: true, Results: res}, {Value: "mislead", Results: res}, {Value: "", Results: res[:1]}}
	in := ScoreInputs{Database: "m.db", By: "action_type", Judges: []string{"gpt"}}

	var b bytes.Buffer
	if err := WriteSections(&b, secs, in, AgreementOptions{Format: JSON}); err != nil {
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
	if err := WriteSections(&b, secs, in, AgreementOptions{Format: Table}); err != nil {
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
	if err := WriteSections(&b, secs, in, AgreementOptions{Format: CSV}); err != nil {
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

// TestKappaLegendWithoutColour: without colour the legend's squares would all look alike,
// so it names the bands by their ranges in words and draws no square; in colour each band's
// square has its own colour (issue #29 item 9).
func TestKappaLegendWithoutColour(t *testing.T) {
	res := []agree.FieldResult{}
	var plain, colour strings.Builder
	if err := writeTable(&plain, res, AgreementOptions{Format: Table}); err != nil {
		t.Fatal(err)
	}
	if err := writeTable(&colour, res, AgreementOptions{Format: Table, Color: true}); err != nil {
		t.Fatal(err)
	}
	want := "Strength of κ and AC (Landis & Koch), by value: poor (< 0), slight (0–0.20), fair (0.21–0.40), moderate (0.41–0.60), substantial (0.61–0.80), almost perfect (0.81–1)\n"
	if !strings.Contains(plain.String(), want) || strings.Contains(plain.String(), "■") {
		t.Errorf("without colour:\n%s", plain.String())
	}
	for _, line := range strings.Split(colour.String(), "\n") {
		if !strings.HasPrefix(line, "Strength of κ") {
			continue
		}
		// Each band is preceded by its own colour escape: six distinct sequences.
		if n := strings.Count(line, "\x1b[38;2;"); n != len(bands) {
			t.Errorf("colour legend has %d coloured bands, want %d:\n%q", n, len(bands), line)
		}
	}
}
