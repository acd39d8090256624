package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/testkit"
)

const demoScenesFile = "../../annotations/demo/images/scenes.jsonl"

// manyScenes writes n copies of the demo scenes (new ids) beside copies of their images.
func manyScenes(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Dir(demoScenesFile)
	pngs, _ := filepath.Glob(filepath.Join(src, "*.png"))
	for _, p := range pngs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644)
	}
	data, err := os.ReadFile(demoScenesFile)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range n {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			line = strings.Replace(line, `"id": "`, `"id": "c`+strconv.Itoa(i)+`_`, 1)
			b.WriteString(line + "\n")
		}
	}
	p := filepath.Join(dir, "scenes.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	return p
}

// TestSimulateKill9Resume kills a real simulate process with SIGKILL mid-run, resumes it,
// and checks the result against an uninterrupted run: every episode once, no turn twice.
func TestSimulateKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "m3eval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	scenes := manyScenes(t, 8) // 40 scenes: 32 rule and 16 cross-image episodes
	url := testkit.DemoVLM(t, scenes, 10*time.Millisecond)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"simulate", "--scenes", scenes, "--endpoint", url, "--model", "faithful", "--strategy", "both",
			"--concurrency", "2", "--out", out}
	}
	var ee *exec.ExitError
	clean := filepath.Join(dir, "clean.jsonl")
	mustRun(t, args(clean)...)
	want := testkit.SortedLines(t, clean)

	// Ctrl-C: exit status 130, the finished episodes kept, the summary says what is left.
	intr := filepath.Join(dir, "intr.jsonl")
	ic := exec.Command(bin, args(intr)...)
	var stderr strings.Builder
	ic.Stderr = &stderr
	if err := ic.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); testkit.LineCount(simulate.JournalPath(intr)) < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	ic.Process.Signal(os.Interrupt)
	if err := ic.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("after Ctrl-C: %v\n%s", err, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "not finished (--resume runs them)") || !strings.Contains(s, "m3eval: interrupted") {
		t.Errorf("after Ctrl-C stderr says %q", s)
	}

	out := filepath.Join(dir, "turns.jsonl")
	cmd := exec.Command(bin, args(out)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for testkit.LineCount(simulate.JournalPath(out)) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run ended before the kill: %v", err)
	}
	kept := testkit.LineCount(simulate.JournalPath(out)) - 1
	if kept < 3 || kept >= 48 {
		t.Fatalf("%d episodes journaled at the kill; want some, not all", kept)
	}

	res := exec.Command(bin, append(args(out), "--resume")...)
	msg, err := res.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	if !strings.Contains(string(msg), "kept from the earlier run") {
		t.Errorf("resume said %q", msg)
	}
	got := testkit.SortedLines(t, out)
	ids := map[string]bool{}
	for _, l := range got {
		var r struct {
			SampleID string `json:"sample_id"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if ids[r.SampleID] {
			t.Fatalf("turn %s written twice", r.SampleID)
		}
		ids[r.SampleID] = true
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after kill -9 and --resume: %d turns, an uninterrupted run wrote %d (or their content differs)", len(got), len(want))
	}
}
