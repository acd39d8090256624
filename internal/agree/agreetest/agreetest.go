// Package agreetest holds test helpers shared by the packages that check m3eval's statistics
// against the reference oracle (internal/agree and the score command).
package agreetest

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"
)

// CompareBootstrap checks our bootstrap blocks against the oracle's, field by field: every
// statistic the oracle bootstrapped, B scaled by factor (we resample factor times more often, so the difference is
// mostly the oracle's own Monte-Carlo error), undefined replicates within sampling noise, each
// interval end within half the oracle's standard error and the standard error within 20%.
// skipEnds, when it returns true, exempts a statistic's interval ends (not its SE) from the
// check. It returns how many statistics were compared.
func CompareBootstrap(t *testing.T, oracleFields, ourFields map[string]any, factor int,
	skipEnds func(field, stat string, oracleField map[string]any) bool) int {
	t.Helper()
	n := 0
	for name, of := range oracleFields {
		ofm := of.(map[string]any)
		ob, _ := ofm["bootstrap"].(map[string]any)
		gf, _ := ourFields[name].(map[string]any)
		gb, _ := gf["bootstrap"].(map[string]any)
		if len(ob) > len(gb) { // we bootstrap every statistic, the oracle a few
			t.Errorf("%s.bootstrap: oracle has %d statistics, we have %d", name, len(ob), len(gb))
		}
		for stat, ov := range ob {
			p := name + ".bootstrap." + stat
			o := ov.(map[string]any)
			g, ok := gb[stat].(map[string]any)
			if !ok {
				t.Errorf("%s: missing", p)
				continue
			}
			n++
			if o["B"].(float64)*float64(factor) != g["B"] {
				t.Errorf("%s: B oracle %v × %d, we %v", p, o["B"], factor, g["B"])
			}
			on, gn := o["n_undefined"].(float64), g["n_undefined"].(float64)/float64(factor)
			if math.Abs(on-gn) > 4*math.Sqrt(math.Max(on, gn)+1)+1 {
				t.Errorf("%s: n_undefined oracle %v, we %v", p, on, gn)
			}
			oci, _ := o["ci95_percentile"].([]any)
			gci, _ := g["ci95_percentile"].([]any)
			if (oci == nil) != (gci == nil) {
				t.Errorf("%s: ci oracle %v, we %v", p, oci, gci)
				continue
			}
			if oci == nil {
				continue
			}
			se, _ := o["se"].(float64)
			if skipEnds == nil || !skipEnds(name, stat, ofm) {
				for i := 0; i < 2; i++ {
					if d := math.Abs(oci[i].(float64) - gci[i].(float64)); d > se/2 {
						t.Errorf("%s: ci[%d] oracle %.4f, we %.4f: differ by %.4f > se/2 = %.4f", p, i, oci[i], gci[i], d, se/2)
					}
				}
			}
			if gse, _ := g["se"].(float64); math.Abs(gse-se) > 0.2*se {
				t.Errorf("%s: se oracle %.4f, we %.4f", p, se, gse)
			}
		}
	}
	return n
}

// OracleCases returns the folder of the reference oracle's public cases (c01…c08), kept in the
// repository at internal/agree/testdata/oracle/cases with the oracle that produced them
// (testdata/oracle/README.md says how to regenerate them). It is found from this source file's
// own location, so every package's tests reach it whatever their working directory.
func OracleCases() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("internal", "agree", "testdata", "oracle", "cases")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "oracle", "cases")
}
