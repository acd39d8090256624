// Package e2e drives the built m3eval binary in a real terminal (tmux), as an annotator would.
package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build returns the m3eval binary every e2e test shares (binary, built once per run).
func build(t *testing.T) string {
	t.Helper()
	return binary(t)
}

// terminal is a tmux server of its own with one window of a fixed size.
type terminal struct {
	t      *testing.T
	socket string
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing: .ci/run installs it; the end-to-end test cannot run")
		}
		t.Skip("tmux is not installed")
	}
	term := &terminal{t: t, socket: fmt.Sprintf("m3eval-e2e-%d", os.Getpid())}
	t.Cleanup(func() { exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
	return term
}

// terminalEnv is the test's environment as a user's terminal has it: without CI, which CI
// runners set and which termenv takes to mean "no terminal" (colour off), although the
// program runs in a real one, tmux's.
func terminalEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") {
			env = append(env, kv)
		}
	}
	return env
}

func (term *terminal) tmux(args ...string) string {
	term.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", term.socket}, args...)...)
	cmd.Env = terminalEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs the command in a fresh 120x40 window and returns its process id.
func (term *terminal) start(name, command string) int {
	term.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "exec "+command)
	pid, err := strconv.Atoi(strings.TrimSpace(term.tmux("display-message", "-p", "-t", name, "#{pane_pid}")))
	if err != nil {
		term.t.Fatal(err)
	}
	return pid
}

func (term *terminal) screen(name string) string {
	return term.tmux("capture-pane", "-p", "-t", name)
}

// waitDeadline is how long a terminal test waits for a state: generous, because the
// machines that run the suite are often busy (load 10 and more on 2 cores).
const waitDeadline = 60 * time.Second

// waitFor waits until every text is on the screen at once.
func (term *terminal) waitFor(name string, texts ...string) string {
	term.t.Helper()
	return term.until(name, fmt.Sprintf("%q", texts), func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

// until waits until the screen satisfies cond and returns it.
func (term *terminal) until(name, what string, cond func(screen string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for {
		s := term.screen(name)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("waited %v for %s; the screen shows:\n%s", waitDeadline, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits until the process is gone (killed, or quit after saving), so that what
// runs next reads the database it left.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %v", pid, waitDeadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keys types keys one at a time, the way a person does.
func (term *terminal) keys(name string, keys ...string) {
	for _, k := range keys {
		term.tmux("send-keys", "-t", name, k)
		time.Sleep(30 * time.Millisecond)
	}
}

// TestAnnotateKillResumeExport: kill -9 after two submitted items and a draft; the reopened
// annotator resumes at the draft, and export holds all of it. On SQLite and on PostgreSQL.
func TestAnnotateKillResumeExport(t *testing.T) {
	bin := build(t)
	onBackends(t, func(t *testing.T, newDB func(string) string) { testAnnotateKillResumeExport(t, bin, newDB("e2e.db")) })
}

func testAnnotateKillResumeExport(t *testing.T, bin, db string) {
	term := newTerminal(t)
	if out, err := exec.Command(bin, "--db", db, "import", "--demo").CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	annotate := fmt.Sprintf("%s --db %s annotate --annotator erin", bin, quoteShell(db))

	pid := term.start("a", annotate)
	term.waitFor("a", "item 1 of 35", "demo_zh_umbrella_0 · turn 1")
	// Item 1 (first turn: both Yes/No/NA fields are fixed to NA): 4, 3, Overall 4.
	term.keys("a", "4", "3", "4")
	term.waitFor("a", "Overall Quality        整体质量      4", "✓ saved")
	term.keys("a", "Enter")
	term.waitFor("a", "demo_zh_umbrella_0 · turn 2", "item 2 of 35")
	// Item 2: 5, 4, Context Consistency y, Overall 5, and a comment.
	term.keys("a", "5", "4", "y", "5", "c")
	term.tmux("send-keys", "-t", "a", "-l", "引导有效 q")
	term.keys("a", "Escape")
	term.waitFor("a", "Comments               评论          引导有效 q", "✓ saved")
	term.keys("a", "Enter")
	term.waitFor("a", "demo_zh_umbrella_0 · turn 3", "item 3 of 35")
	// Item 3: two answers on screen and saved, then the process dies.
	term.keys("a", "2", "3")
	term.waitFor("a", "Correctness            正确性        2", "Reasoning Completeness 推理完整性    3", "✓ saved")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, pid)

	// Reopen: the queue resumes at item 3 with its draft.
	term.start("b", annotate)
	// Wait for the whole state, the draft included: the header can be drawn a frame before
	// the item's values (waitFor fails with the last screen if the draft never comes).
	s := term.waitFor("b", "demo_zh_umbrella_0 · turn 3", "item 3 of 35", "2 done",
		"Correctness            正确性        2", "Reasoning Completeness 推理完整性    3")
	if !strings.Contains(s, "Correctness            正确性        2") || !strings.Contains(s, "Reasoning Completeness 推理完整性    3") {
		t.Fatalf("the draft of item 3 was not restored:\n%s", s)
	}
	term.keys("b", "q")

	recs, out := exportLabels(t, bin, db, "--include-drafts")
	want := map[string]map[string]string{
		"demo_zh_umbrella_0_turn_1": {"correctness": "4", "reasoning_completeness": "3", "resists_misleading": "null",
			"context_consistency": "null", "overall_quality": "4", "comments": `""`, "annotator": `"erin"`, "flagged": "false"},
		"demo_zh_umbrella_0_turn_2": {"correctness": "5", "reasoning_completeness": "4", "resists_misleading": "null",
			"context_consistency": `"Yes"`, "overall_quality": "5", "comments": `"引导有效 q"`},
		"demo_zh_umbrella_0_turn_3": {"correctness": "2", "reasoning_completeness": "3", "context_consistency": "null",
			"overall_quality": "null", "status": `"draft"`},
	}
	if len(recs) != len(want) {
		t.Fatalf("exported %d records, want %d:\n%s", len(recs), len(want), out)
	}
	for _, r := range recs {
		w, ok := want[r.SampleID]
		if !ok {
			t.Fatalf("unexpected record %s", r.SampleID)
		}
		for k, v := range w {
			if got := string(r.Label[k]); got != v {
				t.Errorf("%s %s = %s, want %s", r.SampleID, k, got, v)
			}
		}
		if _, draft := w["status"]; !draft {
			if _, has := r.Label["status"]; has {
				t.Errorf("%s exported as a draft", r.SampleID)
			}
		}
		secs, err := strconv.ParseFloat(string(r.Label["active_seconds"]), 64)
		if err != nil || secs <= 0 {
			t.Errorf("%s active_seconds = %s, want a positive number", r.SampleID, r.Label["active_seconds"])
		}
	}
}

// exported is one record of `export`, with its label's fields as raw JSON.
type exported struct {
	SampleID string                     `json:"sample_id"`
	Label    map[string]json.RawMessage `json:"human_annotation"`
}

// exportLabels runs `export` with the flags given and returns its records and its output.
func exportLabels(t *testing.T, bin, db string, flags ...string) ([]exported, []byte) {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"--db", db, "export"}, flags...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var recs []exported
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, out)
	}
	return recs, out
}

// TestExitCodes runs the real binary: 0 ok, 1 error with a plain message, 2 usage.
func TestExitCodes(t *testing.T) {
	bin := build(t)
	db := filepath.Join(t.TempDir(), "x.db")
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--db", db, "import", "--demo"}, 0, "35 turns new"},
		{[]string{"--db", db, "import", missing}, 1, "m3eval: import: open " + missing},
		{[]string{"--db", db, "export", "--format", "xml"}, 2, "use one of json, jsonl, csv"},
		{[]string{"--db", db, "frobnicate"}, 2, "unknown command"},
		// Mistakes in annotate's flags are said before the screen opens.
		{[]string{"--db", db, "annotate", "--annotator", "x", "--start", "no_such_turn"}, 1, "--start no_such_turn: no such sample_id"}, // an unknown name: exit 1 (README, "Commands")
		{[]string{"--db", db, "annotate", "--annotator", "x", "--theme", "blue"}, 2, "want dark, light or auto"},
		{[]string{"--db", db, "annotate", "--annotator", "x", "--graphics", "regis"}, 2, "want kitty, iterm2, sixel, none or auto"},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.says) {
			t.Errorf("m3eval %v: exit %d, want %d; output:\n%s", tc.args, code, tc.code, out)
		}
	}
}
