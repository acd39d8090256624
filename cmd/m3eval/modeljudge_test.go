package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// modelJudgeFixture is testkit's model judge turns (one English episode with an image file,
// and a Chinese one), imported through the command line.
func modelJudgeFixture(t *testing.T) (dir, db string) {
	t.Helper()
	dir = t.TempDir()
	file := testkit.WriteModelJudgeTurns(t, dir)
	db = filepath.Join(dir, "m.db")
	mustRun(t, "--db", db, "import", file)
	return dir, db
}

// TestModelJudgeCarefulAgreement: the careful persona, given the validation set's human
// labels, answers with them; score --judge then finds full agreement on every field, with
// the rule judge compared beside it.
func TestModelJudgeCarefulAgreement(t *testing.T) {
	set := filepath.Join(judgeSets, "validation.jsonl")
	labels, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "v.db")
	mustRun(t, "--db", db, "import", "--annotator", "human", set)
	vlm := testkit.StartJudgeVLM(t, labels, 0)
	out := mustRun(t, "--db", db, "judge", "--name", "careful", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--concurrency", "8")
	if !strings.Contains(out, " 0 failed") {
		t.Fatalf("judge: %s", out)
	}
	mustRun(t, "--db", db, "judge")
	var rep struct {
		Fields map[string]struct {
			HumanVsAuto  map[string]any   `json:"human_vs_auto"`
			HumanVsAutos []map[string]any `json:"human_vs_autos"`
		} `json:"fields"`
	}
	js := mustRun(t, "--db", db, "score", "--judge", "careful", "--format", "json")
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"correctness", "reasoning_completeness", "resists_misleading", "context_consistency", "overall_quality"} {
		h := rep.Fields[f].HumanVsAuto
		if h["judge"] != "careful" || h["exact_match_accuracy"] != 1.0 || h["cohen_kappa"] != 1.0 || h["n_items_with_auto"].(float64) < 20 {
			t.Errorf("%s: %v", f, h)
		}
	}
	both := mustRun(t, "--db", db, "score", "--judge", "careful", "--judge", "rules")
	if !strings.Contains(both, "Human vs careful") || !strings.Contains(both, "Human vs rules") {
		t.Fatalf("two judges: %s", both)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "--db", db, "report", "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "careful") || !strings.Contains(string(page), "rules") {
		t.Fatalf("the report does not name both judges")
	}
}

// TestModelJudgeKillAndRerun: a model judge killed with SIGKILL half-way keeps the turns it
// stored; the rerun scores the rest, each turn once, and a third run sends no request.
func TestModelJudgeKillAndRerun(t *testing.T) {
	bin := testBinary(t)
	set, err := filepath.Abs(filepath.Join(judgeSets, "validation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "k.db")
	mustRun(t, "--db", db, "import", "--annotator", "human", set)
	vlm := testkit.StartJudgeVLM(t, nil, 20*time.Millisecond)
	args := []string{"--db", db, "judge", "--name", "k", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--concurrency", "2"}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitModelJudgeStarted(t, cmd, db, "k")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	vlm.Delay.Store(0)
	r := runBin(t, dir, nil, args...)
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var scored, skipped int
	if _, err := fmt.Sscanf(r.stdout[strings.Index(r.stdout, ": ")+2:], "%d turns scored", &scored); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if _, err := fmt.Sscanf(r.stdout[strings.Index(r.stdout, "failed, ")+len("failed, "):], "%d already scored", &skipped); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	total := testkit.ScoredTurns(t, db, "k")
	if skipped < 1 || scored < 1 || float64(skipped+scored) != total {
		t.Fatalf("after the kill: %d already scored + %d scored, %v turns with scores\n%s", skipped, scored, total, r.stdout)
	}
	mustRun(t, "--db", db, "judge")
	rules := testkit.ScoredTurns(t, db, "rules")
	if rules != total {
		t.Fatalf("the model judge scored %v turns, the rules %v", total, rules)
	}
	n := vlm.Requests()
	if r := runBin(t, dir, nil, args...); r.code != 0 || vlm.Requests() != n || !strings.Contains(r.stdout, "0 turns scored") {
		t.Fatalf("third run: %d requests, exit %d: %s", vlm.Requests()-n, r.code, r.stdout)
	}
}

// TestModelJudgeProgress: on a terminal the model judge draws a bar counting the turns, then
// a summary line, and its result summary.
func TestModelJudgeProgress(t *testing.T) {
	set, err := filepath.Abs(filepath.Join(judgeSets, "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	mustRun(t, "--db", db, "import", "--annotator", "human", set)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	out, code := runPty(t, dir, "--db", db, "judge", "--name", "p", "--endpoint", vlm.Endpoint(), "--model", "judge-careful")
	if code != 0 {
		t.Fatalf("exit %d\n%q", code, out)
	}
	if !regexp.MustCompile(`judge p\s+\d+% \|[^|]*\| \(\d+/40, `).MatchString(out) {
		t.Errorf("no bar counting to 40 turns:\n%q", out)
	}
	if !regexp.MustCompile(`judge p: 40 turns in [0-9.]+m?s`).MatchString(out) || !strings.Contains(out, "40 turns scored with judge-careful@") {
		t.Errorf("no summary:\n%q", out)
	}
}

// TestModelJudgeInterrupt: Ctrl-C ends a model judge run with status 130, keeping the turns it
// judged; the rerun scores the rest.
func TestModelJudgeInterrupt(t *testing.T) {
	bin := testBinary(t)
	set, err := filepath.Abs(filepath.Join(judgeSets, "validation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "i.db")
	mustRun(t, "--db", db, "import", "--annotator", "human", set)
	vlm := testkit.StartJudgeVLM(t, nil, 20*time.Millisecond)
	args := []string{"--db", db, "judge", "--name", "i", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--concurrency", "2"}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitModelJudgeStarted(t, cmd, db, "i")
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("after Ctrl-C: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var scored int
	if _, err := fmt.Sscanf(stdout.String()[strings.Index(stdout.String(), ": ")+2:], "%d turns scored", &scored); err != nil || scored < 1 {
		t.Fatalf("interrupted run's summary: %v\n%s", err, stdout.String())
	}
	vlm.Delay.Store(0)
	r := runBin(t, dir, nil, args...)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d turns scored", 151-scored)) {
		t.Fatalf("rerun after %d: exit %d\n%s%s", scored, r.code, r.stdout, r.stderr)
	}
}

// TestModelJudgeExplainNames: judge --explain --name follows the unknown-name rule for a name
// the database does not hold, refuses a judge with nothing to explain, explains the rules for
// "rules", no --name or a rule judge stored under another name, and shows a model judge's
// values under the rubric's labels in the rubric's order.
func TestModelJudgeExplainNames(t *testing.T) {
	_, db := modelJudgeFixture(t)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	mustRun(t, "--db", db, "judge", "--name", "careful", "--endpoint", vlm.Endpoint(), "--model", "judge-careful")
	mustRun(t, "--db", db, "judge")
	mustRun(t, "--db", db, "judge", "--name", "myrules")
	run(t, "--db", db, "judge", "--name", "prose", "--endpoint", vlm.Endpoint(), "--model", "judge-prose", "--filter", "sample_id=mj_en_turn_2")

	out, err := run(t, "--db", db, "judge", "--explain", "mj_en_turn_2", "--name", "nosuch")
	if exitCodeOf(err) != 1 || err == nil || !strings.Contains(err.Error(), "--name nosuch: no such judge in "+db+" (judges: careful, myrules, ") {
		t.Fatalf("unknown judge: exit %d, %v\n%s", exitCodeOf(err), err, out)
	}
	out, err = run(t, "--db", db, "judge", "--explain", "mj_en_turn_2", "--name", "prose")
	if exitCodeOf(err) != 1 || err == nil || strings.Contains(out, "rules 20") {
		t.Fatalf("a judge without scores: exit %d, %v\n%s", exitCodeOf(err), err, out)
	}
	for _, args := range [][]string{{"--name", "rules"}, nil, {"--name", "myrules"}} {
		out := mustRun(t, append([]string{"--db", db, "judge", "--explain", "mj_en_turn_2"}, args...)...)
		if !strings.Contains(out, "mj_en_turn_2  (mislead, turn 2, en, rules 20") {
			t.Errorf("%v: not the rules' explanation:\n%s", args, out)
		}
	}

	rb, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "--db", db, "judge", "--explain", "mj_en_turn_2", "--name", "careful")
	last := -1
	for _, f := range rb.Fields {
		if f.Kind != rubric.KindScale && f.Kind != rubric.KindChoice {
			continue
		}
		i := strings.Index(out, "│ "+f.LabelEn+" ")
		if i < 0 {
			i = strings.Index(out, f.LabelEn+" ")
		}
		if i < 0 || i < last {
			t.Errorf("label %q missing or out of the rubric's order:\n%s", f.LabelEn, out)
		}
		last = i
	}
	if !strings.Contains(out, "rationale") || !strings.Contains(out, " 1 request\n") {
		t.Errorf("rationale or cost:\n%s", out)
	}
}

// waitModelJudgeStarted waits (up to 60 s, a state, not a time) until the judge run cmd has
// recorded the model judge name in db, so that the caller interrupts a run under way; it
// kills cmd and fails the test if that does not happen.
func waitModelJudgeStarted(t *testing.T, cmd *exec.Cmd, db, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
		if err == nil {
			ok, _ := s.IsModelJudge(context.Background(), name)
			s.Close()
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no turn stored within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
