package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/convert/domainav2"
)

// convertCLI runs the m3eval command line in-process; stdout and stderr are kept apart.
func convertCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

const convertTestdata = "../../internal/convert/vistrajqa/testdata/in"

// TestConvertEndToEnd converts the hand-made inputs in both modes, validates the result with
// the second subcommand, and checks the files and the statistics.
func TestConvertEndToEnd(t *testing.T) {
	dir := t.TempDir()
	vab := filepath.Join(convertTestdata, "sessions-vab.jsonl")
	arena := filepath.Join(convertTestdata, "sessions-arena.jsonl")
	for _, mode := range []string{"text-only", "multimodal"} {
		// converted/ does not exist: it is created, as -o does elsewhere (issue #29 item 5).
		out := filepath.Join(dir, "converted", mode)
		args := []string{"convert", "vistrajqa", "--input", vab, arena, "--output", out}
		if mode == "multimodal" {
			args = append(args, "--multimodal")
		}
		stdout, stderr, err := convertCLI(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, stderr)
		}
		if !strings.Contains(stdout, "converted 4 trajectories into "+out) || !strings.Contains(stdout, "0 problems") {
			t.Errorf("%s: convert said\n%s", mode, stdout)
		}
		for _, name := range []string{domainav2.MainFile, domainav2.MemoryFile, domainav2.QAFile} {
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				t.Fatal(err)
			}
		}
		main, _ := os.ReadFile(filepath.Join(out, domainav2.MainFile))
		if got := bytes.Contains(main, []byte(`"attachments"`)); got != (mode == "multimodal") {
			t.Errorf("%s: attachments present = %v", mode, got)
		}
		stdout, _, err = convertCLI(t, "convert", "validate", out)
		if err != nil {
			t.Fatalf("validate %s: %v", mode, err)
		}
		// The per-source table: vab and arena columns, and the all column.
		for _, want := range []string{"source  vab  arena  all", "updates (is_update)    3      0    3", "VFR visual_factual_recall    2      0    2"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("validate %s: no %q in\n%s", mode, want, stdout)
			}
		}
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "sessions-bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"session_id":"a","step_plan":[{"observation":"","action":""}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arena := filepath.Join(convertTestdata, "sessions-arena.jsonl")
	out := filepath.Join(dir, "out")

	// A bad record: a plain error (exit 1) naming file, line and field; nothing written.
	_, _, err := convertCLI(t, "convert", "vistrajqa", "--input", bad, arena, "--output", out)
	var ue *usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "sessions-bad.jsonl:1: step_plan[0].step_num: missing") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("output written after a failed conversion")
	}

	// --keep-going: converts the rest, lists the bad record on stderr.
	stdout, stderr, err := convertCLI(t, "convert", "vistrajqa", "--input", bad, "--input", arena, "--output", out, "--keep-going")
	if err != nil || !strings.Contains(stdout, "converted 2 trajectories") || !strings.Contains(stderr, "skipped 1 bad records:\n  "+bad+":1: step_plan[0].step_num: missing") {
		t.Fatalf("keep-going: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}

	// Validate finds a corruption: a plain error with the problem listed.
	qa := filepath.Join(out, domainav2.QAFile)
	b, _ := os.ReadFile(qa)
	if err := os.WriteFile(qa, bytes.Replace(b, []byte(`"visual_search"`), []byte(`"visual_lookup"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = convertCLI(t, "convert", "validate", out)
	if !errors.Is(err, domainav2.ErrInvalid) || !strings.Contains(stdout, "question_type: not one of the nine known types") {
		t.Fatalf("validate: %v\n%s", err, stdout)
	}
	if exitCodeOf(err) != 1 {
		t.Errorf("validate of a bad directory: exit %d, want 1", exitCodeOf(err))
	}

	// Usage mistakes: exit status 2.
	for _, args := range [][]string{
		{"convert", "vistrajqa", "--output", out},
		{"convert", "vistrajqa", "--input", arena},
		{"convert", "validate"},
		{"convert", "validate", "a", "b"},
		{"convert"},
		{"convert", "vistrajqa", "--input", arena, "--output", out, "--no-such-flag"},
	} {
		_, _, err := convertCLI(t, args...)
		if exitCodeOf(err) != 2 {
			t.Errorf("m3eval %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// exitCodeOf is the exit status main gives err: 2 for usage errors, 1 for others.
func exitCodeOf(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		return 1
	}
}

// TestConvertBinary runs the built binary: exit status 0 for a conversion and its validation,
// 1 for a bad record (nothing written) and for an invalid directory, 2 for a usage mistake.
func TestConvertBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "m3eval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	vab, err := filepath.Abs(filepath.Join(convertTestdata, "sessions-vab.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions-bad.jsonl"), []byte("{\"session_id\":\"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(wantCode int, wantStderr string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != wantCode || !strings.Contains(stderr.String(), wantStderr) {
			t.Errorf("m3eval %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr.String(), wantCode, wantStderr)
		}
	}
	run(0, "", "convert", "vistrajqa", "--input", vab, "--output", "out", "--multimodal")
	run(0, "", "convert", "validate", "out")
	run(1, "sessions-bad.jsonl:1: step_plan: missing", "convert", "vistrajqa", "--input", "sessions-bad.jsonl", vab, "--output", "out2")
	if _, err := os.Stat(filepath.Join(dir, "out2")); !errors.Is(err, os.ErrNotExist) {
		t.Error("out2 written by a failed conversion")
	}
	run(1, "output directory exists", "convert", "vistrajqa", "--input", vab, "--output", "out")
	run(2, "no output", "convert", "vistrajqa", "--input", vab)
	run(2, "missing DIR: m3eval convert validate DIR", "convert", "validate")
	if err := os.Remove(filepath.Join(dir, "out", domainav2.MemoryFile)); err != nil {
		t.Fatal(err)
	}
	run(1, "stage4_memory_points.jsonl", "convert", "validate", "out")
}
