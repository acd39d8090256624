package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeDemoLabels writes labels of every demo turn for one annotator: the three scales at
// quality(i), Yes where the rubric leaves a choice open.
func writeDemoLabels(t *testing.T, path string, quality func(i int) int) {
	t.Helper()
	f, err := os.Open("../annotations/demo/episodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	i := 0
	for sc.Scan() {
		var ep struct {
			Turns []map[string]any `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatal(err)
		}
		for _, turn := range ep.Turns {
			q := quality(i)
			ann := map[string]any{"correctness": q, "reasoning_completeness": q, "overall_quality": q, "comments": "",
				"resists_misleading": nil, "context_consistency": nil}
			switch turn["action_type"] {
			case "mislead", "mislead_subtle", "memory_injection":
				ann["resists_misleading"] = "Yes"
			}
			if n, _ := turn["turn"].(float64); n > 1 {
				ann["context_consistency"] = "Yes"
			}
			turn["human_annotation"] = ann
			line, _ := json.Marshal(turn)
			b.Write(line)
			b.WriteByte('\n')
			i++
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicateScreenKillResume: the adjudication screen in a real terminal takes one
// annotator's answer and scores another field with one key each, survives kill -9 with
// both decisions in the database, and undoes the last one after the restart.
func TestAdjudicateScreenKillResume(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "adj.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	// ann and ben are 2 apart on the scales of the first two turns, one apart elsewhere.
	for _, who := range []string{"ann", "ben"} {
		p := filepath.Join(dir, who+".jsonl")
		writeDemoLabels(t, p, func(i int) int {
			if who == "ben" && i < 2 {
				return 4
			}
			if who == "ben" && i%2 == 1 {
				return 3
			}
			return 2
		})
		m3("import", "--annotator", who, p)
	}
	screen := fmt.Sprintf("%s --db %s adjudicate --adjudicator judy", bin, db)
	pid := term.start("a", screen)
	term.waitFor("a", "adjudicate · judy · turn 1 of 2 · 2 open", "demo_zh_umbrella_0_turn_1", "A ann", "B ben", "≠ Correctness")
	// Correctness: take ben's 4 (B). The cursor moves on to Reasoning Completeness: score
	// it 3 anew.
	term.keys("a", "B")
	term.waitFor("a", "Correctness = 4 saved", "✓ saved")
	term.keys("a", "3")
	s := term.waitFor("a", "Reasoning Completeness = 3 saved", "✓ saved")
	if !strings.Contains(s, "4 (B)") || !strings.Contains(s, "3 (new)") {
		t.Fatalf("the final column does not show the decisions:\n%s", s)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, pid)

	// Both decisions are in the database, with their sources.
	var cases []struct {
		SampleID string `json:"sample_id"`
		Decided  bool   `json:"decided"`
	}
	if err := json.Unmarshal([]byte(m3("adjudicate", "--list", "--format", "json")), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Decided {
		t.Fatalf("after kill -9: %+v (overall is still open on the first turn)", cases)
	}
	pidB := term.start("b", screen)
	term.waitFor("b", "turn 1 of 2", "4 (B)", "3 (new)")
	// Undo after the restart takes back the last decision only.
	term.keys("b", "u")
	s = term.waitFor("b", "undid Reasoning Completeness")
	if strings.Contains(s, "3 (new)") || !strings.Contains(s, "4 (B)") {
		t.Fatalf("undo after restart:\n%s", s)
	}
	// Escape sequences in the data never reach the terminal: the screen shows plain text.
	if strings.Contains(s, "\x1b") {
		t.Error("an escape character on the captured screen")
	}
	// The cursor opened on Overall, the first field still open; A takes ann's.
	term.keys("b", "A")
	term.waitFor("b", "Overall Quality = 2 saved")
	term.keys("b", "q")
	waitExit(t, pidB) // q quits once every decision landed
	// The first turn's reasoning is open again after the undo: both turns are left out.
	if out := m3("export", "--final", "--format", "jsonl"); !strings.Contains(out, "0 adjudicated, 33 agreed, 0 single-annotator; 2 disputed turns left out") {
		t.Errorf("export --final said:\n%.300s", out[max(0, len(out)-300):])
	}
}
