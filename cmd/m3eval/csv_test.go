package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCSVForSpreadsheets: a comment or an answer that starts like a formula reaches the CSV
// neutralized (OWASP), as is with --raw; --excel starts the file with a byte order mark; the
// agreement CSV neutralizes field names from the ratings file too.
func TestCSVForSpreadsheets(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.jsonl")
	os.WriteFile(src, []byte(`{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"=HYPERLINK(\"http://evil.example\",\"x\")","vlm_response":"@SUM(1+1)*cmd|' /C calc'!A0","expected_answer":"+1","human_annotation":{"correctness":3,"reasoning_completeness":3,"overall_quality":3,"comments":"-2+3 天空"}}`+"\n"), 0o644)
	db := filepath.Join(dir, "m.db")
	mustRun(t, "--db", db, "import", "--annotator", "a", src)
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
	got := cells(mustRun(t, "--db", db, "export", "--format", "csv"))
	for k, want := range map[string]string{"user_message": `'=HYPERLINK("http://evil.example","x")`, "vlm_response": "'@SUM(1+1)*cmd|' /C calc'!A0",
		"expected_answer": "+1", "comments": "'-2+3 天空", "correctness": "3", "resists_misleading": "NA"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	raw := cells(mustRun(t, "--db", db, "export", "--format", "csv", "--raw"))
	if raw["user_message"] != `=HYPERLINK("http://evil.example","x")` || raw["comments"] != "-2+3 天空" {
		t.Errorf("--raw changed cells: %v", raw)
	}
	if out := mustRun(t, "--db", db, "export", "--format", "csv", "--excel"); !strings.HasPrefix(out, "\ufeffsample_id,") {
		t.Errorf("--excel: %q", out[:20])
	}
	if out := mustRun(t, "--db", db, "export", "--format", "csv"); strings.HasPrefix(out, "\ufeff") {
		t.Error("a byte order mark without --excel")
	}

	ratings := filepath.Join(dir, "ratings.csv")
	os.WriteFile(ratings, []byte("item,rater,field,value\n1,a,=cmd(),1\n1,b,=cmd(),2\n2,a,=cmd(),2\n2,b,=cmd(),2\n3,a,=cmd(),3\n3,b,=cmd(),1\n"), 0o644)
	out := mustRun(t, "agree", ratings, "--format", "csv", "--excel")
	if !strings.HasPrefix(out, "\ufefffield,") || !strings.Contains(out, "\n'=cmd(),") || strings.Contains(out, "\n=cmd(),") {
		t.Errorf("agree --format csv:\n%s", out)
	}
}
