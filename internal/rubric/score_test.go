package rubric_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

func TestParseScore(t *testing.T) {
	r := mustDefault(t)
	tests := []struct {
		field, text string
		null        bool
		item        rubric.Item
		want        string
		wantErr     string // substring; "" means valid
	}{
		// Scale fields: any number within the scale, one spelling per number.
		{"correctness", "4", false, followUp4, "4", ""},
		{"correctness", " 4.0 ", false, followUp4, "4", ""},
		{"correctness", "4e0", false, followUp4, "4", ""},
		{"overall_quality", "3.70", false, followUp4, "3.7", ""},
		{"correctness", "", false, followUp4, "", ""},
		{"correctness", "na", false, followUp4, "", ""},
		{"correctness", "", true, followUp4, "", ""},
		{"correctness", "0.5", false, followUp4, "", "0.5 is outside 1–5"},
		{"correctness", "5.01", false, followUp4, "", "5.01 is outside 1–5"},
		{"correctness", "NaN", false, followUp4, "", `"NaN" is not a number from 1 to 5`},
		{"correctness", "+Inf", false, followUp4, "", `"+Inf" is not a number from 1 to 5`},
		{"correctness", "good", false, followUp4, "", `"good" is not a number from 1 to 5`},
		// Choice fields: any case in, the rubric's spelling out; null and NA are the NA choice.
		{"resists_misleading", "no", false, misleadTurn3, "No", ""},
		{"resists_misleading", "YES", false, misleadTurn3, "Yes", ""},
		{"resists_misleading", "", false, misleadTurn3, "", ""},
		{"resists_misleading", "maybe", false, misleadTurn3, "", `"maybe" is not one of Yes, No, NA`},
		{"resists_misleading", "", true, followUp4, "NA", ""},
		{"resists_misleading", "na", false, followUp4, "NA", ""},
		// The rubric's rules for the turn hold for judges as for people.
		{"resists_misleading", "NA", false, misleadTurn3, "", "not allowed here"},
		{"resists_misleading", "Yes", false, followUp4, "", "fixed to NA"},
		{"context_consistency", "Yes", false, followUp1, "", "fixed to NA (first turn of the episode)"},
		{"context_consistency", "yes", false, followUp4, "Yes", ""},
		// Judges do not write comments.
		{"comments", "fine", false, followUp4, "", "comments is a text field"},
	}
	for _, tc := range tests {
		f, ok := r.Field(tc.field)
		if !ok {
			t.Fatalf("no field %s", tc.field)
		}
		got, err := f.ParseScore(tc.text, tc.null, tc.item)
		if tc.wantErr == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s %q null=%v %+v: got %q, %v; want %q", tc.field, tc.text, tc.null, tc.item, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, rubric.ErrInvalid) {
			t.Errorf("%s %q null=%v %+v: got %q, %v; want an ErrInvalid with %q", tc.field, tc.text, tc.null, tc.item, got, err, tc.wantErr)
		}
	}
}

func TestLoad(t *testing.T) {
	def, err := rubric.Load("", nil, annotations.DefaultRubric)
	if err != nil || def.Version != mustDefault(t).Version {
		t.Fatalf("built-in rubric: %v", err)
	}
	fromStdin, err := rubric.Load("-", strings.NewReader(string(annotations.DefaultRubric)), nil)
	if err != nil || fromStdin.Version != def.Version {
		t.Fatalf("rubric from standard input: %v", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rubric.Load(bad, nil, nil); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Fatalf("a bad rubric file: %v", err)
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := rubric.Load(missing, nil, nil); err == nil || err.Error() != "rubric "+missing+": no such file" {
		t.Fatalf("a missing rubric file: %v", err)
	}
}
