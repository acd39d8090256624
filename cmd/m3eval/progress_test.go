package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/m3bench/m3eval/internal/testkit"
)

// runPty runs the built binary in dir on a pseudo-terminal (standard input, output and
// error all on it, as in a user's shell) and returns everything it wrote and its exit status.
func runPty(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	cmd.Dir = dir
	// TERM=screen: Bubble Tea's init asks the terminal for its background (lipgloss) and waits
	// 5 s for an answer a bare pty never gives; termenv does not ask inside screen or tmux.
	cmd.Env = append(os.Environ(), "M3EVAL_DB=", "TERM=screen")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 140})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	io.Copy(&out, ptmx) // ends with EIO when the process has exited and closed its side
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), 0
}

// turnsFile writes n episodes of 5 turns in m3eval's turn format.
func turnsFile(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for e := 0; e < n; e++ {
		for turn := 1; turn <= 5; turn++ {
			fmt.Fprintf(&b, `{"sample_id":"ep%d_turn_%d","episode_id":"ep%d","turn":%d,"action_type":"follow_up","task_type":"spatial",`+
				`"user_message":"Which object is left of the %d-th cup?","vlm_response":"The teapot, %s","expected_answer":"the teapot","model":"m"}`+"\n",
				e, turn, e, turn, turn, strings.Repeat("seen clearly. ", 20))
		}
	}
	path := filepath.Join(dir, "turns.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// barLine matches a drawn bar: label, percentage, count and rate, [elapsed:left].
var barLine = regexp.MustCompile(`import\s+\d+% \|[^|]*\| \([0-9.]+ ?[kMG]?B?/[0-9.]+ ?[kMG]?B, [0-9.]+ ?[kMG]?B/s\) \[\d+s:\d+s\]`)

// TestImportProgress: on a terminal import draws a bar and leaves one summary line; piped, or
// with --quiet, it prints only what it always printed.
func TestImportProgress(t *testing.T) {
	dir := t.TempDir()
	turns := turnsFile(t, dir, 16000) // about 40 MB: the import outlasts several redraws

	out, code := runPty(t, dir, "--db", "tty.db", "import", turns)
	if code != 0 {
		t.Fatalf("import on a terminal: exit %d\n%s", code, out)
	}
	if !barLine.MatchString(out) {
		t.Errorf("no bar on a terminal:\n%q", out)
	}
	summary := regexp.MustCompile(`\rimport: [0-9.]+ [kMG]?B in [0-9.]+m?s \([0-9.]+ [kMG]?B/s\)\r\n`)
	if n := len(summary.FindAllString(out, -1)); n != 1 {
		t.Errorf("%d summary lines, want 1:\n%q", n, out)
	}
	if !strings.Contains(out, "80000 turns new") {
		t.Errorf("the import's own report is missing:\n%q", out)
	}

	r := runBin(t, dir, nil, "--db", "pipe.db", "import", turns)
	if r.code != 0 || strings.Contains(r.stderr+r.stdout, "\r") || strings.Contains(r.stderr, "import: ") || !strings.Contains(r.stderr+r.stdout, "80000 turns new") {
		t.Errorf("piped: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// --demo reads embedded files and reports nothing: no summary of nothing.
	if out, code = runPty(t, dir, "--db", "demo.db", "import", "--demo"); code != 0 || strings.Contains(out, "import: ") {
		t.Errorf("import --demo: exit %d\n%q", code, out)
	}

	out, code = runPty(t, dir, "--db", "quiet.db", "--quiet", "import", turns)
	if code != 0 || strings.Contains(out, "\x1b[2K") || strings.Contains(out, "%") || strings.Contains(out, "import: ") {
		t.Errorf("--quiet on a terminal: exit %d\n%q", code, out)
	}
}

// TestScoreBootstrapProgress: score --bootstrap counts replicates of every field and group on a
// terminal and ends at their total; without --bootstrap nothing is drawn.
func TestScoreBootstrapProgress(t *testing.T) {
	db := scoreDB(t)
	dir := t.TempDir()
	out, code := runPty(t, dir, "--db", db, "score", "--bootstrap", "300", "--by", "action_type", "-o", "s.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`\rscore: (\d+) replicates in [0-9.]+m?s \(\d+ replicates/s\)\r\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line:\n%q", out)
	}
	var n int
	fmt.Sscan(m[1], &n)
	if n == 0 || n%300 != 0 {
		t.Errorf("%d replicates: not a whole number of fields × groups × 300", n)
	}
	if !regexp.MustCompile(`score\s+\d+% \|[^|]*\| \(\d+/` + m[1] + `, \d+ replicates/(s|min|hr)\)`).MatchString(out) {
		// The faster engine (issue #30) can finish before the bar's second frame: its first
		// frame, which shows the total and a rate per hour, is a bar counting to the total.
		t.Errorf("no bar counting to %s:\n%q", m[1], out)
	}
	if out, code = runPty(t, dir, "--db", db, "score", "-o", "s.txt"); code != 0 || strings.Contains(out, "score") {
		t.Errorf("without --bootstrap: exit %d\n%q", code, out)
	}
}

// TestSimulateProgress: on a terminal simulate draws the shared progress bar (turns answered
// of those planned) and ends with its own summary line; with --quiet it draws nothing and
// says only the summary (issue #42: simulate's own progress line ignored --quiet).
func TestSimulateProgress(t *testing.T) {
	scenes, err := filepath.Abs("../../annotations/demo/images/scenes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	url := testkit.DemoVLM(t, scenes, 30*time.Millisecond) // slow enough for several redraws
	dir := t.TempDir()
	args := []string{"simulate", "--scenes", scenes, "--endpoint", url, "--model", "faithful", "--strategy", "both"}
	out, code := runPty(t, dir, append(args, "--out", "tty.jsonl")...)
	if code != 0 {
		t.Fatalf("simulate on a terminal: exit %d\n%s", code, out)
	}
	if !regexp.MustCompile(`simulate\s+\d+% \|[^|]*\| \(\d+/\d+, [0-9.]+ turns/(s|min|hr)\)`).MatchString(out) {
		t.Errorf("no bar counting turns on a terminal:\n%q", out)
	}
	summary := regexp.MustCompile(`simulate: 6 of 6 episodes written to tty\.jsonl \(\d+ turns\) in `)
	if n := len(summary.FindAllString(out, -1)); n != 1 {
		t.Errorf("%d summary lines, want 1:\n%q", n, out)
	}

	out, code = runPty(t, dir, append([]string{"--quiet"}, append(args, "--out", "quiet.jsonl")...)...)
	if code != 0 || strings.Contains(out, "%") || strings.Contains(out, "\x1b[") || !strings.Contains(out, "6 of 6 episodes written to quiet.jsonl") {
		t.Errorf("--quiet on a terminal: exit %d\n%q", code, out)
	}
}
