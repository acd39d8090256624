package vistrajqa_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/convert/domainav2"
	"github.com/m3bench/m3eval/internal/convert/vistrajqa"
	"github.com/m3bench/m3eval/internal/usage"
)

// The conversion and validation checks run the commands' own path: "convert vistrajqa"'s
// command line parsed into a vistrajqa.Request, as cobra does, and its Run; "convert
// validate" through domainav2.ValidateRequest's Run. The command's exit statuses are
// cmd/m3eval/testdata/script/convert.txtar's.

const convertTestdata = "testdata/in"

// errFlag marks an error of flag parsing: the command reports it as a usage error too.
var errFlag = errors.New("flag")

// convert parses args as "m3eval convert vistrajqa"'s flags and arguments into its request
// and calls Run: standard output, standard error, and the error.
func convert(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var q vistrajqa.Request
	fs := pflag.NewFlagSet("convert vistrajqa", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("%w: %v", errFlag, err)
	}
	q.Inputs = append(q.Inputs, fs.Args()...)
	var out, errb bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{Out: &out, Err: &errb})
	return out.String(), errb.String(), err
}

// validate is "m3eval convert validate DIR".
func validate(dir string) (string, error) {
	var out bytes.Buffer
	q := domainav2.ValidateRequest{Dir: dir}
	err := q.Run(context.Background(), &cmdio.IO{Out: &out})
	return out.String(), err
}

// TestConvertEndToEnd converts the hand-made inputs in both modes, validates the result,
// and checks the files and the statistics.
func TestConvertEndToEnd(t *testing.T) {
	dir := t.TempDir()
	vab := filepath.Join(convertTestdata, "sessions-vab.jsonl")
	arena := filepath.Join(convertTestdata, "sessions-arena.jsonl")
	for _, mode := range []string{"text-only", "multimodal"} {
		// converted/ does not exist: it is created, as -o does elsewhere (issue #29 item 5).
		out := filepath.Join(dir, "converted", mode)
		args := []string{"--input", vab, arena, "--output", out}
		if mode == "multimodal" {
			args = append(args, "--multimodal")
		}
		stdout, stderr, err := convert(t, args...)
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
		stdout, err = validate(out)
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
	_, _, err := convert(t, "--input", bad, arena, "--output", out)
	if err == nil || errors.Is(err, usage.Err) || !strings.Contains(err.Error(), "sessions-bad.jsonl:1: step_plan[0].step_num: missing") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("output written after a failed conversion")
	}

	// --keep-going: converts the rest, lists the bad record on stderr.
	stdout, stderr, err := convert(t, "--input", bad, "--input", arena, "--output", out, "--keep-going")
	if err != nil || !strings.Contains(stdout, "converted 2 trajectories") || !strings.Contains(stderr, "skipped 1 bad records:\n  "+bad+":1: step_plan[0].step_num: missing") {
		t.Fatalf("keep-going: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}

	// Validate finds a corruption: a plain error with the problem listed.
	qa := filepath.Join(out, domainav2.QAFile)
	b, _ := os.ReadFile(qa)
	if err := os.WriteFile(qa, bytes.Replace(b, []byte(`"visual_search"`), []byte(`"visual_lookup"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, err = validate(out)
	if !errors.Is(err, domainav2.ErrInvalid) || errors.Is(err, usage.Err) || !strings.Contains(stdout, "question_type: not one of the nine known types") {
		t.Fatalf("validate: %v\n%s", err, stdout)
	}

	// Usage mistakes of the flags (exit status 2 in the command); the argument counts of
	// "convert validate" and a bare "convert" are the command's (convert.txtar).
	for _, args := range [][]string{
		{"--output", out},
		{"--input", arena},
		{"--input", arena, "--output", out, "--no-such-flag"},
	} {
		if _, _, err := convert(t, args...); !errors.Is(err, usage.Err) && !errors.Is(err, errFlag) {
			t.Errorf("convert vistrajqa %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}
