package agree

import (
	"math"
	"math/big"
)

// Level is the distance metric of Krippendorff's alpha.
type Level int

// The levels of measurement of Krippendorff's alpha.
const (
	LevelNominal Level = iota
	LevelOrdinal
	LevelInterval
)

// String returns the level's name as used in the JSON keys.
func (l Level) String() string {
	switch l {
	case LevelOrdinal:
		return "ordinal"
	case LevelInterval:
		return "interval"
	}
	return "nominal"
}

// Weighting selects the disagreement weights of Cohen's kappa and Gwet's AC2.
type Weighting int

// The weightings are identity, |c−k| and (c−k)² on the category values.
const (
	Unweighted Weighting = iota
	Linear
	Quadratic
)

// String returns "unweighted", "linear" or "quadratic".
func (w Weighting) String() string {
	switch w {
	case Linear:
		return "linear"
	case Quadratic:
		return "quadratic"
	}
	return "unweighted"
}

// dist returns the integer disagreement weight between category values a and b.
func dist(w Weighting, a, b int64) int64 {
	switch w {
	case Linear:
		if a > b {
			return a - b
		}
		return b - a
	case Quadratic:
		return (a - b) * (a - b)
	}
	if a == b {
		return 0
	}
	return 1
}

// catValues returns the values weights are spaced by: the declared values of an ordinal
// field, the codes of a nominal one (only the unweighted metric is used there).
func catValues(f Field) []int64 {
	if f.Type == Ordinal {
		return f.Values
	}
	v := make([]int64, len(f.Categories))
	for i := range v {
		v[i] = int64(i)
	}
	return v
}

// CohenTable is Cohen's kappa of a k × k confusion table, with rows for the first rater and
// columns for the second. Its disagreement weights are spaced by the category values:
// kappa = 1 − n·Σ d·N / Σ d·r_c·s_k. Numerator and denominator are exact integers.
func CohenTable(table []int64, values []int64, w Weighting) Value {
	k := len(values)
	// The bootstrap calls this for every rater pair of every replicate: small tables keep
	// their margins on the stack.
	var rb, cb [16]int64
	var rows, cols []int64
	if k <= len(rb) {
		rows, cols = rb[:k], cb[:k]
	} else {
		rows, cols = make([]int64, k), make([]int64, k)
	}
	var n int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			x := table[c*k+d]
			rows[c] += x
			cols[d] += x
			n += x
		}
	}
	if n == 0 {
		return Undefined("no co-rated items")
	}
	var obs, exp int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			dd := dist(w, values[c], values[d])
			obs += dd * table[c*k+d]
			exp += dd * rows[c] * cols[d]
		}
	}
	if exp == 0 {
		return Undefined("expected disagreement is 0 (both raters used one and the same category)")
	}
	return Num(1 - float64(n)*float64(obs)/float64(exp))
}

// PercentTable is the share of the diagonal of a confusion table.
func PercentTable(table []int64, k int) Value {
	var n, agree int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			n += table[c*k+d]
		}
		agree += table[c*k+c]
	}
	if n == 0 {
		return Undefined("no co-rated items")
	}
	return Num(float64(agree) / float64(n))
}

// krippendorff computes alpha from the coincidence counts of t:
// alpha = 1 − (n−1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck.
func krippendorff(t *tally, values []int64, level Level) Value {
	k := t.k
	kk := k * k
	// n_c is the number of pairable values of category c (each pairable item contributes
	// its m_u values), an integer.
	nc := make([]float64, k)
	var n float64
	for m := 2; m <= t.r; m++ {
		for c := 0; c < k; c++ {
			x := float64(t.c[m*k+c])
			nc[c] += x
			n += x
		}
	}
	if n == 0 {
		return Undefined("no item with 2 or more ratings (no pairable values)")
	}
	used := 0
	for _, x := range nc {
		if x > 0 {
			used++
		}
	}
	if used < 2 {
		return Undefined("expected disagreement is 0 (a single value among pairable values)")
	}
	d2 := make([]float64, kk)
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			if c == d {
				continue
			}
			switch level {
			case LevelNominal:
				d2[c*k+d] = 1
			case LevelInterval:
				x := float64(values[c] - values[d])
				d2[c*k+d] = x * x
			case LevelOrdinal:
				lo, hi := min(c, d), max(c, d)
				var s float64
				for g := lo; g <= hi; g++ {
					s += nc[g]
				}
				x := s - (nc[c]+nc[d])/2
				d2[c*k+d] = x * x
			}
		}
	}
	var do float64
	for m := 2; m <= t.r; m++ {
		pm := t.p[m*kk : m*kk+kk]
		var s float64
		for i, x := range pm {
			if x != 0 {
				s += float64(x) * d2[i]
			}
		}
		do += s / float64(m-1)
	}
	var de float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			de += nc[c] * nc[d] * d2[c*k+d]
		}
	}
	return ratio((n-1)*do, de, "expected disagreement is 0 (a single value among pairable values)").oneMinus()
}

func (v Value) oneMinus() Value {
	if !v.ok {
		return v
	}
	return Num(1 - v.v)
}

// KrippendorffAlpha returns Krippendorff's alpha of an items × raters matrix with missing
// values, at the given level. values are the category values, which the interval metric uses.
func KrippendorffAlpha(m Matrix, values []int64, level Level) Value {
	return krippendorff(tallyMatrix(m, len(values), tallyOpts{}), values, level)
}

// fleiss computes Fleiss' kappa over the complete items of t.
func fleiss(t *tally) Value {
	r, k := t.r, t.k
	if r < 2 {
		return Undefined("fewer than 2 raters")
	}
	n := t.items[r]
	if n == 0 {
		return Undefined("no item rated by every rater")
	}
	kk := k * k
	var trace int64
	for c := 0; c < k; c++ {
		trace += t.p[r*kk+c*k+c]
	}
	nm := float64(n) * float64(r)
	var sq float64
	var total int64
	for c := 0; c < k; c++ {
		x := t.c[r*k+c]
		total += x
		sq += float64(x) * float64(x)
	}
	if sq == float64(total)*float64(total) {
		return Undefined("expected agreement is 1 (all ratings in one category)")
	}
	pbar := float64(trace) / (nm * float64(r-1))
	pe := sq / (nm * nm)
	return ratio(pbar-pe, 1-pe, "expected agreement is 1 (all ratings in one category)")
}

// percentAgreement returns the three overall percent agreements of the oracle.
func percentAgreement(t *tally) (allComplete, pairwiseMean, allPairable Value) {
	r, k := t.r, t.k
	kk := k * k
	if t.items[r] == 0 || r == 0 {
		allComplete = Undefined("no item rated by every rater")
	} else {
		allComplete = Num(float64(t.allAgreeComplete) / float64(t.items[r]))
	}
	var n2 int64
	var s float64
	for m := 2; m <= r; m++ {
		n2 += t.items[m]
		var tr int64
		for c := 0; c < k; c++ {
			tr += t.p[m*kk+c*k+c]
		}
		s += float64(tr) / float64(m*(m-1))
	}
	if n2 == 0 {
		pairwiseMean = Undefined("no item with 2 or more ratings")
		allPairable = pairwiseMean
		return
	}
	return allComplete, Num(s / float64(n2)), Num(float64(t.allAgreePairable) / float64(n2))
}

// gwet computes Gwet's AC1 (unweighted) or AC2 (linear, quadratic) with missing ratings, over
// the q declared categories.
func gwet(t *tally, values []int64, w Weighting) Value {
	q, k, r := len(values), t.k, t.r
	if q < 2 {
		return Undefined("fewer than 2 categories")
	}
	var n, n2 int64
	for m := 1; m <= r; m++ {
		n += t.items[m]
		if m >= 2 {
			n2 += t.items[m]
		}
	}
	if n == 0 {
		return Undefined("no rated item")
	}
	if n2 == 0 {
		return Undefined("no item with 2 or more ratings")
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	span := float64(hi - lo)
	wt := make([]float64, k*k)
	var wsum float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			var x float64
			switch w {
			case Unweighted:
				if c == d {
					x = 1
				}
			case Linear:
				x = 1 - math.Abs(float64(values[c]-values[d]))/span
			case Quadratic:
				e := float64(values[c]-values[d]) / span
				x = 1 - e*e
			}
			wt[c*k+d] = x
			wsum += x
		}
	}
	kk := k * k
	var pa float64
	for m := 2; m <= r; m++ {
		var s float64
		for i, x := range t.p[m*kk : m*kk+kk] {
			if x != 0 {
				s += wt[i] * float64(x)
			}
		}
		pa += s / float64(m*(m-1))
	}
	pa /= float64(n2)
	var pe float64
	for c := 0; c < k; c++ {
		var pi float64
		for m := 1; m <= r; m++ {
			pi += float64(t.c[m*k+c]) / float64(m)
		}
		pi /= float64(n)
		pe += pi * (1 - pi)
	}
	pe *= wsum / float64(q*(q-1))
	return ratio(pa-pe, 1-pe, "pe == 1")
}

// ICC holds the six intraclass correlations of Shrout & Fleiss (1979), over the complete
// items. In McGraw & Wong's (1996) notation: ICC(1,1) = ICC(1) one-way random, single rater;
// ICC(2,1) = ICC(A,1) two-way random, absolute agreement; ICC(3,1) = ICC(C,1) two-way mixed,
// consistency; the ",k" forms are the same for the mean of k raters (ICC(k), ICC(A,k),
// ICC(C,k)).
type ICC struct {
	ICC11, ICC21, ICC31, ICC1k, ICC2k, ICC3k Value
	N                                        int // complete items
	K                                        int // raters
	// The ANOVA mean squares: rows (items), columns (raters), residual, within rows.
	MSR, MSC, MSE, MSW float64
	// Tests holds the F test and confidence interval of each form, in the order above.
	Tests [6]ICCTest
}

// icc computes the ICCs from the exact integer sums of the complete items, so the sums of
// squares suffer no cancellation and a zero variance is recognised exactly.
func icc(t *tally) ICC {
	r := t.r
	n := t.items[r]
	out := ICC{N: int(n), K: r}
	if n < 2 || r < 2 {
		u := Undefined("needs >= 2 complete items and >= 2 raters")
		out.ICC11, out.ICC21, out.ICC31, out.ICC1k, out.ICC2k, out.ICC3k = u, u, u, u, u, u
		return out
	}
	bi := func(x int64) *big.Int { return big.NewInt(x) }
	N, K := bi(n), bi(int64(r))
	T := new(big.Int).Mul(N, K)
	S2 := new(big.Int).Mul(bi(t.sumX), bi(t.sumX))
	var cc big.Int
	for _, c := range t.colSum {
		cc.Add(&cc, new(big.Int).Mul(bi(c), bi(c)))
	}
	// Every sum of squares times T = n·k is an integer.
	sst := new(big.Int).Sub(new(big.Int).Mul(T, bi(t.sumX2)), S2)
	ssr := new(big.Int).Sub(new(big.Int).Mul(N, bi(t.sumRow2)), S2)
	ssc := new(big.Int).Sub(new(big.Int).Mul(K, &cc), S2)
	sse := new(big.Int).Sub(new(big.Int).Sub(sst, ssr), ssc)
	ssw := new(big.Int).Sub(sst, ssr)
	rat := func(x *big.Int, den int64) *big.Rat {
		return new(big.Rat).SetFrac(x, new(big.Int).Mul(T, bi(den)))
	}
	msr := rat(ssr, n-1)
	msc := rat(ssc, int64(r-1))
	mse := rat(sse, (n-1)*int64(r-1))
	msw := rat(ssw, n*int64(r-1))
	km1 := new(big.Rat).SetInt64(int64(r - 1))
	kr := new(big.Rat).SetInt64(int64(r))
	nr := new(big.Rat).SetInt64(n)
	add := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	sub := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	mul := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
	quo := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }
	div := func(num, den *big.Rat) Value {
		if den.Sign() == 0 {
			return Undefined("0/0 (no variance)")
		}
		f, _ := quo(num, den).Float64()
		return Num(f)
	}
	colTerm := quo(sub(msc, mse), nr) // (MSC − MSE)/n
	out.ICC11 = div(sub(msr, msw), add(msr, mul(km1, msw)))
	out.ICC21 = div(sub(msr, mse), add(add(msr, mul(km1, mse)), mul(kr, colTerm)))
	out.ICC31 = div(sub(msr, mse), add(msr, mul(km1, mse)))
	out.ICC1k = div(sub(msr, msw), msr)
	out.ICC2k = div(sub(msr, mse), add(msr, colTerm))
	out.ICC3k = div(sub(msr, mse), msr)
	out.MSR, _ = msr.Float64()
	out.MSC, _ = msc.Float64()
	out.MSE, _ = mse.Float64()
	out.MSW, _ = msw.Float64()
	// The tests are added by the caller for the full data only: the bootstrap calls icc
	// for every replicate, and the F quantiles of the intervals are costly.
	return out
}

// ICCForm names one ICC form in both notations.
type ICCForm struct {
	// ShroutFleiss is Shrout & Fleiss's (1979) name, e.g. "ICC(2,1)" (also the JSON key).
	ShroutFleiss string
	// McGrawWong is McGraw & Wong's (1996) name, e.g. "ICC(A,1)".
	McGrawWong string
	// Model says what it measures.
	Model string
	// Short is a compact description for table rows: the model and the number of raters
	// the ICC is about (1 or the mean of k).
	Short string
}

// ICCForms lists the six forms in the order of [ICC]'s fields and of ICC.Tests.
var ICCForms = [6]ICCForm{
	{"ICC(1,1)", "ICC(1)", "one-way random, single rater", "one-way, 1"},
	{"ICC(2,1)", "ICC(A,1)", "two-way random, absolute agreement, single rater", "agreement, 1"},
	{"ICC(3,1)", "ICC(C,1)", "two-way mixed, consistency, single rater", "consistency, 1"},
	{"ICC(1,k)", "ICC(k)", "one-way random, mean of k raters", "one-way, k"},
	{"ICC(2,k)", "ICC(A,k)", "two-way random, absolute agreement, mean of k raters", "agreement, k"},
	{"ICC(3,k)", "ICC(C,k)", "two-way mixed, consistency, mean of k raters", "consistency, k"},
}

// PearsonTable is Pearson's r between two raters, from their contingency table. Rows are the
// first rater's categories and columns the second's, each category standing for its value,
// so r is the correlation of their scores on the co-rated items, shown beside Cohen's kappa
// (#39).
func PearsonTable(table []int64, values []int64) Value {
	k := len(values)
	var n, sx, sy float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			m := float64(table[c*k+d])
			n += m
			sx += m * float64(values[c])
			sy += m * float64(values[d])
		}
	}
	if n < 2 {
		return Undefined("fewer than 2 co-rated items")
	}
	mx, my := sx/n, sy/n
	var sxx, syy, sxy float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			m := float64(table[c*k+d])
			dx, dy := float64(values[c])-mx, float64(values[d])-my
			sxx += m * dx * dx
			syy += m * dy * dy
			sxy += m * dx * dy
		}
	}
	if sxx == 0 || syy == 0 {
		return Undefined("a rater gave one value to every co-rated item")
	}
	return Num(sxy / math.Sqrt(sxx*syy))
}
