package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/testkit"
)

// TestCommandsOnBothBackends runs one campaign's commands (import of turns and labels, judge,
// sample, assign, qc, adjudicate, score, estimate, report, export, status) on an SQLite file
// and on a PostgreSQL database, and compares what they print: the same labels give the same
// outputs, byte for byte, whichever backend holds them. It needs $M3EVAL_TEST_POSTGRES (it
// fails without it in CI).
// databaseName is the score's name of its input, the file's name or the PostgreSQL database and
// schema (store.BaseName).
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

// TestAddressesNeverEchoPasswords: the help shows $M3EVAL_DB's default without its password;
// a PostgreSQL scheme in any case is PostgreSQL; an address of another scheme, or postgres:
// without its //, is a usage error (exit 2) that quotes no password and creates no file. No
// server needed.
func TestAddressesNeverEchoPasswords(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(testBinary(t), "status", "--help")
	cmd.Env = append(os.Environ(), "M3EVAL_DB=postgres://ann:s3cret-pw@127.0.0.1:1/campaign?sslmode=disable")
	r := runCmd(t, cmd, dir, nil)
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "s3cret") || !strings.Contains(r.stdout, `(default "postgres://ann@127.0.0.1:1/campaign?sslmode=disable")`) {
		t.Errorf("status --help with $M3EVAL_DB: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, db := range []string{"POSTGRES://ann:s3cret-pw@127.0.0.1:1/campaign?connect_timeout=5", "Postgresql://ann:s3cret-pw@127.0.0.1:1/campaign?connect_timeout=5"} {
		r := runBin(t, dir, nil, "--db", db, "status")
		if r.code != 1 || !strings.Contains(r.stderr, "cannot reach PostgreSQL at 127.0.0.1:1") || strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Errorf("--db %s status: exit %d\n%s%s", db, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{
		{"--db", "postgres:ann:s3cret-pw@db", "import", "--demo"},
		{"--db", "Postgres:ann:s3cret-pw@db", "status"},
		{"--db", "mysql://ann:s3cret-pw@db/campaign", "import", "--demo"},
		{"copy", "--from", "x.db", "--to", "postgres:ann:s3cret-pw@db"},
		{"copy", "--from", "mysql://ann:s3cret-pw@db/c", "--to", "y.db"},
	} {
		r := runBin(t, dir, nil, args...)
		if r.code != 2 || strings.Contains(r.stdout+r.stderr, "s3cret") || !strings.Contains(r.stderr, "nothing was opened") {
			t.Errorf("m3eval %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused addresses left files: %v", entries)
	}
}

// TestPostgresRolesAndCopy, with the real binary on PostgreSQL: a writing command (annotate,
// import) as a role that may only read is refused at open with what to grant, exit 1; copy
// from a role without SELECT on the id sequences fails before creating its target file, and
// says which end failed; copy --replace onto a database another m3eval session is connected
// to is refused unless --force.
func TestPostgresRolesAndCopy(t *testing.T) {
	pg := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	dir := t.TempDir()
	if r := runBin(t, dir, nil, "--db", pg, "import", "--demo"); r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	admin, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("m3eval_ro_%d", os.Getpid())
	u, _ := url.Parse(pg)
	schema := u.Query().Get("search_path")
	for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN`, `GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + role)
		admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	u.User = url.User(role)
	ro := u.String()

	for _, args := range [][]string{{"annotate", "--annotator", "alice"}, {"import", "--demo"}} {
		r := runBin(t, dir, nil, append([]string{"--db", ro}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "the role "+role+" may not write the campaign's tables in schema "+schema) {
			t.Errorf("m3eval %v as a read-only role: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runBin(t, dir, nil, "--db", ro, "status"); r.code != 0 {
		t.Errorf("status as the read-only role: exit %d\n%s", r.code, r.stderr)
	}

	snap := filepath.Join(dir, "snap.db")
	r := runBin(t, dir, nil, "copy", "--from", ro, "--to", snap)
	if r.code != 1 || !strings.Contains(r.stderr, "GRANT SELECT ON ALL SEQUENCES") {
		t.Errorf("copy from a role without the sequences: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("the failed copy left %s: %v", snap, err)
	}
	if r := runBin(t, dir, nil, "copy", "--from", filepath.Join(dir, "missing.db"), "--to", snap); r.code != 1 || !strings.Contains(r.stderr, "copy --from: ") {
		t.Errorf("copy from a missing file: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := admin.Exec(`GRANT SELECT ON ALL SEQUENCES IN SCHEMA ` + schema + ` TO ` + role); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, nil, "copy", "--from", ro, "--to", snap); r.code != 0 {
		t.Fatalf("copy from the read-only role with the sequences: exit %d\n%s", r.code, r.stderr)
	}

	// Another m3eval session on the target's database: --replace is refused, --force copies.
	s, err := store.Open(context.Background(), pg, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, dir, nil, "copy", "--from", snap, "--to", pg, "--replace")
	if r.code != 1 || !strings.Contains(r.stderr, "other m3eval session") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("copy --replace onto a database in use: exit %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, dir, nil, "copy", "--from", snap, "--to", pg, "--replace", "--force"); r.code != 0 {
		t.Errorf("copy --replace --force: exit %d\n%s", r.code, r.stderr)
	}
}
