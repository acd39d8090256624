package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUncertaintySignals: a turn's uncertainty is the mean over fields of the larger of the
// judges' spread and the mid-scale closeness, 1 where a fallback rule scored the field.
func TestUncertaintySignals(t *testing.T) {
	u := &uncertainty{
		judge:  map[string]float64{"a": 1, "b": 0.5, "c": 0},
		others: map[string][]float64{"a": {1, 0.25}, "b": {0.5}, "c": {0}},
	}
	// a: spread 0.75, mid 0 → 0.75; b: mid 1; c: 0.
	if got, want := u.value(), (0.75+1+0)/3; got != want {
		t.Errorf("uncertainty %v, want %v", got, want)
	}
	u.fallback = map[string]bool{"c": true}
	if got, want := u.value(), (0.75+1+1)/3; got != want {
		t.Errorf("with a fallback rule on c: %v, want %v", got, want)
	}
}

// TestFallbackRulesExist: every fallback rule named here is a rule the rule judge can fire,
// so a renamed rule is caught here and not silently never matched.
func TestFallbackRulesExist(t *testing.T) {
	files, err := filepath.Glob("../judge/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("judge sources: %v", err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for r := range fallbackRules {
		if !strings.Contains(src.String(), `"`+r+`"`) {
			t.Errorf("fallback rule %q is not a rule of internal/judge", r)
		}
	}
}
