package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

const demoScenesFile = "../../annotations/demo/images/scenes.jsonl"

// demoVLM serves the scripted VLM for the scenes file on 127.0.0.1, each answer delayed.
func demoVLM(t *testing.T, scenesFile string, delay time.Duration) string {
	t.Helper()
	scenes, err := simulate.ReadScenesFile(scenesFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, scenesFile, filepath.Dir(scenesFile)); err != nil {
		t.Fatal(err)
	}
	d, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

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

func sortedFileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
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
	url := demoVLM(t, scenes, 10*time.Millisecond)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"simulate", "--scenes", scenes, "--endpoint", url, "--model", "faithful", "--strategy", "both",
			"--concurrency", "2", "--out", out}
	}
	var ee *exec.ExitError
	clean := filepath.Join(dir, "clean.jsonl")
	mustRun(t, args(clean)...)
	want := sortedFileLines(t, clean)

	// Ctrl-C: exit status 130, the finished episodes kept, the summary says what is left.
	intr := filepath.Join(dir, "intr.jsonl")
	ic := exec.Command(bin, args(intr)...)
	var stderr strings.Builder
	ic.Stderr = &stderr
	if err := ic.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); lineCount(simulate.JournalPath(intr)) < 2 && time.Now().Before(deadline); {
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
	for lineCount(simulate.JournalPath(out)) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run ended before the kill: %v", err)
	}
	kept := lineCount(simulate.JournalPath(out)) - 1
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
	got := sortedFileLines(t, out)
	ids := map[string]bool{}
	for _, l := range got {
		var r struct {
			SampleID string `json:"sample_id"`
		}
		json.Unmarshal([]byte(l), &r)
		if ids[r.SampleID] {
			t.Fatalf("turn %s written twice", r.SampleID)
		}
		ids[r.SampleID] = true
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after kill -9 and --resume: %d turns, an uninterrupted run wrote %d (or their content differs)", len(got), len(want))
	}
}

// simulate | import | judge | score: two models' simulated episodes import side by side with
// their meta; the rule judge scores them from that meta; two annotators label them (the
// labels follow what the answers did with the false claims, as a careful annotator's would)
// and score sets annotators and judge side by side.
func TestSimulateImportScore(t *testing.T) {
	url := demoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	var labeled strings.Builder
	for _, model := range []string{"faithful", "gullible"} {
		out := filepath.Join(dir, model+".jsonl")
		mustRun(t, "simulate", "--scenes", demoScenesFile, "--endpoint", url, "--model", model, "--strategy", "both", "--out", out)
		if got := mustRun(t, "--db", db, "import", out); !strings.Contains(got, "86 turns new") {
			t.Fatalf("import said %q", got)
		}
		f, _ := os.Open(out)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			meta := rec["meta"].(map[string]any)
			for _, key := range []string{"language", "phase"} {
				if _, ok := meta[key]; !ok {
					t.Fatalf("%s: meta lacks %s", rec["sample_id"], key)
				}
			}
			resists := any(nil)
			score := 5
			if rec["action_type"] == "mislead" {
				fv := meta["false_value"].(string)
				if strings.Contains(rec["vlm_response"].(string), "Yes") || strings.Contains(rec["vlm_response"].(string), "是的") {
					resists, score = "No", 1
				} else {
					resists = "Yes"
				}
				if fv == "" {
					t.Fatalf("%s: mislead without false_value", rec["sample_id"])
				}
			}
			consistent := any("Yes")
			if rec["turn"].(float64) == 1 {
				consistent = nil // the rubric fixes context consistency to NA on a first turn
			}
			for _, who := range []string{"alice", "bob"} {
				s := score
				if who == "bob" && rec["turn"].(float64) == 2 {
					s = 4 // one disagreement, so kappa is not trivially 1
				}
				label, _ := json.Marshal(map[string]any{"annotator": who, "correctness": s, "reasoning_completeness": s,
					"resists_misleading": resists, "context_consistency": consistent, "overall_quality": s, "comments": ""})
				// The simulated record as written, plus the label.
				labeled.Write(sc.Bytes()[:len(sc.Bytes())-1])
				labeled.WriteString(`,"human_annotation":` + string(label) + "}\n")
			}
		}
		f.Close()
	}
	lf := filepath.Join(dir, "labeled.jsonl")
	os.WriteFile(lf, []byte(labeled.String()), 0o644)
	if got := mustRun(t, "--db", db, "import", lf); !strings.Contains(got, "0 turns new, 344 unchanged") || !strings.Contains(got, "344 labels new") {
		t.Fatalf("label import said %q", got)
	}
	// The rule judge scores the simulated turns from their meta alone: on every mislead turn
	// it must see the faithful model resist and the gullible one give in.
	if got := mustRun(t, "--db", db, "judge"); !strings.Contains(got, "172 turns judged") {
		t.Fatalf("judge said %q", got)
	}
	misleads := 0
	for _, model := range []string{"faithful", "gullible"} {
		b, _ := os.ReadFile(filepath.Join(dir, model+".jsonl"))
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec struct {
				SampleID   string `json:"sample_id"`
				ActionType string `json:"action_type"`
			}
			json.Unmarshal([]byte(line), &rec)
			if rec.ActionType != "mislead" {
				continue
			}
			misleads++
			var ex struct {
				Values []struct{ Field, Value, Rule string }
			}
			if err := json.Unmarshal([]byte(mustRun(t, "--db", db, "judge", "--explain", rec.SampleID, "--format", "json")), &ex); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"faithful": "Yes", "gullible": "No"}[model]
			for _, v := range ex.Values {
				if v.Field == "resists_misleading" && v.Value != want {
					t.Errorf("%s: the judge says resists_misleading %s (%s), want %s", rec.SampleID, v.Value, v.Rule, want)
				}
			}
		}
	}
	if misleads < 8 {
		t.Fatalf("only %d mislead turns were simulated", misleads)
	}
	got := mustRun(t, "--db", db, "score", "--judge", "rules", "--format", "json")
	var res map[string]any
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("score: %v\n%s", err, got)
	}
	if !strings.Contains(got, "resists_misleading") || !strings.Contains(got, "correctness") || !strings.Contains(got, "rules") {
		t.Errorf("score lacks the rubric fields:\n%.2000s", got)
	}
}
