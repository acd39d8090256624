package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store/storetest"
)

// campaignDB builds, with the real binary, a database in which every kind of row m3eval
// keeps exists: the demo's turns, two annotators' labels, the rule judge's scores, a sample
// with a campaign (overlap, gold turns, repeats) and an adjudication.
func campaignDB(t *testing.T, bin, dir string) string {
	t.Helper()
	db, m3 := adjudicationDB(t, bin, dir)
	m3("judge")
	m3("sample", "--name", "pilot", "--n", "12", "--by", "action_type", "--seed", "3")
	m3("assign", "--sample", "pilot", "--annotators", "alice,bob,carol", "--overlap", "2",
		"--gold", filepath.Join(dir, "ann.jsonl"), "--gold-rate", "0.2", "--repeat", "0.2")
	m3("adjudicate", "--adjudicator", "judy", "--turn", "demo_zh_umbrella_0_turn_2", "--take", "ben")
	m3("adjudicate", "--adjudicator", "judy", "--turn", "demo_zh_umbrella_0_turn_3", "--set", "overall_quality=3")
	return db
}

// exportViews are the commands whose output must be the same, byte for byte, on a campaign
// and its copy.
var exportViews = [][]string{
	{"export"},
	{"export", "--include-drafts", "--format", "csv"},
	{"export", "--format", "jsonl", "--annotator", "ben"},
	{"export", "--final"},
	{"export", "--final", "--campaign", "pilot"},
	{"score", "--format", "json"},
	{"qc", "--campaign", "pilot", "--format", "json"},
}

// scoreDatabase is the line of score's JSON that names the database, which differs between
// a campaign and its copy by design.
var scoreDatabase = regexp.MustCompile(`"database": "[^"]*"`)

// viewOutputs runs each export view on db and returns, per view, its exit status, standard
// output and standard error, with the database's name (which messages quote) taken out.
func viewOutputs(t *testing.T, bin, db string) []string {
	t.Helper()
	var out []string
	for _, v := range exportViews {
		cmd := exec.Command(bin, append([]string{"--db", db}, v...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		text := scoreDatabase.ReplaceAllString(stdout.String(), `"database": "DB"`)
		out = append(out, fmt.Sprintf("exit %d\n%s\n--- stderr\n%s", exitCode(err), text, strings.ReplaceAll(stderr.String(), db, "DB")))
	}
	return out
}

// sameViews fails the test where two databases' views differ.
func sameViews(t *testing.T, what string, want, got []string) {
	t.Helper()
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("%s: m3eval %s differs from the source's:\nsource:\n%.1500s\ncopy:\n%.1500s", what, strings.Join(exportViews[i], " "), want[i], got[i])
		}
	}
}

// TestCopyCampaignSQLite: m3eval copy moves a whole campaign to a new SQLite file, and export
// (every format, --final, a campaign), score and qc print the same bytes on both; a second
// copy onto the now full target is refused and changes nothing, --replace then replaces it,
// and a copy of a database onto itself is refused.
func TestCopyCampaignSQLite(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	src := campaignDB(t, bin, dir)
	want := viewOutputs(t, bin, src)
	for i, w := range want {
		if !strings.HasPrefix(w, "exit 0\n") {
			t.Fatalf("m3eval %s on the source failed:\n%s", strings.Join(exportViews[i], " "), w)
		}
	}
	if !strings.Contains(want[0], `"human_annotations"`) || !strings.Contains(want[3], `"final_source"`) {
		t.Fatalf("the source campaign lacks labels or final labels:\n%.600s\n%.600s", want[0], want[3])
	}

	dst := filepath.Join(dir, "copy.db")
	out, err := exec.Command(bin, "copy", "--from", src, "--to", dst).CombinedOutput()
	if err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "copied ") || !strings.Contains(string(out), "(35 turns,") {
		t.Errorf("copy said: %s", out)
	}
	sameViews(t, "SQLite → SQLite", want, viewOutputs(t, bin, dst))

	// The target holds a campaign now: a second copy is refused, exit status 1, nothing done.
	other := filepath.Join(dir, "other.db")
	cli(t, bin, other)("import", "--demo")
	out, err = exec.Command(bin, "copy", "--from", other, "--to", dst).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "already holds a campaign") || !strings.Contains(string(out), "--replace") {
		t.Errorf("copy onto a full target: exit %d, %s", code, out)
	}
	sameViews(t, "after a refused copy", want, viewOutputs(t, bin, dst))

	// --replace: the target becomes the other campaign (no labels at all).
	out, err = exec.Command(bin, "copy", "--from", other, "--to", dst, "--replace").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "were deleted") {
		t.Fatalf("copy --replace: %v\n%s", err, out)
	}
	sameViews(t, "after --replace", viewOutputs(t, bin, other), viewOutputs(t, bin, dst))

	// The same file at both ends, even by another name: refused before anything is read.
	self := exec.Command(bin, "copy", "--from", dst, "--to", "./"+filepath.Base(dst), "--replace")
	self.Dir = dir
	out, err = self.CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "are the same database") {
		t.Errorf("copy onto itself: exit %d, %s", code, out)
	}
	out, err = exec.Command(bin, "copy", "--from", src).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--to") {
		t.Errorf("copy without --to: exit %d, %s", code, out)
	}
}

// exitCode is a finished command's exit status (0 for a nil error, -1 when it did not run).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// postgresPath is a fresh PostgreSQL database (a schema of its own, dropped when the test
// ends) on the server $M3EVAL_TEST_POSTGRES names; without one the test is skipped, and in
// CI it fails (storetest.RequirePostgres).
func postgresPath(t *testing.T) string {
	t.Helper()
	return storetest.PostgresPath(t, storetest.RequirePostgres(t))
}

// TestCopyCampaignPostgres: the campaign goes from SQLite to PostgreSQL and back to a new
// SQLite file; export (every format, --final, a campaign), score and qc print the same bytes
// on all three.
func TestCopyCampaignPostgres(t *testing.T) {
	pg := postgresPath(t)
	bin := binary(t)
	dir := t.TempDir()
	src := campaignDB(t, bin, dir)
	want := viewOutputs(t, bin, src)
	if out, err := exec.Command(bin, "copy", "--from", src, "--to", pg).CombinedOutput(); err != nil {
		t.Fatalf("copy to PostgreSQL: %v\n%s", err, out)
	}
	sameViews(t, "on PostgreSQL", want, viewOutputs(t, bin, pg))
	back := filepath.Join(dir, "back.db")
	if out, err := exec.Command(bin, "copy", "--from", pg, "--to", back).CombinedOutput(); err != nil {
		t.Fatalf("copy from PostgreSQL: %v\n%s", err, out)
	}
	sameViews(t, "SQLite → PostgreSQL → SQLite", want, viewOutputs(t, bin, back))

	// A second copy onto the PostgreSQL campaign is refused: it holds one now.
	out, err := exec.Command(bin, "copy", "--from", back, "--to", pg).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "already holds a campaign") {
		t.Errorf("copy onto a full PostgreSQL schema: exit %d, %s", code, out)
	}
}
