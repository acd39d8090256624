package agree

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactNullVariance is the numerator Σ p_i. p_.j (w_ij − (w̄_i. + w̄_.j))² − p_e² of κ's null
// variance in exact rational arithmetic, straight from the formula of CohenTest's comment.
func exactNullVariance(table, values []int64, wt Weighting) *big.Rat {
	k := len(values)
	var n int64
	rows, cols := make([]int64, k), make([]int64, k)
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			rows[c] += table[c*k+d]
			cols[d] += table[c*k+d]
			n += table[c*k+d]
		}
	}
	var dmax int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			dmax = max(dmax, dist(wt, values[c], values[d]))
		}
	}
	p := func(x int64) *big.Rat { return big.NewRat(x, n) }
	w := func(c, d int) *big.Rat { return big.NewRat(dmax-dist(wt, values[c], values[d]), dmax) }
	wr, wc := make([]*big.Rat, k), make([]*big.Rat, k)
	pe := new(big.Rat)
	for c := range k {
		wr[c], wc[c] = new(big.Rat), new(big.Rat)
	}
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			wr[c].Add(wr[c], new(big.Rat).Mul(p(cols[d]), w(c, d)))
			wc[d].Add(wc[d], new(big.Rat).Mul(p(rows[c]), w(c, d)))
			pe.Add(pe, new(big.Rat).Mul(w(c, d), new(big.Rat).Mul(p(rows[c]), p(cols[d]))))
		}
	}
	s := new(big.Rat)
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			e := new(big.Rat).Sub(w(c, d), new(big.Rat).Add(wr[c], wc[d]))
			t := new(big.Rat).Mul(new(big.Rat).Mul(p(rows[c]), p(cols[d])), new(big.Rat).Mul(e, e))
			s.Add(s, t)
		}
	}
	return s.Sub(s, new(big.Rat).Mul(pe, pe))
}

// TestKappaNullVarianceExactZero: the κ z-test is undefined exactly when the null variance
// is 0 in exact arithmetic, never a z of floating-point noise with p ≈ 1. Tables: random ones,
// and the ones that reach 0 (a rater using one category; non-interleaving values with
// linear weights).
func TestKappaNullVarianceExactZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 32))
	values := []int64{1, 2, 3, 4, 5}
	zeros, defined := 0, 0
	for trial := range 3000 {
		table := make([]int64, 25)
		rowsUsed := rng.IntN(5) + 1
		colsUsed := rng.IntN(5) + 1
		r0, c0 := rng.IntN(6-rowsUsed), rng.IntN(6-colsUsed)
		if trial%3 == 0 {
			c0 = min(4, r0+rowsUsed) // columns above the rows: no interleaving
			colsUsed = min(colsUsed, 5-c0)
		}
		for range 5 + rng.IntN(40) {
			c, d := r0+rng.IntN(rowsUsed), c0+rng.IntN(colsUsed)
			table[c*5+d] += int64(1 + rng.IntN(3))
		}
		for _, wt := range []Weighting{Unweighted, Linear, Quadratic} {
			if !CohenTable(table, values, wt).OK() {
				continue
			}
			exactZero := exactNullVariance(table, values, wt).Sign() == 0
			test := CohenTest(table, values, wt)
			switch {
			case exactZero:
				zeros++
				if test.P.OK() || test.P.Reason() != "the variance under the null hypothesis is 0" {
					t.Fatalf("%v %v: null variance is exactly 0 but the test is %+v", table, wt, test)
				}
				if test.PAdjusted.OK() {
					t.Fatalf("undefined test with a p_adjusted: %+v", test)
				}
			default:
				defined++
				if !test.P.OK() {
					t.Fatalf("%v %v: null variance %v > 0 but the test is undefined: %v", table, wt, exactNullVariance(table, values, wt), test.P.Reason())
				}
			}
		}
	}
	if zeros < 300 || defined < 300 {
		t.Fatalf("only %d exact-zero and %d defined cases", zeros, defined)
	}
}

// TestUndefinedTestsOutOfFamily: an undefined κ test does not enter the Holm family, so the
// other p-values adjust as if it were not there.
func TestUndefinedTestsOutOfFamily(t *testing.T) {
	// Rater b uses one category: κ = 0 but its z-test is undefined, not p = 1.
	one := []int64{6, 0, 4, 0} // 2×2, b always says the first category
	tst := CohenTest(one, []int64{0, 1}, Unweighted)
	if tst.P.OK() {
		t.Fatalf("one-category rater: p = %v, want undefined", tst.P)
	}
	ok := CohenTest([]int64{8, 2, 1, 9}, []int64{0, 1}, Unweighted)
	p, _ := ok.P.Float()
	u := noTest("unweighted only")
	res := []FieldResult{{Pairwise: []Pair{{KappaTest: [3]Test{ok, u, u}}, {KappaTest: [3]Test{tst, u, u}}}}}
	Adjust(AdjustHolm, res)
	got, _ := res[0].Pairwise[0].KappaTest[0].PAdjusted.Float()
	if got != p {
		t.Errorf("the only defined test adjusted to %v, want its own p %v (a family of 1)", got, p)
	}
	if res[0].Pairwise[1].KappaTest[0].PAdjusted.OK() {
		t.Error("the undefined test got an adjusted p")
	}
}
