package agree

import (
	"context"
	"math"
)

// humanMeans returns each item's mean human rating (the category values of an ordinal
// field, the numbers of a continuous one) and whether the item has a rating. Nominal
// fields have no mean: ok is false everywhere.
func humanMeans(d *FieldData) (x []float64, ok []bool) {
	m := d.Ratings
	r := m.Raters
	x = make([]float64, m.Items)
	ok = make([]bool, m.Items)
	switch d.Field.Type {
	case Continuous:
		for i := 0; i < m.Items; i++ {
			var n int
			var s float64
			for _, v := range d.Cont[i*r : i*r+r] {
				if !math.IsNaN(v) {
					n++
					s += v
				}
			}
			if n > 0 {
				x[i], ok[i] = s/float64(n), true
			}
		}
	case Ordinal:
		values := d.Field.Values
		for i := 0; i < m.Items; i++ {
			var n, s int64
			for _, c := range m.Codes[i*r : i*r+r] {
				if c != Missing {
					n++
					s += values[c]
				}
			}
			if n > 0 {
				x[i], ok[i] = float64(s)/float64(n), true
			}
		}
	}
	return x, ok
}

// analyzeContinuous computes the statistics of a continuous field: the counts, the ICCs of
// the complete items (from the two-way ANOVA in floating point, each sum of squares
// accumulated around the grand mean) and the correlations of the item mean with each judge,
// with the bootstrap of the correlations and judge differences.
func analyzeContinuous(ctx context.Context, d *FieldData, index int, opt Options) (FieldResult, error) {
	m := d.Ratings
	r := m.Raters
	res := FieldResult{Field: d.Field, Raters: d.Raters, RatersWithoutRatings: d.RatersWithoutRatings}
	var complete []int
	for i := 0; i < m.Items; i++ {
		n := 0
		for _, v := range d.Cont[i*r : i*r+r] {
			if !math.IsNaN(v) {
				n++
			}
		}
		if n > 0 {
			res.NItems++
		}
		if n >= 2 {
			res.NItemsPairable++
		}
		if n == r && r > 0 {
			complete = append(complete, i)
		}
		res.NRatings += n
	}
	res.NItemsComplete = len(complete)
	res.NMissingCells = m.Items*r - res.NRatings
	ic := iccFloat(d.Cont, r, complete)
	if opt.Exchangeable {
		res.Exchangeable = true
		u := Undefined("raters are exchangeable slots: two-way forms need the same rater in a column")
		ic.ICC21, ic.ICC31, ic.ICC2k, ic.ICC3k = u, u, u, u
		for _, i := range []int{1, 2, 4, 5} {
			ic.Tests[i] = ICCTest{Test: noTest(u.Reason()), Lo: u, Hi: u}
		}
	}
	res.ICC = &ic
	x, ok := humanMeans(d)
	for _, j := range d.Judges {
		v := VsJudge{Judge: j.Name}
		var xs, ys []float64
		for i := range x {
			if !ok[i] || !j.Present[i] {
				continue
			}
			v.NWithAuto++
			if math.IsNaN(j.Num[i]) {
				v.NNonNumeric++
				continue
			}
			xs, ys = append(xs, x[i]), append(ys, j.Num[i])
		}
		u := Undefined("continuous field: no categories to compare labels")
		v.ExactMatch = u
		for w := range v.Kappa {
			v.Kappa[w], v.KappaTest[w] = u, noTest(u.Reason())
		}
		v.NCorrelation = len(xs)
		if len(xs) < 2 {
			u := Undefined("fewer than 2 items")
			v.Pearson, v.Spearman, v.KendallTauB, v.Tests = u, u, u, noCorrTests("fewer than 2 items")
		} else {
			v.Pearson, v.Spearman, v.KendallTauB, v.Tests, v.Ties = newPairs(xs, ys).correlations()
		}
		res.Judges = append(res.Judges, v)
	}
	compareJudges(d, &res, nil)
	if opt.Bootstrap > 0 {
		bs, err := clusterBootstrap(ctx, d, &res, nil, index, opt)
		if err != nil {
			return FieldResult{}, err
		}
		res.Bootstrap = bs
	}
	return res, nil
}

// iccFloat computes the six ICCs and their tests from the complete rows of an items × r
// matrix of numbers.
func iccFloat(v []float64, r int, rows []int) ICC {
	n := len(rows)
	out := ICC{N: n, K: r}
	if n < 2 || r < 2 {
		u := Undefined("needs >= 2 complete items and >= 2 raters")
		out.ICC11, out.ICC21, out.ICC31, out.ICC1k, out.ICC2k, out.ICC3k = u, u, u, u, u, u
		out.Tests = iccTests(out, 0.05)
		return out
	}
	var grand float64
	for _, i := range rows {
		for _, x := range v[i*r : i*r+r] {
			grand += x
		}
	}
	N, K := float64(n), float64(r)
	grand /= N * K
	col := make([]float64, r)
	var sst, ssr float64
	for _, i := range rows {
		var rowMean float64
		for c, x := range v[i*r : i*r+r] {
			d := x - grand
			sst += d * d
			rowMean += x
			col[c] += x
		}
		d := rowMean/K - grand
		ssr += K * d * d
	}
	var ssc float64
	for _, s := range col {
		d := s/N - grand
		ssc += N * d * d
	}
	sse := math.Max(sst-ssr-ssc, 0)
	ssw := math.Max(sst-ssr, 0)
	out.MSR, out.MSC = ssr/(N-1), ssc/(K-1)
	out.MSE, out.MSW = sse/((N-1)*(K-1)), ssw/(N*(K-1))
	msr, msc, mse, msw := out.MSR, out.MSC, out.MSE, out.MSW
	div := func(a, b float64) Value { return ratio(a, b, "0/0 (no variance)") }
	out.ICC11 = div(msr-msw, msr+(K-1)*msw)
	out.ICC21 = div(msr-mse, msr+(K-1)*mse+K*(msc-mse)/N)
	out.ICC31 = div(msr-mse, msr+(K-1)*mse)
	out.ICC1k = div(msr-msw, msr)
	out.ICC2k = div(msr-mse, msr+(msc-mse)/N)
	out.ICC3k = div(msr-mse, msr)
	out.Tests = iccTests(out, 0.05)
	return out
}
