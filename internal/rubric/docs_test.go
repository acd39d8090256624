package rubric_test

import (
	"os"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/rubric"
)

// TestDocExamplesParse: the complete rubrics of docs/rubric.md are valid rubrics, of the
// kinds the text says (a single 1–5 score; a pairwise preference with a text reason).
func TestDocExamplesParse(t *testing.T) {
	b, err := os.ReadFile("../../docs/rubric.md")
	if err != nil {
		t.Fatal(err)
	}
	var kinds [][]rubric.Kind
	rest := string(b)
	for {
		_, after, ok := strings.Cut(rest, "```json\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```")
		rest = tail
		r, err := rubric.Parse([]byte(block))
		if err != nil {
			t.Fatalf("docs/rubric.md example %d: %v", len(kinds)+1, err)
		}
		var ks []rubric.Kind
		for _, f := range r.Fields {
			ks = append(ks, f.Kind)
		}
		kinds = append(kinds, ks)
	}
	if len(kinds) != 2 || len(kinds[0]) != 1 || kinds[0][0] != rubric.KindScale ||
		len(kinds[1]) != 2 || kinds[1][0] != rubric.KindChoice || kinds[1][1] != rubric.KindText {
		t.Errorf("examples' field kinds %v", kinds)
	}
}
