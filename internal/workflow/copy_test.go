package workflow_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/workflow"
)

// TestCopyCommand: m3eval copy's Run between two SQLite files: the copy says what moved and
// holds what the source holds; a target with a campaign is refused unless Replace; a failed
// copy removes the target file it created. (PostgreSQL ends: cmd/m3eval's
// TestFailedCopyLeavesNoEmptySchema and e2e's copy tests.)
func TestCopyCommand(t *testing.T) {
	storetest.SQLiteOnly(t, "copies between SQLite files by path")
	ctx := context.Background()
	for _, q := range []workflow.CopyCommand{{From: "a.db"}, {To: "b.db"}, {From: "a.db", To: "mysql://x"}} {
		if err := q.Run(ctx, &cmdio.IO{}); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", q, err)
		}
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	importFiles(t, src, "")
	importFiles(t, src, "bob", "../../annotations/tour/bob.json")
	var errw bytes.Buffer
	q := workflow.CopyCommand{From: src, To: dst}
	if err := q.Run(ctx, &cmdio.IO{Err: &errw}); err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); !strings.HasPrefix(got, "copied ") || !strings.Contains(got, "(35 turns, 1 annotator, 35 annotations)") ||
		!strings.HasSuffix(got, " from "+src+" to "+dst+"\n") {
		t.Errorf("copy said %q", got)
	}
	if a, b := statusOut(t, src), statusOut(t, dst); strings.TrimPrefix(a, src) != strings.TrimPrefix(b, dst) {
		t.Errorf("status of the copy\n%s\nof the source\n%s", b, a)
	}
	// Again: the target holds a campaign now, and is left as it is.
	before, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Run(ctx, &cmdio.IO{Err: &errw}); err == nil || !strings.Contains(err.Error(), "already holds a campaign") {
		t.Errorf("a second copy: %v", err)
	}
	if after, _ := os.ReadFile(dst); !bytes.Equal(before, after) {
		t.Error("a refused copy changed the target")
	}
	errw.Reset()
	q.Replace = true
	if err := q.Run(ctx, &cmdio.IO{Err: &errw}); err != nil || !strings.Contains(errw.String(), "of the campaign it held were deleted") {
		t.Errorf("--replace: %v, said %q", err, errw.String())
	}
	// A source with an import in progress is refused after the target was opened: the
	// target file this copy created goes again.
	raw := storetest.RawDB(t, src, true)
	if _, err := raw.Exec(`INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
		VALUES ('big.jsonl', 'elsewhere', 1, '2026-03-01T09:00:00Z', '2026-03-01T09:00:00Z', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	fresh := filepath.Join(dir, "fresh.db")
	q = workflow.CopyCommand{From: src, To: fresh}
	if err := q.Run(ctx, &cmdio.IO{Err: &errw}); err == nil || !strings.Contains(err.Error(), "in progress or interrupted") {
		t.Errorf("copy from a source with an import in progress: %v", err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed copy left %s: %v", fresh, err)
	}
}
