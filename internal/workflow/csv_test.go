package workflow_test

import (
	"context"
	"encoding/csv"
	"github.com/m3bench/m3eval/internal/render"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/workflow"
)

// Moved from cmd/m3eval/csv_test.go: the export's CSV, through workflow.ExportCommand.

// TestCSVForSpreadsheets: a comment or an answer that starts like a formula reaches the CSV
// neutralized (OWASP), as is with --raw; --excel starts the file with a byte order mark; the
// agreement CSV's part is internal/scoring/longform's TestAgreeCSVForSpreadsheets.
func TestCSVForSpreadsheets(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.jsonl")
	os.WriteFile(src, []byte(`{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"=HYPERLINK(\"http://evil.example\",\"x\")","vlm_response":"@SUM(1+1)*cmd|' /C calc'!A0","expected_answer":"+1","human_annotation":{"correctness":3,"reasoning_completeness":3,"overall_quality":3,"comments":"-2+3 天空"}}`+"\n"), 0o644)
	db := filepath.Join(dir, "m.db")
	mustImportOut(t, db, importer.Options{Annotator: "a"}, src)
	cells := func(out string) map[string]string {
		t.Helper()
		rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "\ufeff"))).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("csv %v: %q", err, out)
		}
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = rows[1][i]
		}
		return m
	}
	got := cells(exportAs(t, db, "csv", false, ""))
	for k, want := range map[string]string{"user_message": `'=HYPERLINK("http://evil.example","x")`, "vlm_response": "'@SUM(1+1)*cmd|' /C calc'!A0",
		"expected_answer": "+1", "comments": "'-2+3 天空", "correctness": "3", "resists_misleading": "NA"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	raw := cells(exportCSV(t, db, render.CSVOptions{Raw: true}))
	if raw["user_message"] != `=HYPERLINK("http://evil.example","x")` || raw["comments"] != "-2+3 天空" {
		t.Errorf("--raw changed cells: %v", raw)
	}
	if out := exportCSV(t, db, render.CSVOptions{Excel: true}); !strings.HasPrefix(out, "\ufeffsample_id,") {
		t.Errorf("--excel: %q", out[:20])
	}
	if out := exportAs(t, db, "csv", false, ""); strings.HasPrefix(out, "\ufeff") {
		t.Error("a byte order mark without --excel")
	}

}

// TestCSVNAOneWay: a label made in the annotator (which stores no value for the fields the
// rubric fixes to NA on the turn) and the same label imported (which stores NA) export the
// same CSV cells: NA for an NA answer, and alice's unanswered comment stays an empty cell
// (docs/data-safety.md; issue #29 item 8).
func TestCSVNAOneWay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	importFiles(t, db, "")
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.Rubric(t)
	// alice labels the first turn (an initial turn: Resists Misleading and Context
	// Consistency are fixed to NA) as the annotator does, through the queue.
	q, err := s.OpenQueue(ctx, "alice", store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := q.First(ctx, false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e := session.Edit{TurnID: ref.TurnID, RubricVersion: r.Version}
	for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
		v := "4"
		if _, err := q.SetValue(ctx, e, f, &v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Submit(ctx, e); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// bob's label of the same turn, imported with the NA answers spelled out (the tour's
	// file: the turn as in the demo, so the import keeps alice's label as it is).
	mustImportOut(t, db, importer.Options{Annotator: "bob"}, "../../annotations/tour/bob.json")
	out := exportAs(t, db, "csv", false, "")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	got := map[string][]string{}
	for _, row := range rows[1:] {
		if row[col["sample_id"]] != "demo_zh_umbrella_0_turn_1" {
			continue
		}
		got[row[col["annotator"]]] = []string{row[col["resists_misleading"]], row[col["context_consistency"]], row[col["comments"]]}
	}
	for _, who := range []string{"alice", "bob"} {
		if c := got[who]; len(c) != 3 || c[0] != "NA" || c[1] != "NA" || (who == "alice" && c[2] != "") {
			t.Errorf("%s: resists_misleading, context_consistency, comments = %q, want NA, NA and an empty (unanswered) comment\n%s", who, c, out)
		}
	}
}

// exportCSV is m3eval export --format csv with the CSV flags (--raw, --excel) of co.
func exportCSV(t *testing.T, db string, co render.CSVOptions) string {
	t.Helper()
	o := workflow.NewExportCommand()
	o.Format.Format, o.Format.CSV = "csv", co
	out, _, err := export(t, db, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
