package report_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestRun runs m3eval report through its Request's Run on the demo turns: the numbers as
// JSON on standard output, the page in the -o file, and the whole command's refusals (flags
// together, a campaign the database lacks, an -o whose directory is missing) with nothing
// written.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	testkit.ImportFiles(t, db, "")
	run := func(args ...string) (string, string, error) {
		t.Helper()
		return testkit.RunCommand(t, &report.Request{}, db, append([]string{"--bootstrap", "0", "--no-cache"}, args...)...)
	}

	out, _, err := run("--format", "json")
	var doc struct {
		Title string `json:"title"`
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || doc.Title != "m3eval report · m3eval.db" {
		t.Fatalf("--format json: %v, title %q; output %.200s", err, doc.Title, out)
	}
	if _, _, err := run("--format", "json", "--pdf"); !errors.Is(err, usage.Err) {
		t.Errorf("--pdf --format json: %v, want a usage error", err)
	}
	if _, _, err := run("--campaign", "nosuch"); err == nil || !strings.HasSuffix(err.Error(), "(see m3eval sample --list)") {
		t.Errorf("--campaign nosuch: %v, want where to look", err)
	}
	missing := filepath.Join(dir, "nodir", "report.html")
	if _, _, err := run("-o", missing); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("-o in a missing directory: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-o in a missing directory made it: %v", err)
	}
	file := filepath.Join(dir, "report.html")
	out, _, err = run("-o", file)
	if b, rerr := os.ReadFile(file); err != nil || rerr != nil || out != "" || !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("-o %s: %v, %v, stdout %q, file %.40q", file, err, rerr, out, b)
	}
}
