package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoTurns reads the demo episodes as flat turn records.
func demoTurns(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open("../../annotations/demo/episodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ep struct {
			Turns []map[string]any `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatal(err)
		}
		out = append(out, ep.Turns...)
	}
	return out
}

// writeLabels writes one annotator's labels of every demo turn: label(i, turn) gives the
// three scales and the active seconds.
func writeLabels(t *testing.T, path string, label func(i int, turn map[string]any) (int, float64)) {
	t.Helper()
	var b strings.Builder
	for i, turn := range demoTurns(t) {
		q, secs := label(i, turn)
		ann := map[string]any{"correctness": q, "reasoning_completeness": q, "overall_quality": q, "comments": "ok",
			"resists_misleading": nil, "context_consistency": nil,
			"active_seconds": secs, "annotated_at": fmt.Sprintf("2026-03-01T10:%02d:00Z", i)}
		switch turn["action_type"] {
		case "mislead", "mislead_subtle", "memory_injection":
			ann["resists_misleading"] = "Yes"
		}
		if n, _ := turn["turn"].(float64); n > 1 {
			ann["context_consistency"] = "Yes"
		}
		rec := map[string]any{"human_annotation": ann}
		for k, v := range turn {
			rec[k] = v
		}
		line, _ := json.Marshal(rec)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestQCCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "qc.db")
	mustRun(t, "--db", db, "import", "--demo")
	for k, who := range []string{"ann", "ben", "cat"} {
		p := filepath.Join(dir, who+".jsonl")
		writeLabels(t, p, func(i int, _ map[string]any) (int, float64) {
			q := 1 + (i*7)%5
			if (i+k)%9 == 0 && q < 5 {
				q++
			}
			return q, 40 + float64((i*13+k*7)%40)
		})
		mustRun(t, "--db", db, "import", "--annotator", who, p)
	}
	p := filepath.Join(dir, "flat.jsonl")
	writeLabels(t, p, func(i int, _ map[string]any) (int, float64) {
		if i%4 == 0 {
			return 4, 2 // rushed
		}
		return 4, 50
	})
	mustRun(t, "--db", db, "import", "--annotator", "flat", p)

	var rep struct {
		Annotators []struct {
			Annotator string `json:"annotator"`
			Items     int    `json:"items"`
			Rushed    int    `json:"rushed"`
			Flags     []struct{ Check, Reason string }
		} `json:"annotators"`
	}
	out := mustRun(t, "--db", db, "qc", "--format", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checks := map[string][]string{}
	for _, a := range rep.Annotators {
		if a.Items != 35 {
			t.Errorf("%s: %d items", a.Annotator, a.Items)
		}
		for _, f := range a.Flags {
			checks[a.Annotator] = append(checks[a.Annotator], f.Check)
		}
	}
	for _, who := range []string{"ann", "ben", "cat"} {
		if len(checks[who]) != 0 {
			t.Errorf("%s flagged: %v", who, checks[who])
		}
	}
	if got := strings.Join(checks["flat"], ","); !strings.Contains(got, "straight_lining") || !strings.Contains(got, "low_variance") ||
		!strings.Contains(got, "rushing") || !strings.Contains(got, "outlier") {
		t.Errorf("flat flagged for %s", got)
	}
	// Thresholds are flags: a longer run and a larger rushed share clear those two.
	out = mustRun(t, "--db", db, "qc", "--format", "json", "--straight-run", "36", "--rush-share", "0.5")
	if strings.Contains(out, "straight_lining") || strings.Contains(out, `"rushing"`) {
		t.Errorf("thresholds ignored:\n%s", out)
	}
	md := mustRun(t, "--db", db, "qc", "--format", "md")
	if !strings.Contains(md, `| flat | straight\_lining |`) { // Markdown cells escape _ (render.EscapeMarkdown)
		t.Errorf("markdown:\n%s", md)
	}
	table := mustRun(t, "--db", db, "qc")
	if !strings.Contains(table, "flat: rushing: 9 of 35 timed items") {
		t.Errorf("table:\n%s", table)
	}
	if _, err := run(t, "--db", db, "qc", "--campaign", "nope"); err == nil {
		t.Error("unknown campaign passed")
	}
}
