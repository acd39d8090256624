package agree

// Reasons shared by the agreement results and their tests.
const (
	// ReasonNoMajority: exact match and the kappas against the majority label have no item.
	ReasonNoMajority = "no item with a majority label and an auto label"
	// ReasonNotAdjusted: p_adjusted without --adjust.
	ReasonNotAdjusted = "not adjusted"
)

// nullVarianceZero decides from the integer tallies of a confusion table whether the
// variance of kappa under the null hypothesis (Fleiss, Cohen & Everitt 1969; see CohenTest)
// is exactly 0, which floating point cannot: the variance is that of
// f_ij = w_ij − w̄_i. − w̄_.j over the cells (i, j) of the product of the two margins, so it
// is 0 exactly when f is constant on the cells whose row and column are both used. Scaled by
// n·d_max every term is an integer: F_ij = n(d_max − d_ij) − A_i − B_j with
// A_i = Σ_j col_j (d_max − d_ij) and B_j = Σ_i row_i (d_max − d_ij). The usual case is a
// rater who used one category; weighted kappas also reach 0 when the two raters' values do
// not interleave (linear weights are then additive).
func nullVarianceZero(table []int64, values []int64, wt Weighting) bool {
	k := len(values)
	rows := make([]int64, k)
	cols := make([]int64, k)
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
		return true
	}
	var dmax int64
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			dmax = max(dmax, dist(wt, values[c], values[d]))
		}
	}
	if dmax == 0 {
		return true // one category: nothing to disagree on
	}
	w := func(c, d int) int64 { return dmax - dist(wt, values[c], values[d]) }
	a := make([]int64, k)
	b := make([]int64, k)
	for c := 0; c < k; c++ {
		for d := 0; d < k; d++ {
			a[c] += cols[d] * w(c, d)
			b[d] += rows[c] * w(c, d)
		}
	}
	first, seen := int64(0), false
	for c := 0; c < k; c++ {
		if rows[c] == 0 {
			continue
		}
		for d := 0; d < k; d++ {
			if cols[d] == 0 {
				continue
			}
			f := n*w(c, d) - a[c] - b[d]
			if !seen {
				first, seen = f, true
			} else if f != first {
				return false
			}
		}
	}
	return true
}
