package importer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/usage"
)

// parseImport parses args as m3eval import's flags and FILE arguments into a request.
func parseImport(t *testing.T, args ...string) *importer.ImportCommand {
	t.Helper()
	q := importer.NewImportCommand()
	fs := pflag.NewFlagSet("import", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	q.Files = fs.Args()
	return q
}

// parseScores parses args as m3eval import-scores' flags and FILE arguments into a request.
func parseScores(t *testing.T, args ...string) *importer.ImportScoresCommand {
	t.Helper()
	q := importer.NewImportScoresCommand()
	fs := pflag.NewFlagSet("import-scores", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	q.Files = fs.Args()
	return q
}

// runImport calls q's Run on the database db: what it said, and the error.
func runImport(t *testing.T, db string, q *importer.ImportCommand) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{DB: db, Out: &out})
	return out.String(), err
}

// TestImportCheck: import's flags that cannot work are usage errors before anything is
// opened; good ones are read into the importer's options.
func TestImportCheck(t *testing.T) {
	for _, args := range [][]string{
		{},                    // neither files nor --demo
		{"--demo", "a.jsonl"}, // both
		{"--image-map", "ids.csv", "a.jsonl"},
		{"--drop-labels", "a.jsonl"},
		{"--map", "nonsense", "a.jsonl"},
		{"--map", "colour=x", "a.jsonl"},
		{"--max-record-size", "12QB", "a.jsonl"},
		{"--max-unzipped-size", "-1", "a.xlsx"},
	} {
		if err := parseImport(t, args...).Check(); !errors.Is(err, usage.Err) {
			t.Errorf("%q: %v is not a usage error", args, err)
		}
	}
	q := parseImport(t, "--max-record-size", "2MB", "--map", "user_message=q", "--map", "vlm_response=a", "--map", "sample_id=id", "a.jsonl")
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	if q.Limits.MaxRecord != 2<<20 || len(q.Map) != 3 || q.Limits.MaxCell != ingest.DefaultMaxCell {
		t.Errorf("read %+v, maps %v", q.Limits, q.Map)
	}
	// With a --map-file the maps are data, read by Run: Check leaves them alone.
	if err := parseImport(t, "--map-file", "x.map", "--map", "nonsense", "a.jsonl").Check(); err != nil {
		t.Errorf("--map-file: %v", err)
	}
}

// TestImportRun: Run reads a --map-file (a file, or a built-in one by name) with the --map
// flags, says a folder that is not one and a label field the rubric lacks, and removes a
// database it created for an import that imported nothing.
func TestImportRun(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	records := writeFile(t, dir, "runs.jsonl", `{"id":"r1","q":"What is it?","a":"A cat.","human_answer":4}
{"id":"r2","q":"Sure?","a":"Yes.","human_answer":2}
`)
	mapFile := writeFile(t, dir, "runs.map", "# ids and texts\nsample_id=id\nuser_message=q\n")
	q := parseImport(t, "--map-file", mapFile, "--map", "vlm_response=a", records)
	out, err := runImport(t, db, q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "runs.jsonl: 2 turns new, 0 unchanged, 0 replaced; 0 labels new, 0 unchanged, 0 replaced\n") {
		t.Errorf("said %q", out)
	}
	// A bad map file is an error of the data (not of usage), naming the file and line.
	bad := writeFile(t, dir, "bad.map", "sample_id=id\nnonsense\n")
	q = parseImport(t, "--map-file", bad, records)
	if _, err := runImport(t, db, q); err == nil || errors.Is(err, usage.Err) || !strings.Contains(err.Error(), "--map-file "+bad+":2") {
		t.Errorf("bad map file: %v", err)
	}
	// A built-in map by name: these records lack its paths, and the error names them.
	q = parseImport(t, "--map-file", "mllm-judge", records)
	if _, err := runImport(t, db, q); err == nil || !strings.Contains(err.Error(), "runs.jsonl:1: instruction (mapped to user_message), answer (mapped to vlm_response)") {
		t.Errorf("mllm-judge: %v", err)
	}
	// A label field the rubric lacks is a usage error, found before any record is read.
	q = parseImport(t, "--map-file", mapFile, "--map", "vlm_response=a", "--map", "label.fluency=human_answer", records)
	if _, err := runImport(t, db, q); !errors.Is(err, usage.Err) || !strings.Contains(err.Error(), "fluency is not a field of the rubric") {
		t.Errorf("label.fluency: %v", err)
	}
	if _, err := runImport(t, db, parseImport(t, "--images", filepath.Join(dir, "none"), "--map-file", mapFile, "--map", "vlm_response=a", records)); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("--images of no folder: %v", err)
	}
	q = parseImport(t, "--demo")
	if out, err := runImport(t, filepath.Join(dir, "demo.db"), q); err != nil || !strings.Contains(out, "35 turns new") {
		t.Errorf("--demo: %v %q", err, out)
	}
	// A database this import created is removed again when no file was imported; one that
	// was there stays, with what earlier imports put in it.
	fresh := filepath.Join(dir, "fresh.db")
	if _, err := runImport(t, fresh, parseImport(t, "--map-file", bad, records)); err == nil {
		t.Error("a bad map file imported")
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed import left %s: %v", fresh, err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("a failed import removed the database that was there: %v", err)
	}
}

// TestImportScoresCommand: import-scores' flags are checked before anything is opened; Run imports
// the mapped records.
func TestImportScoresCommand(t *testing.T) {
	r := defaultRubric(t)
	parse := func(args ...string) *importer.ImportScoresCommand { return parseScores(t, args...) }
	for _, args := range [][]string{
		{"s.csv"}, {"--judge", "  ", "s.csv"},
		{"--judge", "j", "--max-cell-size", "x", "s.csv"},
		{"--judge", "j", "--map", "correctness=x", "s.csv"},
	} {
		if err := parse(args...).Check(r); !errors.Is(err, usage.Err) {
			t.Errorf("%q: %v is not a usage error", args, err)
		}
	}
	db, dir := judgeDB(t)
	p := writeScoreFile(t, dir, "j.jsonl", `{"id": "e_turn_1", "result": {"judge": "4"}}`+"\n")
	q := parse("--judge", " j ", "--map", "sample_id=id", "--map", "correctness=result.judge", p)
	if err := q.Check(r); err != nil || q.Judge != "j" {
		t.Fatalf("%v, judge %q", err, q.Judge)
	}
	var out bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{DB: db, Out: &out})
	if err != nil || !strings.HasSuffix(out.String(), "j.jsonl: judge j: 1 scores new, 0 unchanged, 0 replaced\n") {
		t.Errorf("%v: said %q", err, out.String())
	}
	// Two files on standard input: a usage error, before anything is opened.
	if err := parse("--judge", "j", "-", "-").Run(context.Background(), &cmdio.IO{DB: filepath.Join(dir, "none.db")}); !errors.Is(err, usage.Err) {
		t.Errorf("- -: %v", err)
	}
}
