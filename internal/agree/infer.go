package agree

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Inference: the null-hypothesis tests m3eval reports next to each coefficient. Each follows
// one established implementation exactly (named at the function), so that a p-value can be
// checked against it: SciPy 1.10 for the correlations, statsmodels 0.13 for Cohen's kappa,
// R psych 2.2.9 for the ICC. Distributions come from gonum (mathext.RegIncBeta, distuv);
// the exact Kendall distribution is by hand because gonum has none.

// Method names how a p-value was obtained.
type Method string

// The methods of the tests.
const (
	MethodT            Method = "t"                 // Student's t with n−2 df
	MethodKendallExact Method = "exact"             // exact null distribution of Kendall's S (no ties)
	MethodNormal       Method = "asymptotic normal" // z against N(0, 1)
	MethodF            Method = "F"                 // F test of the ICC (McGraw & Wong 1996)
	MethodBootstrap    Method = "bootstrap"         // share of paired bootstrap replicates on either side of 0
	MethodWilliams     Method = "Williams t"        // Williams' t for dependent correlations, n−3 df
	MethodNone         Method = ""                  // no test
)

// Test is a two-sided test of "no association" (or "ICC = 0", "kappa = 0") for one
// statistic.
type Test struct {
	Method Method
	// Statistic is t, z or F (undefined for the exact Kendall test, whose statistic is the
	// coefficient itself).
	Statistic Value
	// DF1, DF2 are the degrees of freedom (t: DF1; F: DF1, DF2); 0 when not applicable.
	DF1, DF2 float64
	P        Value
	// PAdjusted is P adjusted for multiplicity by [Adjust] over every test of a report;
	// undefined until then.
	PAdjusted Value
}

func noTest(reason string) Test {
	u := Undefined(reason)
	return Test{Statistic: u, P: u, PAdjusted: u}
}

// PearsonTest is SciPy's pearsonr p-value of r over n cases. Under independence
// r√(n−2)/√(1−r²) ~ t with n−2 df; it is computed as 2·I_{(1−|r|)/2}(n/2−1, n/2−1), the beta
// form SciPy uses.
func PearsonTest(r Value, n int) Test {
	x, undef := testable(r, n)
	if undef != nil {
		return *undef
	}
	ab := float64(n)/2 - 1
	p := 2 * mathext.RegIncBeta(ab, ab, (1-math.Min(math.Abs(x), 1))/2)
	df := float64(n - 2)
	return Test{Method: MethodT, Statistic: tStat(x, df), DF1: df, P: Num(math.Min(p, 1)), PAdjusted: Undefined("not adjusted")}
}

// testable returns the coefficient, or the undefined test when it cannot be tested.
func testable(v Value, n int) (float64, *Test) {
	x, ok := v.Float()
	if !ok {
		t := noTest("the coefficient is undefined")
		return 0, &t
	}
	if n < 3 {
		t := noTest("fewer than 3 points")
		return 0, &t
	}
	return x, nil
}

func tStat(r, df float64) Value {
	if math.Abs(r) >= 1 {
		return Undefined("|r| = 1 (t is infinite)")
	}
	return Num(r * math.Sqrt(df/((1+r)*(1-r))))
}

// SpearmanTest is SciPy's spearmanr p-value of ρ over n cases. It compares
// t = ρ√((n−2)/((1+ρ)(1−ρ))) with Student's t with n−2 df (asymptotic; exact only without
// ties for large n).
func SpearmanTest(rho Value, n int) Test {
	x, undef := testable(rho, n)
	if undef != nil {
		return *undef
	}
	df := float64(n - 2)
	t := tStat(x, df)
	p := 0.0
	if tv, ok := t.Float(); ok {
		// 2·P(T > |t|) = I_{df/(df+t²)}(df/2, 1/2)
		p = mathext.RegIncBeta(df/2, 0.5, df/(df+tv*tv))
	}
	return Test{Method: MethodT, Statistic: t, DF1: df, P: Num(p), PAdjusted: Undefined("not adjusted")}
}

// KendallTies are the counts behind tau-b: pairs of points, pairs tied in x, in y and in
// both. Tied pairs count neither as concordant nor as discordant.
type KendallTies struct {
	Pairs, TiedX, TiedY, TiedXY int64
}

// kendallCounts holds what Kendall's tau-b and its test need from one sample.
type kendallCounts struct {
	n                int64
	conMinusDis, dis int64
	ties             KendallTies
	// x0 = Σ t(t−1)(t−2), x1 = Σ t(t−1)(2t+5) over the tie groups of x (y0, y1 of y).
	x0, x1, y0, y1 float64
}

// countKendall counts concordant, discordant and tied pairs by Knight's (1966) method.
func (p *pairs) countKendall() kendallCounts {
	n := int64(len(p.x))
	var k kendallCounts
	k.n = n
	seq := make([]int32, len(p.x))
	copy(seq, p.yrXY)
	xk, yr := p.xKeys, p.yrXY
	group := func(t int64) (pairs, a, b float64) {
		return float64(t * (t - 1) / 2), float64(t) * float64(t-1) * float64(t-2), float64(t) * float64(t-1) * float64(2*t+5)
	}
	for i := 0; i < len(xk); {
		j, m := i, i
		for j < len(xk) && xk[j] == xk[i] {
			if yr[j] != yr[m] {
				t := int64(j - m)
				k.ties.TiedXY += t * (t - 1) / 2
				m = j
			}
			j++
		}
		t := int64(j - m)
		k.ties.TiedXY += t * (t - 1) / 2
		t = int64(j - i)
		k.ties.TiedX += t * (t - 1) / 2
		_, a, b := group(t)
		k.x0 += a
		k.x1 += b
		i = j
	}
	for i := 0; i < len(p.yKeys); {
		j := i
		for j < len(p.yKeys) && p.yKeys[j] == p.yKeys[i] {
			j++
		}
		t := int64(j - i)
		k.ties.TiedY += t * (t - 1) / 2
		_, a, b := group(t)
		k.y0 += a
		k.y1 += b
		i = j
	}
	k.dis = inversions(seq, make([]int32, len(seq)))
	k.ties.Pairs = n * (n - 1) / 2
	k.conMinusDis = k.ties.Pairs - k.ties.TiedX - k.ties.TiedY + k.ties.TiedXY - 2*k.dis
	return k
}

// tauB returns tau-b from the counts.
func (k kendallCounts) tauB() Value {
	a, b := k.ties.Pairs-k.ties.TiedX, k.ties.Pairs-k.ties.TiedY
	if k.n < 2 {
		return Undefined("fewer than 2 items")
	}
	if a <= 0 || b <= 0 {
		return Undefined("constant input (all pairs tied)")
	}
	return Num(float64(k.conMinusDis) / math.Sqrt(float64(a)*float64(b)))
}

// test is SciPy 1.10's kendalltau(method="auto") p-value: the exact null distribution when
// neither variable has ties and n ≤ 33 (or the sample is at most one swap from a perfect
// order), otherwise the normal approximation of S = C − D with the tie-corrected variance
// (Kendall 1970, eq. 4.3).
func (k kendallCounts) test() Test {
	if !k.tauB().OK() {
		return noTest("the coefficient is undefined")
	}
	n, tot := k.n, k.ties.Pairs
	if k.ties.TiedX == 0 && k.ties.TiedY == 0 && (n <= 33 || min(k.dis, tot-k.dis) <= 1) {
		return Test{Method: MethodKendallExact, Statistic: Undefined("the exact test uses the coefficient itself"),
			P: Num(kendallExactP(n, tot-k.dis)), PAdjusted: Undefined("not adjusted")}
	}
	if n < 3 {
		return noTest("fewer than 3 points")
	}
	fn := float64(n)
	m := fn * (fn - 1)
	v := (m*(2*fn+5)-k.x1-k.y1)/18 + 2*float64(k.ties.TiedX)*float64(k.ties.TiedY)/m + k.x0*k.y0/(9*m*(fn-2))
	z := float64(k.conMinusDis) / math.Sqrt(v)
	return Test{Method: MethodNormal, Statistic: Num(z), P: Num(2 * normSF(math.Abs(z))), PAdjusted: Undefined("not adjusted")}
}

// normSF is the standard normal survival function, computed with erfc so that tiny
// p-values keep their precision (as SciPy's norm.sf).
func normSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// kendallExactP is SciPy's _kendall_p_exact(n, c, "two-sided"): the probability, under
// independence without ties, of a number of concordant pairs at least as far from n(n−1)/4
// as c, by the recurrence for the number of permutations with a given number of inversions
// (Kendall 1970).
func kendallExactP(n, c int64) float64 {
	half := n * (n - 1) / 2
	c = min(c, half-c)
	switch {
	case n <= 2:
		return 1
	case c == 0:
		if n < 171 {
			return math.Min(2/factorial(n), 1)
		}
		return 0
	case c == 1:
		if n < 172 {
			return math.Min(2/factorial(n-1), 1)
		}
		return 0
	case 4*c == n*(n-1):
		return 1
	}
	next := make([]float64, c+1)
	next[0], next[1] = 1, 1
	scaled := n >= 171
	for j := int64(3); j <= n; j++ {
		var s float64
		for i := range next {
			s += next[i]
			next[i] = s
			if scaled {
				next[i] /= float64(j)
			}
		}
		if j <= c {
			// new[j:] -= new[:c+1-j], reading the old values of the prefix.
			for i := c; i >= j; i-- {
				next[i] -= next[i-j]
			}
		}
	}
	var sum float64
	for _, x := range next {
		sum += x
	}
	p := sum
	if !scaled {
		p = 2 * sum / factorial(n)
	}
	return math.Max(0, math.Min(p, 1))
}

func factorial(n int64) float64 {
	f := 1.0
	for i := int64(2); i <= n; i++ {
		f *= float64(i)
	}
	return f
}

// CohenTest is the z-test of kappa = 0, as statsmodels' cohens_kappa computes it
// (var_kappa0). It uses the variance under the null hypothesis of Fleiss, Cohen & Everitt
// (1969): with agreement weights w = 1 − d/d_max,
// var0 = (Σ p_i. p_.j (w_ij − (w̄_i. + w̄_.j))² − p_e²) / ((1 − p_e)² n).
func CohenTest(table []int64, values []int64, wt Weighting) Test {
	kappa := CohenTable(table, values, wt)
	kx, ok := kappa.Float()
	if !ok {
		return noTest("the coefficient is undefined")
	}
	k := len(values)
	rows := make([]float64, k)
	cols := make([]float64, k)
	var n float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			x := float64(table[c*k+d])
			rows[c] += x
			cols[d] += x
			n += x
		}
	}
	for c := range rows {
		rows[c] /= n
		cols[c] /= n
	}
	var dmax int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			dmax = max(dmax, dist(wt, values[c], values[d]))
		}
	}
	w := func(c, d int) float64 { return 1 - float64(dist(wt, values[c], values[d]))/float64(dmax) }
	wRow := make([]float64, k) // Σ_j p_.j w_ij
	wCol := make([]float64, k) // Σ_i p_i. w_ij
	var pe float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			wRow[c] += cols[d] * w(c, d)
			wCol[d] += rows[c] * w(c, d)
			pe += w(c, d) * rows[c] * cols[d]
		}
	}
	var s float64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			e := w(c, d) - (wRow[c] + wCol[d])
			s += rows[c] * cols[d] * e * e
		}
	}
	v0 := (s - pe*pe) / ((1 - pe) * (1 - pe) * n)
	if nullVarianceZero(table, values, wt) || !(v0 > 0) {
		return noTest("the variance under the null hypothesis is 0")
	}
	z := kx / math.Sqrt(v0)
	return Test{Method: MethodNormal, Statistic: Num(z), P: Num(2 * normSF(math.Abs(z))), PAdjusted: Undefined("not adjusted")}
}

// ICCTest is the F test of one ICC form against 0, with its confidence interval. It follows
// McGraw & Wong (1996, tables 7 and 8) and R's psych::ICC.
type ICCTest struct {
	Test
	// Lo, Hi bound the (1 − alpha) confidence interval of the ICC.
	Lo, Hi Value
}

// iccTests computes the tests of the six forms (order ICC11, ICC21, ICC31, ICC1k, ICC2k,
// ICC3k) from the mean squares, with confidence level 1 − alpha. psych::ICC is followed
// line by line: ICC(1,·) tests F = MSR/MSW on (n−1, n(k−1)) df, ICC(2,·) and ICC(3,·)
// F = MSR/MSE on (n−1, (n−1)(k−1)) df; the interval of ICC(2,·) uses Satterthwaite's
// approximate df v.
func iccTests(c ICC, alpha float64) [6]ICCTest {
	var out [6]ICCTest
	undef := func(reason string) {
		for i := range out {
			out[i] = ICCTest{Test: noTest(reason), Lo: Undefined(reason), Hi: Undefined(reason)}
		}
	}
	if c.N < 2 || c.K < 2 {
		undef("needs >= 2 complete items and >= 2 raters")
		return out
	}
	n, k := float64(c.N), float64(c.K)
	msr, msw, mse, msc := c.MSR, c.MSW, c.MSE, c.MSC
	if !(msw > 0) || !(mse > 0) {
		undef("no within-item variance (F is infinite or 0/0)")
		return out
	}
	f11 := msr / msw
	df11n, df11d := n-1, n*(k-1)
	f21 := msr / mse
	df21n, df21d := n-1, (n-1)*(k-1)
	// P(F > f) = I_{d2/(d2+d1·f)}(d2/2, d1/2): the upper tail directly, since gonum's
	// F.Survival is 1 − CDF and loses every p-value below 1e-16.
	fsf := func(f, d1, d2 float64) float64 { return mathext.RegIncBeta(d2/2, d1/2, d2/(d2+d1*f)) }
	qf := func(p, d1, d2 float64) float64 { return distuv.F{D1: d1, D2: d2}.Quantile(p) }
	p11 := fsf(f11, df11n, df11d)
	p21 := fsf(f21, df21n, df21d)
	mk := func(f, d1, d2, p float64) Test {
		return Test{Method: MethodF, Statistic: Num(f), DF1: d1, DF2: d2, P: Num(p), PAdjusted: Undefined("not adjusted")}
	}
	t1 := mk(f11, df11n, df11d, p11)
	t2 := mk(f21, df21n, df21d, p21)
	q := 1 - alpha/2
	f1l := f11 / qf(q, df11n, df11d)
	f1u := f11 * qf(q, df11d, df11n)
	f3l := f21 / qf(q, df21n, df21d)
	f3u := f21 * qf(q, df21d, df21n)
	out[0] = ICCTest{Test: t1, Lo: Num((f1l - 1) / (f1l + k - 1)), Hi: Num((f1u - 1) / (f1u + k - 1))}
	out[2] = ICCTest{Test: t2, Lo: Num((f3l - 1) / (f3l + k - 1)), Hi: Num((f3u - 1) / (f3u + k - 1))}
	out[3] = ICCTest{Test: t1, Lo: Num(1 - 1/f1l), Hi: Num(1 - 1/f1u)}
	out[5] = ICCTest{Test: t2, Lo: Num(1 - 1/f3l), Hi: Num(1 - 1/f3u)}
	icc2, ok := c.ICC21.Float()
	if !ok {
		out[1] = ICCTest{Test: t2, Lo: Undefined("ICC(2,1) is undefined"), Hi: Undefined("ICC(2,1) is undefined")}
		out[4] = out[1]
		return out
	}
	fj := msc / mse
	a := n*(1+(k-1)*icc2) - k*icc2
	vn := (k - 1) * (n - 1) * math.Pow(k*icc2*fj+a, 2)
	vd := (n-1)*k*k*icc2*icc2*fj*fj + a*a
	v := vn / vd
	fu := qf(q, n-1, v)
	fl := qf(q, v, n-1)
	l3 := n * (msr - fu*mse) / (fu*(k*msc+(k*n-k-n)*mse) + n*msr)
	u3 := n * (fl*msr - mse) / (k*msc + (k*n-k-n)*mse + n*fl*msr)
	out[1] = ICCTest{Test: t2, Lo: Num(l3), Hi: Num(u3)}
	out[4] = ICCTest{Test: t2, Lo: Num(l3 * k / (1 + l3*(k-1))), Hi: Num(u3 * k / (1 + u3*(k-1)))}
	return out
}

// Adjustment names a multiple-testing correction.
type Adjustment string

// The corrections of [AdjustP].
const (
	AdjustNone Adjustment = "none"
	AdjustHolm Adjustment = "holm" // Holm (1979) step-down, controls the family-wise error rate
	AdjustBH   Adjustment = "bh"   // Benjamini & Hochberg (1995) step-up, controls the false discovery rate
)

// AdjustP returns the adjusted p-values, as statsmodels' multipletests (method "holm" or
// "fdr_bh") and R's p.adjust compute them. NaN entries are left out of the family and stay
// NaN.
func AdjustP(p []float64, m Adjustment) []float64 {
	out := make([]float64, len(p))
	idx := make([]int, 0, len(p))
	for i, x := range p {
		out[i] = math.NaN()
		if !math.IsNaN(x) {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	switch m {
	case AdjustHolm:
		run := 0.0
		for r, i := range idx {
			run = math.Max(run, math.Min(1, float64(n-r)*p[i]))
			out[i] = run
		}
	case AdjustBH:
		run := 1.0
		for r := n - 1; r >= 0; r-- {
			i := idx[r]
			run = math.Min(run, float64(n)/float64(r+1)*p[i])
			out[i] = math.Min(run, 1)
		}
	default:
		for _, i := range idx {
			out[i] = p[i]
		}
	}
	return out
}

// KendallTest returns Kendall's tau-b of x and y, its test (as SciPy's kendalltau with
// method="auto") and the tie counts.
func KendallTest(x, y []float64) (Value, Test, KendallTies) {
	if len(x) < 2 {
		u := Undefined("fewer than 2 items")
		return u, noTest("fewer than 2 items"), KendallTies{}
	}
	k := newPairs(x, y).countKendall()
	return k.tauB(), k.test(), k.ties
}

// ForEachTest calls fn on every test of r. The tests are the pairwise kappas and Pearson r,
// the ICCs, and each judge's kappas and correlations (system level included).
func ForEachTest(r *FieldResult, fn func(*Test)) {
	for i := range r.Pairwise {
		for w := range r.Pairwise[i].KappaTest {
			fn(&r.Pairwise[i].KappaTest[w])
		}
		fn(&r.Pairwise[i].PearsonTest)
	}
	if r.ICC != nil {
		for i := range r.ICC.Tests {
			fn(&r.ICC.Tests[i].Test)
		}
	}
	for i := range r.Judges {
		j := &r.Judges[i]
		for w := range j.KappaTest {
			fn(&j.KappaTest[w])
		}
		for _, t := range []*CorrTests{&j.Tests, levelTests(j.SystemLevel)} {
			if t != nil {
				fn(&t.Pearson)
				fn(&t.Spearman)
				fn(&t.Kendall)
			}
		}
	}
	for i := range r.Comparisons {
		for s := range r.Comparisons[i].Tests {
			fn(&r.Comparisons[i].Tests[s])
		}
	}
}

func levelTests(l *LevelCorr) *CorrTests {
	if l == nil {
		return nil
	}
	return &l.Tests
}

// Adjust fills PAdjusted of every defined test in the reports, one or several blocks of
// results. It takes all of them (every block, field, judge and statistic) as one family.
// ICC(1,1) and ICC(1,k) share one F test, as do the four two-way forms; each distinct test
// still counts once per form reported, which errs on the conservative side.
//
// The one rule of p_adjusted (docs/statistics.md, "Multiple testing"): a test whose p is
// undefined keeps p's reason and stays out of the family; with AdjustNone (or "") every
// other test's p_adjusted is undefined, "not adjusted"; with Holm or BH every other test has
// its adjusted p. A comparison's Williams test, reported twice (tests.pearson and
// williams_pearson), is one test of the family and shows one adjusted p in both places.
func Adjust(m Adjustment, reports ...[]FieldResult) {
	var ps []float64
	var tests []*Test
	for _, results := range reports {
		for i := range results {
			ForEachTest(&results[i], func(t *Test) {
				p, ok := t.P.Float()
				switch {
				case !ok:
					t.PAdjusted = t.P
				case m == AdjustNone || m == "":
					t.PAdjusted = Undefined(ReasonNotAdjusted)
				default:
					ps = append(ps, p)
					tests = append(tests, t)
				}
			})
		}
	}
	adj := AdjustP(ps, m)
	for i, t := range tests {
		t.PAdjusted = Num(adj[i])
	}
	for _, results := range reports {
		for i := range results {
			for c := range results[i].Comparisons {
				cmp := &results[i].Comparisons[c]
				if cmp.Tests[0].Method == MethodWilliams && cmp.Williams.P.OK() {
					cmp.Williams.PAdjusted = cmp.Tests[0].PAdjusted
				}
			}
		}
	}
}
