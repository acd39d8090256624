package importer_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// labeledLine is record i of the labeled files below: turn i%10+1 of episode i/10, with a done
// label of value c for every scale (no annotator named: --annotator's).
func labeledLine(i, c int) string {
	context := `"Yes"`
	if i%10 == 0 {
		context = "null" // a first turn has no context
	}
	return fmt.Sprintf(`{"sample_id":"ep%d_turn_%d","action_type":"follow_up","task_type":"t","user_message":"u%d","vlm_response":"v","expected_answer":"x",`+
		`"human_annotation":{"correctness":%d,"reasoning_completeness":%d,"resists_misleading":null,"context_consistency":%s,"overall_quality":%d,"comments":"","annotated_at":"2026-02-01T10:00:00Z"}}`+"\n",
		i/10, i%10+1, i, c, c, context, c)
}

func labeledFile(from, to int, extra ...string) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(labeledLine(i, i%5+1))
	}
	for _, e := range extra {
		b.WriteString(e)
	}
	return b.String()
}

// TestLabelBatchesKeepPutLabelsOutcomes: labels go to the store a batch (256 records) at a
// time (#44); across batches, and with a label repeated in one file, each label still gets
// the outcome and the error it got one at a time, and a file that fails leaves nothing.
func TestLabelBatchesKeepPutLabelsOutcomes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := storetest.Open(t, filepath.Join(dir, "m3eval.db"), store.Options{})
	var out bytes.Buffer
	o := importer.Options{Rubric: storetest.Rubric(t), Annotator: "alice", DB: s.Path(), Out: &out, From: "m3eval"}
	run := func(o importer.Options, name, body string) (string, error) {
		t.Helper()
		out.Reset()
		p := writeFile(t, dir, name, body)
		err := importer.New(s, o).Run(ctx, []string{p}, false)
		return strings.TrimPrefix(out.String(), p+": "), err
	}
	expect := func(o importer.Options, name, body, want string) {
		t.Helper()
		got, err := run(o, name, body)
		if err != nil || got != want+"\n" {
			t.Fatalf("%s: said %q (%v), want %q", name, got, err, want)
		}
	}
	expect(o, "a.jsonl", labeledFile(0, 300), "300 turns new, 0 unchanged, 0 replaced; 300 labels new, 0 unchanged, 0 replaced")
	// The stored labels again, new ones after them, and a label given twice in one file (the
	// second time in a later batch): the same label is unchanged.
	expect(o, "b.jsonl", labeledFile(0, 600, labeledLine(450, 450%5+1)),
		"300 turns new, 301 unchanged, 0 replaced; 300 labels new, 301 unchanged, 0 replaced")
	expect(o, "b.jsonl", labeledFile(0, 600), "0 turns new, 600 unchanged, 0 replaced; 0 labels new, 600 unchanged, 0 replaced")

	// A different label for a turn labeled earlier in the same file, on line 302: the error
	// names that line, and nothing of the file stays (the same file without it is all new).
	_, err := run(o, "c.jsonl", labeledFile(600, 900, labeledLine(620, 1), labeledLine(650, 2)))
	if err == nil || !strings.Contains(err.Error(), "c.jsonl:302: human_annotation: conflict: alice already has a different label for this sample") {
		t.Fatalf("a label changed within the file: %v", err)
	}
	// A different label for a turn labeled in an earlier file, in the middle of a batch.
	_, err = run(o, "d.jsonl", labeledFile(600, 700)+labeledLine(10, 3)+labeledFile(700, 900))
	if err == nil || !strings.Contains(err.Error(), "d.jsonl:101: human_annotation: conflict: alice already has a different label") {
		t.Fatalf("a label changed from an earlier file: %v", err)
	}
	expect(o, "c.jsonl", labeledFile(600, 900), "300 turns new, 0 unchanged, 0 replaced; 300 labels new, 0 unchanged, 0 replaced")

	// With --replace the changed label replaces the stored one; the others are unchanged.
	o.Store.Replace = true
	expect(o, "e.jsonl", labeledFile(0, 5)+labeledLine(10, 3)+labeledFile(11, 300),
		"0 turns new, 295 unchanged, 0 replaced; 0 labels new, 294 unchanged, 1 replaced")
	o.Store.Replace = false
	expect(o, "f.jsonl", labeledLine(10, 3), "0 turns new, 1 unchanged, 0 replaced; 0 labels new, 1 unchanged, 0 replaced")
}
