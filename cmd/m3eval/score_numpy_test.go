package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestScoreNumpyReference checks the numpy reference of issue #43
// (testdata/scripts/score_numpy.py, the anchor of the score benchmarks) against m3eval score
// on one small database of the benchmarks' shape: the same items, and the same Pearson,
// Spearman and Kendall tau-b of the human item means against the judge's scores, for every
// scale field. A reference that computed something else would make its timing meaningless.
// It skips where Debian's python3-numpy and python3-scipy are not installed.
func TestScoreNumpyReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2,000-turn database through the command line")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy, scipy.sparse").Run(); err != nil {
		t.Skipf("no numpy and scipy for %s: %v", py, err)
	}
	spec := intervalDB{name: "numpyref", turns: 2_000, annotators: 8, perTurn: 2, perTurn3: 2, digits: 2}
	db := filepath.Join(t.TempDir(), "ref.db")
	work := t.TempDir()
	spec.write(t, work)
	benchRun(t, "--db", db, "import", filepath.Join(work, "turns.jsonl"))
	for a := 0; a < spec.annotators; a++ {
		benchRun(t, "--db", db, "import", "--annotator", fmt.Sprintf("annotator%d", a+1), filepath.Join(work, fmt.Sprintf("labels%d.jsonl", a)))
	}
	benchRun(t, "--db", db, "import-scores", "--judge", "gpt", filepath.Join(work, "gpt.csv"))
	out := filepath.Join(work, "score.json")
	benchRun(t, "--db", db, "score", "--format", "json", "--no-cache", "--bootstrap", "0", "-o", out)

	var m3 struct {
		Fields map[string]struct {
			HumanVsAuto json.RawMessage `json:"human_vs_auto"`
		} `json:"fields"`
	}
	readJSON(t, out, &m3)
	ref, err := exec.Command(py, filepath.Join("testdata", "scripts", "score_numpy.py"), db, "20").Output()
	if err != nil {
		t.Fatalf("score_numpy.py: %v", err)
	}
	var np struct {
		Fields map[string]struct {
			N      int                `json:"n"`
			Points map[string]float64 `json:"points"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(ref, &np); err != nil {
		t.Fatalf("score_numpy.py's output: %v\n%s", err, ref)
	}
	for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
		var hva struct {
			Judge   string  `json:"judge"`
			N       int     `json:"n_items_correlation"`
			Pearson float64 `json:"pearson"`
			Rho     float64 `json:"spearman"`
			Tau     float64 `json:"kendall_tau_b"`
		}
		raw := m3.Fields[f].HumanVsAuto
		if len(raw) > 0 && raw[0] == '[' {
			var all []json.RawMessage
			if err := json.Unmarshal(raw, &all); err != nil || len(all) == 0 {
				t.Fatalf("%s: human_vs_auto: %v %s", f, err, raw)
			}
			raw = all[0]
		}
		if err := json.Unmarshal(raw, &hva); err != nil {
			t.Fatalf("%s: human_vs_auto: %v", f, err)
		}
		got, ok := np.Fields[f]
		if !ok {
			t.Fatalf("%s: not in the reference's output:\n%s", f, ref)
		}
		if got.N != hva.N || hva.N != spec.turns {
			t.Errorf("%s: items: reference %d, m3eval %d, turns %d", f, got.N, hva.N, spec.turns)
		}
		for name, want := range map[string]float64{"pearson": hva.Pearson, "spearman": hva.Rho, "kendall_tau_b": hva.Tau} {
			if d := math.Abs(got.Points[name] - want); !(d < 1e-9) {
				t.Errorf("%s %s: reference %.15g, m3eval %.15g", f, name, got.Points[name], want)
			}
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
