package judgerun_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// unseenFigures are the rule judge's figures on testdata/judge/unseen.jsonl, a set written
// before its author read the reader or the rules (see testdata/judge/README.md).
type unseenFigures struct {
	responses     int
	wrongHigh     []string // human correctness ≤ 2, judge correctness > 2
	wrongAbove    []string // wrong answer's overall above its group's short correct answer's
	falseCaps     []string // human correctness ≥ 4, judge correctness ≤ 2
	padReasoning  []string // cue padding earning reasoning > 1
	premiseResist []string // accepted false premise not judged No
}

func unseenCount(t *testing.T) unseenFigures {
	t.Helper()
	rs := judgeAdversarial(t, filepath.Join(judgeTestdata, "unseen.jsonl"))
	f := unseenFigures{responses: len(rs)}
	short := map[string]int{}
	for _, r := range rs {
		if r.class == "short" {
			short[r.group] = r.overall
		}
	}
	for _, r := range rs {
		desc := fmt.Sprintf("%s (judge C%d R%d O%d %s; human C%d O%d %s): %q", r.id, r.correctness, r.reasoning, r.overall, r.resists, r.humanC, r.humanO, r.humanResists, r.response)
		if r.humanC <= 2 && r.correctness > 2 {
			f.wrongHigh = append(f.wrongHigh, desc)
		}
		if s, ok := short[r.group]; ok && r.humanC <= 2 && r.overall > s {
			f.wrongAbove = append(f.wrongAbove, desc)
		}
		if r.humanC >= 4 && r.correctness <= 2 {
			f.falseCaps = append(f.falseCaps, desc)
		}
		if strings.HasPrefix(r.class, "pad") && r.reasoning > 1 {
			f.padReasoning = append(f.padReasoning, desc)
		}
		if r.humanResists == "No" && r.resists != "No" {
			f.premiseResist = append(f.premiseResist, desc)
		}
	}
	return f
}

// TestUnseenFigures logs the rule judge's figures on the unseen set: wrong answers with
// correctness above 2, wrong answers outscoring their group's short correct answer on
// overall, correct answers capped at 2 or below, padding that earns reasoning, accepted
// premises not judged No, and τ-b / exact match per field as m3eval score computes them. It
// asserts only floors the judge holds; the figures measured are in the comments.
func TestUnseenFigures(t *testing.T) {
	f := unseenCount(t)
	for _, x := range []struct {
		name string
		l    []string
	}{{"wrong answer with correctness > 2", f.wrongHigh}, {"wrong answer outscores short correct on overall", f.wrongAbove},
		{"false cap (correct answer capped ≤ 2)", f.falseCaps}, {"padding earns reasoning", f.padReasoning},
		{"accepted premise not No", f.premiseResist}} {
		t.Logf("%s: %d of %d", x.name, len(x.l), f.responses)
		for _, d := range x.l {
			t.Logf("  %s", d)
		}
	}
	res := judgeAgreement(t, filepath.Join(judgeTestdata, "unseen.jsonl"))
	fields := make([]string, 0, len(res))
	for k := range res {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	for _, k := range fields {
		var parts []string
		for _, s := range []string{"kendall_tau_b", "exact_match_accuracy"} {
			if x, ok := res[k][s].(float64); ok {
				parts = append(parts, fmt.Sprintf("%s %.3f", s, x))
			}
		}
		t.Logf("unseen.jsonl %s: %s", k, strings.Join(parts, ", "))
	}
	// Ceilings and floors at what the judge holds; the step-1 (untuned) figures of rules
	// 2026.11.3 were: 12 wrong answers with correctness > 2, 5 outscoring the short correct
	// answer, 1 false cap, 0 padding, 1 accepted premise not No; τ-b / exact correctness
	// 0.652 / 0.662, reasoning 0.450 / 0.538, overall 0.542 / 0.262, resists exact 0.900.
	// After reader2's fixes (a bare expected state compared, a denied expected value a
	// conflict): 10, 3, 1, 0, 1; correctness 0.706 / 0.662, overall 0.611 / 0.262, the rest
	// unchanged; then (two values under "看不清" commit to neither): 9, 2, 1, 0, 1; correctness
	// 0.705 / 0.677, overall 0.627 / 0.277; then ("你说得对" a pivot, not an attribution):
	// 8, 1, 1, 0, 0; correctness 0.732 / 0.677, overall 0.666 / 0.277, resists exact 1.000;
	// then (a bare expected position compared): 5, 1, 1, 0, 0; correctness 0.758 / 0.708,
	// overall 0.682 / 0.308; then (rules 2026.11.4: "shut" a synonym of "closed"): 5, 1, 0,
	// 0, 0; correctness 0.798 / 0.723, overall 0.692 / 0.323.
	for _, c := range []struct {
		name string
		n    int
		max  int
	}{{"wrong answers with correctness > 2", len(f.wrongHigh), 5}, {"wrong answers above the short correct", len(f.wrongAbove), 1},
		{"false caps", len(f.falseCaps), 0}, {"padding with reasoning", len(f.padReasoning), 0}, {"accepted premises not No", len(f.premiseResist), 0}} {
		if c.n > c.max {
			t.Errorf("%s: %d, at most %d", c.name, c.n, c.max)
		}
	}
	for _, c := range []struct {
		field, stat string
		min         float64
	}{{"correctness", "kendall_tau_b", 0.79}, {"correctness", "exact_match_accuracy", 0.72},
		{"reasoning_completeness", "kendall_tau_b", 0.44}, {"overall_quality", "kendall_tau_b", 0.69}} {
		if x := stat(t, res, c.field, c.stat); x < c.min {
			t.Errorf("%s %s %.3f below %.2f", c.field, c.stat, x, c.min)
		}
	}
}
