package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/testkit"
)

// TestCommandsOnBothBackends runs one campaign's commands (import of turns and labels, judge,
// sample, assign, qc, adjudicate, score, estimate, report, export, status) on an SQLite file
// and on a PostgreSQL database, and compares what they print: the same labels give the same
// outputs, byte for byte, whichever backend holds them. It needs $M3EVAL_TEST_POSTGRES (it
// fails without it in CI).
// databaseName is the score's name of its input, the file's name or the PostgreSQL address.
var databaseName = regexp.MustCompile(`"database": "[^"]*"`)

// stampedNow are the times the commands stamp with the clock (a sample drawn, a campaign
// assigned, a label decided), which differ between the two runs by a second or so.
var stampedNow = regexp.MustCompile(`"(created_at|assigned_at|decided_at)": "[^"]*"`)

func TestCommandsOnBothBackends(t *testing.T) {
	pg := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	dir := t.TempDir()
	for _, who := range []string{"ann", "ben"} {
		testkit.WriteDemoLabels(t, filepath.Join(dir, who+".jsonl"), func(i int, _ map[string]any) (int, float64) {
			q := 1 + (i*7)%5
			if who == "ben" && i%3 == 0 {
				q = 1 + (q+1)%5
			}
			return q, float64(20 + i)
		})
	}
	turns := testkit.DemoTurns(t)
	first := turns[0]["sample_id"].(string)

	logs, err := filepath.Abs("../../internal/ingest/testdata/logs")
	if err != nil {
		t.Fatal(err)
	}
	logs += "/"
	// A PostgreSQL database's media directory is in the current directory (importer.MediaDir).
	t.Chdir(dir)
	steps := [][]string{
		{"import", "--demo"},
		// Every input format (the last two write embedded images to the media directory).
		{"import", logs + "sharegpt/llava_instruct.json"},
		{"import", logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMBench_DEV_EN.tsv"},
		{"import", logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.json"},
		{"import", logs + "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.xlsx"},
		{"import", logs + "lmms-eval/qwen2_vl_7b/20250612_101500_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl"},
		{"import", logs + "openai/chat_log.jsonl"},
		{"import", "--annotator", "ann", filepath.Join(dir, "ann.jsonl")},
		{"import", "--annotator", "ben", filepath.Join(dir, "ben.jsonl")},
		{"judge"},
		{"sample", "--name", "pilot", "--n", "20", "--by", "action_type", "--min-per-stratum", "1", "--format", "json"},
		{"assign", "--sample", "pilot", "--annotators", "alice,bob,carol,dave", "--overlap", "2", "--format", "json"},
		{"qc", "--campaign", "pilot", "--format", "json"},
		{"adjudicate", "--list", "--format", "json"},
		{"adjudicate", "--adjudicator", "judy", "--turn", first, "--take", "ben"},
		{"score", "--format", "json"},
		{"score", "--by", "action_type", "--format", "json"},
		{"export"},
		{"export", "--final"},
		{"status"},
		{"estimate", "--judge", "rules", "--by", "action_type", "--bootstrap", "50", "--format", "json"},
		{"sample", "--name", "act", "--n", "10", "--active", "--judge", "rules", "--format", "json"},
		{"estimate", "--judge", "rules", "--sample", "act", "--bootstrap", "0", "--format", "json"},
		// Strata of meta keys: a boolean, a number and a string (and turns without them).
		{"sample", "--name", "meta", "--n", "8", "--by", "meta.ambiguous", "--by", "meta.confusable_objects", "--format", "json"},
		{"sample", "--name", "where", "--n", "2", "--by", "meta.phase", "--where", "meta.ambiguous=1", "--format", "json"},
	}
	outputs := map[string][]string{}
	for _, db := range []string{filepath.Join(dir, "m3eval.db"), pg} {
		for _, step := range steps {
			out := mustRun(t, append([]string{"--db", db}, step...)...)
			// status and score name the database they read; the rest must not differ at all.
			out = strings.ReplaceAll(out, importer.MediaDir(db), "MEDIA")
			out = strings.ReplaceAll(out, db, "DB")
			out = databaseName.ReplaceAllString(out, `"database": "DB"`)
			out = stampedNow.ReplaceAllString(out, `"${1}": "NOW"`)
			outputs[db] = append(outputs[db], out)
		}
		report := filepath.Join(dir, "report.html")
		mustRun(t, "--db", db, "report", "-o", report)
		if fi, err := os.Stat(report); err != nil || fi.Size() == 0 {
			t.Fatalf("report on %s: %v", db, err)
		}
		os.Remove(report)
	}
	// $M3EVAL_DB names the PostgreSQL database as --db does.
	t.Setenv("M3EVAL_DB", pg)
	if out := mustRun(t, "export"); out != strings.ReplaceAll(outputs[pg][17], "DB", pg) {
		t.Errorf("export with $M3EVAL_DB differs from export with --db:\n%s", out)
	}
	sqlite := outputs[filepath.Join(dir, "m3eval.db")]
	for i, step := range steps {
		if got := outputs[pg][i]; got != sqlite[i] {
			t.Errorf("m3eval %s differs on PostgreSQL:\n--- SQLite\n%s\n--- PostgreSQL\n%s", strings.Join(step, " "), sqlite[i], got)
		}
	}
	// Not empty comparisons: the score has both annotators' labels, and the judge's.
	var score any
	if err := json.Unmarshal([]byte(sqlite[15]), &score); err != nil || !strings.Contains(sqlite[15], "ben") {
		t.Errorf("score --format json: %v\n%s", err, sqlite[15])
	}
}

// TestPostgresUnreachableExitsOne: every kind of command given a PostgreSQL address where no
// server answers exits 1 with one plain sentence naming the server, never the password. No
// server needed.
func TestPostgresUnreachableExitsOne(t *testing.T) {
	dir := t.TempDir()
	db := "postgres://ann:s3cret-pw@127.0.0.1:1/campaign?connect_timeout=5"
	for _, args := range [][]string{{"status"}, {"import", "--demo"}, {"score"}, {"export"}, {"annotate", "--annotator", "ann"}} {
		r := runBin(t, dir, nil, append([]string{"--db", db}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach PostgreSQL at 127.0.0.1:1") ||
			strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Errorf("m3eval %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
