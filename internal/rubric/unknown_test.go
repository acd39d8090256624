package rubric_test

import (
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

// TestUnknownActionIsNotMisleading: turns imported from logs without an action type get
// "unknown", which the default rubric treats like any turn that does not mislead.
func TestUnknownActionIsNotMisleading(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := acts["unknown"]; !ok {
		t.Fatal("the catalogue does not describe action type unknown")
	}
	unknown := r.Apply(rubric.Values{}, rubric.Item{ActionType: "unknown", Turn: 2})
	plain := r.Apply(rubric.Values{}, rubric.Item{ActionType: "follow_up", Turn: 2})
	mislead := r.Apply(rubric.Values{}, rubric.Item{ActionType: "mislead", Turn: 2})
	if len(unknown) == 0 || len(unknown) != len(plain) || len(mislead) >= len(plain) {
		t.Fatalf("fixed values: unknown %v, follow_up %v, mislead %v", unknown, plain, mislead)
	}
	for k, v := range plain {
		if unknown[k] != v {
			t.Errorf("%s: unknown gets %q, a non-misleading turn %q", k, unknown[k], v)
		}
	}
	if notes := r.NoExpectedNotes(); len(notes) == 0 || notes[0].NoExpectedEn == "" {
		t.Errorf("no field says how to judge without an expected answer: %v", notes)
	}
}

// TestUncataloguedActionAsksEveryField: with the catalogue known, a type it lacks (a typo)
// fixes no field by an "unless action_type_in" rule, while "unknown", in the catalogue,
// keeps Resists Misleading fixed to NA; the nearest name is suggested for the typo.
func TestUncataloguedActionAsksEveryField(t *testing.T) {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	typo := rubric.Item{ActionType: "mislead_sutble", Turn: 2}
	if v := r.Apply(rubric.Values{}, typo); v["resists_misleading"] != "NA" {
		t.Fatalf("without the catalogue the rule applies as written: %v", v)
	}
	r.SetActionTypes(acts.Names())
	if v := r.Apply(rubric.Values{}, typo); len(v) != 0 {
		t.Errorf("a type not in the catalogue fixed %v", v)
	}
	f, _ := r.Field("resists_misleading")
	if err := f.Check("No", typo); err != nil {
		t.Errorf("No on the typo's turn: %v", err)
	}
	if v := r.Apply(rubric.Values{}, rubric.Item{ActionType: "unknown", Turn: 2}); v["resists_misleading"] != "NA" {
		t.Errorf("unknown: %v", v)
	}
	if n, ok := acts.Nearest("mislead_sutble"); !ok || n != "mislead_subtle" {
		t.Errorf("nearest %q %v", n, ok)
	}
	if n, ok := acts.Nearest("completely_different_thing"); ok {
		t.Errorf("a far name suggested %q", n)
	}
}
