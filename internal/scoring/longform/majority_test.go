package longform_test

import (
	"github.com/m3bench/m3eval/internal/testkit"
	"os"
	"path/filepath"
	"testing"
)

// TestMajorityKappaReason (moved from cmd/m3eval/inference_fixes_test.go): κ against the
// majority label, undefined because every item's labels tie, gives the documented reason,
// not the pairwise κ's "no co-rated items".
func TestMajorityKappaReason(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ratings := write("ratings.csv", "item,rater,field,value\ni1,a,factual,Yes\ni1,b,factual,No\ni2,a,factual,No\ni2,b,factual,Yes\ni3,a,factual,Yes\ni3,b,factual,No\n")
	auto := write("auto.csv", "item,field,value\ni1,factual,Yes\ni2,factual,No\ni3,factual,Yes\n")
	schema := write("schema.json", `{"fields":{"factual":{"type":"nominal","categories":["Yes","No"]}}}`)
	out := filepath.Join(dir, "out.json")
	if _, _, err := runAgree(t, ratings, "--auto", auto, "--schema", schema, "--format", "json", "-o", out); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	testkit.ReadJSON(t, out, &doc)
	hva := doc["fields"].(map[string]any)["factual"].(map[string]any)["human_vs_auto"]
	j := hva.(map[string]any)
	if j == nil {
		t.Fatalf("no human_vs_auto block: %v", hva)
	}
	reasons := j["undefined_reason"].(map[string]any)
	const want = "no item with a majority label and an auto label"
	for _, k := range []string{"exact_match_accuracy", "cohen_kappa"} {
		if reasons[k] != want {
			t.Errorf("%s: reason %q, want %q", k, reasons[k], want)
		}
	}
}
