package agree_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
)

// inferenceRef is testdata/inference/inference.json, written by ref_inference.py there
// (SciPy, statsmodels, R psych).
type inferenceRef struct {
	Correlations []struct {
		Name                       string
		X, Y                       []float64
		Pearson, Spearman, Kendall [2]float64
		KendallExactP              *float64 `json:"kendall_exact_p"`
	}
	Kappa []struct {
		Name                          string
		Values                        []int64
		Table                         [][]int64
		Unweighted, Linear, Quadratic struct{ Kappa, Z, P float64 }
	}
	ICC []struct {
		Name                              string
		Matrix                            [][]int64
		ICC, F, DF1, DF2, P, Lower, Upper []float64
	}
	Adjust   []struct{ P, Holm, BH []float64 }
	Williams []struct {
		N                   int
		R12, R13, R23, T, P float64
	}
}

func loadInference(t *testing.T) inferenceRef {
	t.Helper()
	raw, err := os.ReadFile("testdata/inference/inference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r inferenceRef
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// close reports whether got equals want within a relative tolerance (absolute near 0).
func closeRel(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300) || math.Abs(got-want) < 1e-300
}

func checkP(t *testing.T, what string, v agree.Value, want, rel float64) {
	t.Helper()
	got, ok := v.Float()
	if !ok || !closeRel(got, want, rel) {
		t.Errorf("%s: got %v, reference %v", what, v, want)
	}
}

func TestCorrelationPValuesMatchSciPy(t *testing.T) {
	ref := loadInference(t)
	for _, c := range ref.Correlations {
		n := len(c.X)
		checkP(t, c.Name+" pearson r", agree.Pearson(c.X, c.Y), c.Pearson[0], 1e-12)
		checkP(t, c.Name+" pearson p", agree.PearsonTest(agree.Pearson(c.X, c.Y), n).P, c.Pearson[1], 1e-9)
		sp := agree.SpearmanTest(agree.Spearman(c.X, c.Y), n).P
		if p, _ := sp.Float(); p == 0 && c.Spearman[1] < 1e-50 {
			// A perfect order: our rho is exactly 1 (p = 0), SciPy's 0.9999999999999999.
		} else {
			checkP(t, c.Name+" spearman p", sp, c.Spearman[1], 1e-9)
		}
		tau, test, _ := agree.KendallTest(c.X, c.Y)
		checkP(t, c.Name+" kendall tau", tau, c.Kendall[0], 1e-12)
		checkP(t, c.Name+" kendall p", test.P, c.Kendall[1], 1e-9)
		if c.KendallExactP != nil && n <= 33 {
			if test.Method != agree.MethodKendallExact {
				t.Errorf("%s: kendall method %q, want exact", c.Name, test.Method)
			}
			checkP(t, c.Name+" kendall exact p", test.P, *c.KendallExactP, 1e-9)
		}
	}
}

func TestKappaZMatchesStatsmodels(t *testing.T) {
	ref := loadInference(t)
	for _, c := range ref.Kappa {
		k := len(c.Values)
		table := make([]int64, 0, k*k)
		for _, row := range c.Table {
			table = append(table, row...)
		}
		for _, w := range []struct {
			wt   agree.Weighting
			want struct{ Kappa, Z, P float64 }
		}{{agree.Unweighted, c.Unweighted}, {agree.Linear, c.Linear}, {agree.Quadratic, c.Quadratic}} {
			name := c.Name + " " + w.wt.String()
			checkP(t, name+" kappa", agree.CohenTable(table, c.Values, w.wt), w.want.Kappa, 1e-12)
			test := agree.CohenTest(table, c.Values, w.wt)
			checkP(t, name+" z", test.Statistic, w.want.Z, 1e-9)
			checkP(t, name+" p", test.P, w.want.P, 1e-9)
		}
	}
}

func TestICCTestsMatchPsych(t *testing.T) {
	ref := loadInference(t)
	for _, c := range ref.ICC {
		n, k := len(c.Matrix), len(c.Matrix[0])
		f := agree.NewOrdinal("x", 1, 2, 3, 4, 5)
		d := agree.FieldData{Field: f, Ratings: agree.NewMatrix(n, k)}
		for i, row := range c.Matrix {
			d.Items = append(d.Items, strconv.Itoa(i))
			for r, v := range row {
				d.Ratings.Set(i, r, uint8(v-1))
			}
		}
		for r := 0; r < k; r++ {
			d.Raters = append(d.Raters, "r"+strconv.Itoa(r))
		}
		// The same numbers as a continuous field take the floating-point ANOVA.
		cd := agree.FieldData{Field: agree.NewContinuous("x"), Items: d.Items, Raters: d.Raters, Ratings: agree.NewMatrix(n, k)}
		for _, row := range c.Matrix {
			for _, v := range row {
				cd.Cont = append(cd.Cont, float64(v))
			}
		}
		for _, fd := range []*agree.FieldData{&d, &cd} {
			checkICC(t, c.Name+" "+fd.Field.Type.String(), fd, c.ICC, c.F, c.DF1, c.DF2, c.P, c.Lower, c.Upper)
		}
	}
}

func checkICC(t *testing.T, name string, d *agree.FieldData, icc, f, df1, df2, p, lower, upper []float64) {
	t.Helper()
	{
		c := struct{ ICC, F, DF1, DF2, P, Lower, Upper []float64 }{icc, f, df1, df2, p, lower, upper}
		res, err := agree.AnalyzeField(context.Background(), d, 0, agree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ic := res.ICC
		vals := []agree.Value{ic.ICC11, ic.ICC21, ic.ICC31, ic.ICC1k, ic.ICC2k, ic.ICC3k}
		for i, form := range agree.ICCForms {
			name := name + " " + form.ShroutFleiss
			tst := ic.Tests[i]
			checkP(t, name+" icc", vals[i], c.ICC[i], 1e-9)
			checkP(t, name+" F", tst.Statistic, c.F[i], 1e-9)
			if tst.DF1 != c.DF1[i] || tst.DF2 != c.DF2[i] {
				t.Errorf("%s df: got %v, %v; psych %v, %v", name, tst.DF1, tst.DF2, c.DF1[i], c.DF2[i])
			}
			checkP(t, name+" p", tst.P, c.P[i], 1e-7)
			checkP(t, name+" lower", tst.Lo, c.Lower[i], 1e-7)
			checkP(t, name+" upper", tst.Hi, c.Upper[i], 1e-7)
		}
	}
}

func TestAdjustMatchesStatsmodels(t *testing.T) {
	ref := loadInference(t)
	for _, c := range ref.Adjust {
		for _, m := range []struct {
			a    agree.Adjustment
			want []float64
		}{{agree.AdjustHolm, c.Holm}, {agree.AdjustBH, c.BH}} {
			got := agree.AdjustP(c.P, m.a)
			for i := range got {
				if !closeRel(got[i], m.want[i], 1e-12) {
					t.Errorf("%s [%d]: got %v, statsmodels %v", m.a, i, got[i], m.want[i])
				}
			}
		}
	}
	got := agree.AdjustP([]float64{0.01, math.NaN(), 0.02}, agree.AdjustHolm)
	if got[0] != 0.02 || !math.IsNaN(got[1]) || got[2] != 0.02 {
		t.Errorf("NaN is left out of the family: got %v", got)
	}
}

func TestWilliamsMatchesPsych(t *testing.T) {
	ref := loadInference(t)
	if len(ref.Williams) == 0 {
		t.Fatal("no Williams cases")
	}
	for _, c := range ref.Williams {
		got := agree.WilliamsTest(c.R12, c.R13, c.R23, c.N)
		checkP(t, "williams t", got.Statistic, c.T, 1e-9)
		checkP(t, "williams p", got.P, c.P, 1e-9)
		if got.DF1 != float64(c.N-3) {
			t.Errorf("df %v, want %d", got.DF1, c.N-3)
		}
	}
}
