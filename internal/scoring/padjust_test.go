package scoring_test

import (
	"math"
	"sort"
	"strings"
	"testing"
)

// testObjects walks a JSON report and calls fn on every test object (one with "p" and
// "p_adjusted" and "method") with its path.
func testObjects(path string, v any, fn func(path string, o map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		_, hasP := v["p"]
		_, hasMethod := v["method"] // not the undefined_reason map beside them
		if _, hasAdj := v["p_adjusted"]; hasP && hasAdj && hasMethod {
			fn(path, v)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			testObjects(path+"."+k, v[k], fn)
		}
	case []any:
		for i, x := range v {
			testObjects(path+"["+string(rune('0'+i%10))+"]", x, fn)
		}
	}
}

// holm is Holm's step-down adjustment, written here from its definition (Holm 1979).
func holm(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	out := make([]float64, len(p))
	run := 0.0
	for r, i := range idx {
		run = math.Max(run, math.Min(1, float64(len(p)-r)*p[i]))
		out[i] = run
	}
	return out
}

// TestPAdjustedOneRule (moved from cmd/m3eval/inference_fixes_test.go): over every test of a score report, p_adjusted follows one rule.
// Without --adjust it is null with reason "not adjusted" wherever p is defined (and p's
// reason where p is not). With --adjust holm it is defined exactly where p is; the family is
// every defined test once (Williams' t, shown under tests.pearson and williams_pearson, once),
// and williams_pearson shows the same adjusted p as tests.pearson.
func TestPAdjustedOneRule(t *testing.T) {
	db := scoreDB(t)
	plain := scoreJSON(t, db)
	n := 0
	testObjects("", plain, func(path string, o map[string]any) {
		n++
		reasons, _ := o["undefined_reason"].(map[string]any)
		if o["p_adjusted"] != nil {
			t.Errorf("%s: p_adjusted %v without --adjust, want null", path, o["p_adjusted"])
			return
		}
		want := "not adjusted"
		if o["p"] == nil {
			want, _ = reasons["p"].(string)
		}
		if reasons["p_adjusted"] != want {
			t.Errorf("%s: p_adjusted reason %q, want %q", path, reasons["p_adjusted"], want)
		}
	})
	if n < 50 {
		t.Fatalf("only %d tests walked", n)
	}
	adj := scoreJSON(t, db, "--adjust", "holm")
	var ps []float64
	var objs []map[string]any
	williams := 0
	testObjects("", adj, func(path string, o map[string]any) {
		if (o["p"] == nil) != (o["p_adjusted"] == nil) {
			t.Errorf("%s: p %v but p_adjusted %v", path, o["p"], o["p_adjusted"])
		}
		if strings.HasSuffix(path, ".williams_pearson") {
			return // the same test as tests.pearson, checked below
		}
		if p, ok := o["p"].(float64); ok {
			ps = append(ps, p)
			objs = append(objs, o)
		}
	})
	want := holm(ps)
	for i, o := range objs {
		if got := o["p_adjusted"].(float64); math.Abs(got-want[i]) > 1e-12 {
			t.Errorf("test %d (p = %v): p_adjusted %v, want Holm over the family of %d: %v", i, ps[i], got, len(ps), want[i])
		}
	}
	for _, f := range adj["fields"].(map[string]any) {
		cs, _ := f.(map[string]any)["judge_comparisons"].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			w := c["williams_pearson"].(map[string]any)
			tp := c["tests"].(map[string]any)["pearson"].(map[string]any)
			if tp["method"] == "Williams t" {
				williams++
				if w["p_adjusted"] != tp["p_adjusted"] || w["p_adjusted"] == nil {
					t.Errorf("williams_pearson p_adjusted %v, tests.pearson %v", w["p_adjusted"], tp["p_adjusted"])
				}
			}
		}
	}
	if williams == 0 {
		t.Fatal("no Williams test in the report: the check above checked nothing")
	}
}
