package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
)

// DemoTurns reads the demo episodes (annotations/demo/episodes.jsonl) as flat turn records.
func DemoTurns(t testing.TB) []map[string]any {
	t.Helper()
	f, err := annotations.Demo.Open("demo/episodes.jsonl")
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

// WriteDemoLabels writes to path one annotator's labels of every demo turn: label(i, turn)
// gives the three scales and the active seconds.
func WriteDemoLabels(t testing.TB, path string, label func(i int, turn map[string]any) (int, float64)) {
	t.Helper()
	var b strings.Builder
	for i, turn := range DemoTurns(t) {
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
