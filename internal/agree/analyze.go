package agree

import (
	"context"
	"fmt"
	"runtime/debug"
)

// GCPercent and MemoryLimit are the garbage-collector settings (runtime/debug) m3eval agree
// runs with. Big inputs make a large heap that lives to the end of the run, so collecting
// less often pays, within a soft limit under 1 GB.
const (
	GCPercent   = 400
	MemoryLimit = 900 << 20
)

// TuneGC applies GCPercent and MemoryLimit for a run and returns the function that restores
// the previous settings, as in defer agree.TuneGC()().
func TuneGC() (restore func()) {
	gc := debug.SetGCPercent(GCPercent)
	mem := debug.SetMemoryLimit(MemoryLimit)
	return func() {
		debug.SetMemoryLimit(mem)
		debug.SetGCPercent(gc)
	}
}

// Options controls Analyze.
type Options struct {
	// Bootstrap is the number of bootstrap replicates (0: no intervals).
	Bootstrap int
	// Seed makes the bootstrap reproducible: the same seed gives the same intervals whatever
	// the number of CPUs or the goroutine schedule.
	Seed uint64
	// Workers bounds the goroutines of the bootstrap; 0 means GOMAXPROCS.
	Workers int
	// Clusters maps each item to its cluster (episode, system, model): the bootstrap
	// resamples clusters. Nil: every item is its own cluster.
	Clusters map[string]string
	// ClusterName names the cluster unit in the output ("episode"); "" for items.
	ClusterName string
	// CI is the kind of bootstrap interval (percentile by default).
	CI CIMethod
	// Exchangeable says the rater columns are slots, not people (crowd "rater 1–3"):
	// pairwise statistics and the two-way ICCs, which need the same rater in a column, are
	// not reported.
	Exchangeable bool
	// Progress, when set, is told each bootstrap replicate of a field as it is done, from the
	// bootstrap's workers (so at once from several goroutines).
	Progress func(replicates int)
}

// Pair holds the statistics of one pair of raters on their co-rated items.
type Pair struct {
	Raters           [2]string
	N                int // co-rated items
	PercentAgreement Value
	// Kappa is indexed by Weighting; the weighted ones only for ordinal fields.
	Kappa [3]Value
	// KappaTest is the z-test of each kappa against 0.
	KappaTest [3]Test
	// Pearson is the correlation of the two raters' values (ordinal fields only, else
	// undefined), with its t-test against 0.
	Pearson     Value
	PearsonTest Test
}

// Alpha holds Krippendorff's alpha at the three levels (ordinal and interval only for
// ordinal fields).
type Alpha struct {
	Nominal, Ordinal, Interval Value
}

// Percent holds the overall percent agreements.
type Percent struct {
	// AllAgreeComplete: share of complete items on which all raters agree.
	AllAgreeComplete Value
	// PairwiseMeanPairable: mean over items with ≥2 ratings of the share of agreeing rater
	// pairs (Fleiss' P̄ with missing data).
	PairwiseMeanPairable Value
	// AllAgreePairable: share of items with ≥2 ratings whose values all agree.
	AllAgreePairable Value
}

// VsJudge holds the comparison of the human ratings with one automatic judge.
type VsJudge struct {
	Judge string
	// NWithAuto counts the field's items the judge scored.
	NWithAuto int
	// Correlations of the item's mean human rating with the judge's score (ordinal fields).
	NCorrelation, NNonNumeric      int
	Pearson, Spearman, KendallTauB Value
	// Tests are the tests of the three correlations against 0; Ties the pairs tau-b leaves
	// out.
	Tests CorrTests
	Ties  KendallTies
	// Majority label (strict plurality; ties left out) against the judge's label.
	NMajority, NTiedMajority, NOutsideCategories int
	ExactMatch                                   Value
	Kappa                                        [3]Value
	KappaTest                                    [3]Test
	// SystemLevel and SegmentLevel are filled by [Levels]; nil otherwise.
	SystemLevel, SegmentLevel *LevelCorr
}

// Interval is a bootstrap interval of one statistic.
type Interval struct {
	Stat       string // e.g. "krippendorff_alpha_ordinal", "human_vs_auto_pearson"
	B          int
	NUndefined int
	// Method is percentile or BCa; Cluster names the resampled unit ("" for items) and
	// Clusters counts them.
	Method   CIMethod
	Cluster  string
	Clusters int
	// Lo, Hi are the 2.5th and 97.5th percentiles of the defined replicates (numpy's
	// linear interpolation); undefined when every replicate is undefined.
	Lo, Hi Value
	// SE is the standard deviation of the defined replicates (n−1 denominator).
	SE Value
}

// FieldResult holds every statistic of one field.
type FieldResult struct {
	Field                                                           Field
	CategoriesUsed                                                  []string
	Raters                                                          []string
	RatersWithoutRatings                                            []string
	NItems, NRatings, NMissingCells, NItemsPairable, NItemsComplete int

	Pairwise       []Pair
	Fleiss         Value
	Alpha          Alpha
	Percent        Percent
	AC1, AC2Linear Value
	AC2Quadratic   Value
	ICC            *ICC // ordinal fields only
	Judges         []VsJudge
	// Exchangeable records Options.Exchangeable: the two-way ICCs are undefined on purpose
	// and the pairwise statistics absent.
	Exchangeable bool
	// Comparisons compares every pair of judges (ordinal fields with 2+ judges).
	Comparisons []Comparison
	Bootstrap   []Interval
}

// Analyze computes every statistic of every field. It is the entry point for callers that
// hold ratings in memory (the CSV reader and the annotation store both end here).
func Analyze(ctx context.Context, fields []FieldData, opt Options) ([]FieldResult, error) {
	out := make([]FieldResult, 0, len(fields))
	for i := range fields {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := AnalyzeField(ctx, &fields[i], i, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// AnalyzeField computes every statistic of one field. index distinguishes the bootstrap
// streams of fields analysed in one run: use the field's position.
func AnalyzeField(ctx context.Context, d *FieldData, index int, opt Options) (FieldResult, error) {
	if err := d.Validate(); err != nil {
		return FieldResult{}, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if d.Field.Type == Continuous {
		return analyzeContinuous(ctx, d, index, opt)
	}
	f := d.Field
	k := len(f.Categories)
	values := catValues(f)
	ordinal := f.Type == Ordinal
	m := d.Ratings
	t := tallyMatrix(m, k, tallyOpts{pairs: true, icc: ordinal, values: values})

	res := FieldResult{
		Field:                f,
		Raters:               d.Raters,
		RatersWithoutRatings: d.RatersWithoutRatings,
	}
	var nItems, nRatings int64
	for n := 1; n <= m.Raters; n++ {
		nItems += t.items[n]
		nRatings += int64(n) * t.items[n]
		if n >= 2 {
			res.NItemsPairable += int(t.items[n])
		}
	}
	res.NItems = int(nItems)
	res.NRatings = int(nRatings)
	res.NMissingCells = m.Items*m.Raters - int(nRatings)
	if m.Raters > 0 {
		res.NItemsComplete = int(t.items[m.Raters])
	}
	for c := 0; c < k; c++ {
		for n := 1; n <= m.Raters; n++ {
			if t.c[n*k+c] > 0 {
				res.CategoriesUsed = append(res.CategoriesUsed, f.Categories[c])
				break
			}
		}
	}

	kk := k * k
	for a := 0; a < m.Raters; a++ {
		for b := a + 1; b < m.Raters; b++ {
			tab := t.pair[pairIndex(a, b, m.Raters)*kk : pairIndex(a, b, m.Raters)*kk+kk]
			p := Pair{Raters: [2]string{d.Raters[a], d.Raters[b]}}
			for _, x := range tab {
				p.N += int(x)
			}
			p.PercentAgreement = PercentTable(tab, k)
			p.Kappa[Unweighted] = CohenTable(tab, values, Unweighted)
			p.KappaTest[Unweighted] = CohenTest(tab, values, Unweighted)
			p.Pearson, p.PearsonTest = Undefined("not an ordinal field"), noTest("not an ordinal field")
			if ordinal {
				for _, w := range []Weighting{Linear, Quadratic} {
					p.Kappa[w] = CohenTable(tab, values, w)
					p.KappaTest[w] = CohenTest(tab, values, w)
				}
				p.Pearson = PearsonTable(tab, values)
				p.PearsonTest = PearsonTest(p.Pearson, p.N)
			}
			res.Pairwise = append(res.Pairwise, p)
		}
	}
	res.Fleiss = fleiss(t)
	res.Alpha.Nominal = krippendorff(t, values, LevelNominal)
	if ordinal {
		res.Alpha.Ordinal = krippendorff(t, values, LevelOrdinal)
		res.Alpha.Interval = krippendorff(t, values, LevelInterval)
	}
	res.Percent.AllAgreeComplete, res.Percent.PairwiseMeanPairable, res.Percent.AllAgreePairable = percentAgreement(t)
	res.AC1 = gwet(t, values, Unweighted)
	if ordinal {
		res.AC2Linear = gwet(t, values, Linear)
		res.AC2Quadratic = gwet(t, values, Quadratic)
		ic := icc(t)
		ic.Tests = iccTests(ic, 0.05)
		res.ICC = &ic
	}
	for _, j := range d.Judges {
		v, _ := vsJudge(d, j, values)
		res.Judges = append(res.Judges, v)
	}
	if opt.Exchangeable {
		res.Exchangeable = true
		res.Pairwise = nil
		if res.ICC != nil {
			u := Undefined("raters are exchangeable slots: two-way forms need the same rater in a column")
			res.ICC.ICC21, res.ICC.ICC31, res.ICC.ICC2k, res.ICC.ICC3k = u, u, u, u
			for _, i := range []int{1, 2, 4, 5} {
				res.ICC.Tests[i] = ICCTest{Test: noTest(u.Reason()), Lo: u, Hi: u}
			}
		}
	}
	compareJudges(d, &res, values)
	if opt.Bootstrap > 0 {
		bs, err := clusterBootstrap(ctx, d, &res, values, index, opt)
		if err != nil {
			return FieldResult{}, err
		}
		res.Bootstrap = bs
	}
	return res, nil
}

// vsJudge compares the human ratings of d with judge j. It returns the (mean human rating,
// score) points too, for the bootstrap.
func vsJudge(d *FieldData, j Judge, values []int64) (VsJudge, *pairs) {
	f := d.Field
	k := len(f.Categories)
	m := d.Ratings
	r := m.Raters
	ordinal := f.Type == Ordinal
	v := VsJudge{Judge: j.Name}
	var xs, ys []float64
	if ordinal {
		xs, ys = make([]float64, 0, m.Items), make([]float64, 0, m.Items)
	}
	table := make([]int64, k*k)
	counts := make([]int, k)
	for i := 0; i < m.Items; i++ {
		row := m.Codes[i*r : i*r+r]
		var n int
		var sum int64
		clear(counts)
		for _, c := range row {
			if c != Missing {
				n++
				sum += values[c]
				counts[c]++
			}
		}
		if n == 0 || !j.Present[i] {
			continue
		}
		v.NWithAuto++
		if ordinal {
			if y := j.Num[i]; y == y {
				xs = append(xs, float64(sum)/float64(n))
				ys = append(ys, y)
			} else {
				v.NNonNumeric++
			}
		}
		label := majority(counts)
		if label < 0 {
			v.NTiedMajority++
			continue
		}
		a := j.Code[i]
		if a == Missing {
			v.NOutsideCategories++
			continue
		}
		v.NMajority++
		table[label*k+int(a)]++
	}
	v.ExactMatch = PercentTable(table, k)
	if !v.ExactMatch.OK() {
		v.ExactMatch = Undefined(ReasonNoMajority)
	}
	v.Kappa[Unweighted] = CohenTable(table, values, Unweighted)
	v.KappaTest[Unweighted] = CohenTest(table, values, Unweighted)
	if ordinal {
		for _, w := range []Weighting{Linear, Quadratic} {
			v.Kappa[w] = CohenTable(table, values, w)
			v.KappaTest[w] = CohenTest(table, values, w)
		}
	}
	if v.NMajority == 0 {
		// The table is empty because no item has both a majority label and an auto label:
		// say that, not the pairwise kappa's "no co-rated items".
		for w := range v.Kappa {
			if !v.Kappa[w].OK() {
				v.Kappa[w] = Undefined(ReasonNoMajority)
			}
		}
	}
	if !ordinal {
		return v, nil
	}
	v.NCorrelation = len(xs)
	if len(xs) < 2 {
		u := Undefined("fewer than 2 items")
		v.Pearson, v.Spearman, v.KendallTauB = u, u, u
		v.Tests = noCorrTests("fewer than 2 items")
		return v, &pairs{x: xs, y: ys}
	}
	p := newPairs(xs, ys)
	v.Pearson, v.Spearman, v.KendallTauB, v.Tests, v.Ties = p.correlations()
	return v, p
}

// CorrTests holds the tests of Pearson's r, Spearman's rho and Kendall's tau-b against 0.
type CorrTests struct {
	Pearson, Spearman, Kendall Test
}

func noCorrTests(reason string) CorrTests {
	return CorrTests{noTest(reason), noTest(reason), noTest(reason)}
}

// correlations computes the three coefficients of the full data with their tests.
func (p *pairs) correlations() (r, rho, tau Value, t CorrTests, ties KendallTies) {
	s := newCorrScratch(len(p.x), p.yCount)
	r = p.pearson(nil, s)
	rho = p.spearman(nil, s)
	k := p.countKendall()
	tau = k.tauB()
	n := len(p.x)
	return r, rho, tau, CorrTests{PearsonTest(r, n), SpearmanTest(rho, n), k.test()}, k.ties
}

// majority returns the category with the strict plurality of counts, or −1 when the top
// count is shared (or every count is 0).
func majority(counts []int) int {
	best, second, label := 0, 0, -1
	for c, x := range counts {
		if x > best {
			best, second, label = x, best, c
		} else if x > second {
			second = x
		}
	}
	if second == best {
		return -1
	}
	return label
}
