package agree

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The cluster bootstrap. Items (turns) are nested in clusters (episodes, systems, models):
// a replicate draws C clusters with replacement out of the C clusters of the field and
// gives every item the number of times its cluster was drawn; with no clusters given each
// item is its own cluster (the ordinary item bootstrap). One draw serves every statistic of
// the field and every judge, so the replicates of two judges are paired and the interval
// of their difference is the paired bootstrap interval.
//
// A replicate never copies items: the items are grouped once into distinct rows of ratings
// (patterns) and distinct (human, judge) points, and a replicate only sums weights per
// pattern, then evaluates each statistic on the weighted patterns. On 100,000 turns with 3
// raters there are at most 216 distinct rows, so a replicate costs one pass over the drawn
// clusters' lists of patterns, points and cells (clusterLists, bootfast.go) plus work
// independent of n.

// CIMethod is the kind of bootstrap interval.
type CIMethod string

// The interval methods.
const (
	CIPercentile CIMethod = "percentile"
	CIBCa        CIMethod = "bca" // bias-corrected and accelerated (Efron 1987)
)

// maxJackknife bounds the leave-one-out computations of the BCa acceleration: with more
// clusters, they are split into this many groups of consecutive clusters (a grouped
// jackknife), whose acceleration estimate is close and keeps BCa linear in the data.
const maxJackknife = 2000

// Comparison is the paired comparison of two judges' correlations with the humans on one
// field. It holds the difference A − B of each coefficient, with its paired bootstrap
// interval and the bootstrap test of "no difference".
type Comparison struct {
	A, B string
	// Diff holds A − B for Pearson, Spearman and Kendall tau-b.
	Diff [3]Value
	// CI holds the bootstrap intervals of the differences (nil without bootstrap).
	CI [3]*Interval
	// Tests: two-sided bootstrap p-values (2·min(share of replicates ≤ 0, share ≥ 0)) of
	// the three differences; for Pearson, Williams' t when both judges scored the same items
	// (see Williams).
	Tests [3]Test
	// Williams is Williams' (1959) t test of equal dependent correlations, Pearson's r of the
	// humans with A and with B over the items scored by both (Steiger 1980, eq. 7).
	Williams Test
	NCommon  int
}

// CorrNames are the names of the three correlations in keys.
var CorrNames = [3]string{"pearson", "spearman", "kendall_tau_b"}

// bootStat is one statistic evaluated on every replicate.
type bootStat struct {
	name string
	full Value // the estimate on the full data
	eval func(s *repState) float64
}

// repState is one worker's scratch space.
type repState struct {
	draws []int32 // per cluster
	cw    []int32 // per cluster: its weight in a jackknife sample
	w     []int64 // per rating pattern
	t     *tally
	buf   []int
	jw    [][]int32 // per judge, per distinct point
	jws   [][]int32 // per judge, per distinct point in the order of pk.byXY (nil: p == pk)
	jtab  [][]int64 // per judge, majority × label table
	corr  []*corrScratch
	// jcorr caches each judge's three correlations in the replicate, for the comparisons
	// (which are evaluated after them).
	jcorr [][3]Value
	// iccs caches the six ICCs of the replicate (iccFresh: computed since the last fill):
	// every form's statistic reads them, and they come from one computation.
	iccs     [6]Value
	iccFresh bool
}

// iccValues returns the six ICCs of the replicate in s.t, computed once per replicate.
func (s *repState) iccValues() *[6]Value {
	if !s.iccFresh {
		s.iccs, s.iccFresh = iccForms(s.t), true
	}
	return &s.iccs
}

// judgeUnits is what the bootstrap needs of one judge.
type judgeUnits struct {
	p *pairs // distinct (mean human rating, score) points
	// pk holds the same points with x and y swapped when x has fewer distinct values than y
	// (the usual case: item means take a few values, scores many): tau-b is symmetric, and
	// its Fenwick tree is then over the few values, several times faster. Else pk == p.
	pk        *pairs
	pointOf   []int32 // per item: its distinct point, −1 when the item is not a point
	cellOf    []int32 // per item: its majority × label cell, −1 when none
	hasPoints bool
	// points and cells list each cluster's points and cells (clusterBootstrap sets them).
	points, cells clusterLists
	// sorted lists each cluster's points by their positions in pk.byXY when pk != p: a
	// replicate adds the points' weights in that order too, for tau-b's pass (issue #43).
	sorted clusterLists
}

// clusterBootstrap computes the intervals of every statistic of the field from one cluster
// bootstrap, and the judge comparisons.
func clusterBootstrap(ctx context.Context, d *FieldData, res *FieldResult, values []int64, index int, opt Options) ([]Interval, error) {
	m := d.Ratings
	k := len(values)
	ordinal := d.Field.Type == Ordinal
	cl, nc, err := clusterIndex(d, opt)
	if err != nil {
		return nil, err
	}
	out := []Interval{}
	if nc < 2 {
		return out, nil
	}

	// Rating patterns: the distinct rows of the matrix, and the pattern of each item.
	patIndex := map[string]int32{}
	patOf := make([]int32, m.Items)
	var patCodes []uint8
	for i := 0; i < m.Items; i++ {
		row := m.Codes[i*m.Raters : (i+1)*m.Raters]
		id, ok := patIndex[string(row)]
		if !ok {
			id = int32(len(patIndex))
			patIndex[string(row)] = id
			patCodes = append(patCodes, row...)
		}
		patOf[i] = id
	}
	pm := Matrix{Items: len(patIndex), Raters: m.Raters, Codes: patCodes}
	topt := tallyOpts{pairs: true, icc: ordinal, values: values}

	judges := make([]judgeUnits, len(d.Judges))
	for ji := range d.Judges {
		judges[ji] = judgeUnitsOf(d, d.Judges[ji], values)
		np := 0
		if judges[ji].p != nil {
			np = len(judges[ji].p.x)
		}
		judges[ji].points = newClusterLists(cl, nc, judges[ji].pointOf, np)
		judges[ji].cells = newClusterLists(cl, nc, judges[ji].cellOf, k*k)
		if j := &judges[ji]; j.pk != j.p {
			pos := make([]int32, np)
			for e, pt := range j.pk.byXY {
				pos[pt] = int32(e)
			}
			posOf := make([]int32, len(j.pointOf))
			for i, pt := range j.pointOf {
				posOf[i] = -1
				if pt >= 0 {
					posOf[i] = pos[pt]
				}
			}
			j.sorted = newClusterLists(cl, nc, posOf, np)
		}
	}
	patterns := newClusterLists(cl, nc, patOf, pm.Items)

	stats := statList(d, res, values, judges, opt.Exchangeable)
	newState := func() *repState {
		s := &repState{draws: make([]int32, nc), cw: make([]int32, nc), w: make([]int64, pm.Items), t: newTally(k, m.Raters, topt), buf: make([]int, 2*m.Raters)}
		for _, j := range judges {
			n := 0
			if j.p != nil {
				n = len(j.p.x)
			}
			s.jw = append(s.jw, make([]int32, n))
			var ws []int32
			if j.pk != j.p {
				ws = make([]int32, n)
			}
			s.jws = append(s.jws, ws)
			s.jtab = append(s.jtab, make([]int64, k*k))
			yc := 0
			if j.p != nil {
				yc = j.p.yCount
			}
			if j.pk != nil {
				yc = max(yc, j.pk.yCount)
			}
			s.corr = append(s.corr, newCorrScratch(n, yc))
		}
		s.jcorr = make([][3]Value, len(judges))
		return s
	}
	// fill turns cluster weights (cw[c]: how often cluster c is in the sample) into pattern,
	// point and cell weights.
	fill := func(s *repState, cw []int32) {
		clear(s.w)
		patterns.add64(s.w, cw)
		s.t.reset()
		s.iccFresh = false
		s.t.scanRows(pm, 0, pm.Items, topt, s.w, 0, s.buf)
		for ji := range judges {
			j := &judges[ji]
			jw, jtab := s.jw[ji], s.jtab[ji]
			clear(jw)
			clear(jtab)
			j.points.add32(jw, cw)
			if ws := s.jws[ji]; ws != nil {
				clear(ws)
				j.sorted.add32(ws, cw)
			}
			j.cells.add64(jtab, cw)
		}
	}
	vals := make([][]float64, len(stats))
	for i := range vals {
		vals[i] = make([]float64, opt.Bootstrap)
	}
	err = parallel(ctx, opt.Bootstrap, opt.Workers, newState, func(s *repState, r int) {
		drawClusters(s.draws, opt.Seed, streamID(index, 4, 0), r)
		fill(s, s.draws)
		for si, st := range stats {
			vals[si][r] = st.eval(s)
		}
		if opt.Progress != nil {
			opt.Progress(1)
		}
	})
	if err != nil {
		return nil, err
	}
	var jack [][]float64
	if opt.CI == CIBCa {
		jack = jackknife(stats, nc, newState, fill)
	}
	for si, st := range stats {
		var jk []float64
		if jack != nil {
			jk = jack[si]
		}
		iv := summarizeCI(st.name, vals[si], st.full, opt.CI, jk)
		iv.Cluster, iv.Clusters = opt.ClusterName, nc
		out = append(out, iv)
	}
	// Judge comparisons: the differences' intervals are among the statistics (their names
	// begin with "difference_"), the tests come from the same replicates.
	byName := map[string]int{}
	for i, st := range stats {
		byName[st.name] = i
	}
	for ci := range res.Comparisons {
		c := &res.Comparisons[ci]
		for s := range CorrNames {
			i, ok := byName[comparisonKey(c.A, c.B, s)]
			if !ok {
				continue
			}
			c.CI[s] = &out[i]
			if s != 0 || !c.Williams.P.OK() {
				c.Tests[s] = bootstrapTest(vals[i])
			}
		}
	}
	return out, nil
}

// clusterIndex numbers the clusters of the field's items (0..nc−1); without clusters each
// item is its own.
func clusterIndex(d *FieldData, opt Options) ([]int32, int, error) {
	cl := make([]int32, len(d.Items))
	if opt.Clusters == nil {
		for i := range cl {
			cl[i] = int32(i)
		}
		return cl, len(cl), nil
	}
	num := map[string]int32{}
	for i, it := range d.Items {
		c, ok := opt.Clusters[it]
		if !ok {
			return nil, 0, fmt.Errorf("%w: field %s: item %s has no %s (every item needs a cluster)", ErrInput, d.Field.Name, it, clusterWord(opt))
		}
		id, seen := num[c]
		if !seen {
			id = int32(len(num))
			num[c] = id
		}
		cl[i] = id
	}
	return cl, len(num), nil
}

func clusterWord(opt Options) string {
	if opt.ClusterName == "" {
		return "cluster"
	}
	return opt.ClusterName
}

// judgeUnitsOf finds a judge's points and majority cells, item by item, with the rules of
// vsJudge.
func judgeUnitsOf(d *FieldData, j Judge, values []int64) judgeUnits {
	m := d.Ratings
	r := m.Raters
	k := len(values)
	u := judgeUnits{pointOf: make([]int32, m.Items), cellOf: make([]int32, m.Items)}
	type key struct{ x, y uint64 }
	index := map[key]int32{}
	var xs, ys []float64
	counts := make([]int, k)
	hx, hok := humanMeans(d)
	for i := 0; i < m.Items; i++ {
		u.pointOf[i], u.cellOf[i] = -1, -1
		if !j.Present[i] {
			continue
		}
		if hok[i] && !math.IsNaN(j.Num[i]) {
			x := hx[i]
			kk := key{floatKey(x), floatKey(j.Num[i])}
			id, ok := index[kk]
			if !ok {
				id = int32(len(xs))
				index[kk] = id
				xs, ys = append(xs, x), append(ys, j.Num[i])
			}
			u.pointOf[i] = id
		}
		if d.Field.Type == Continuous {
			continue
		}
		n := 0
		clear(counts)
		for _, c := range m.Codes[i*r : i*r+r] {
			if c != Missing {
				n++
				counts[c]++
			}
		}
		if n == 0 {
			continue
		}
		label := majority(counts)
		if label < 0 || j.Code[i] == Missing {
			continue
		}
		u.cellOf[i] = int32(label*k + int(j.Code[i]))
	}
	if len(xs) > 0 {
		u.p = newPairs(xs, ys)
		u.pk = u.p
		if sw := newPairs(ys, xs); sw.yCount < u.p.yCount {
			u.pk = sw
		}
		u.hasPoints = true
	}
	return u
}

// statList lists every statistic of the field with the function that evaluates it on a
// replicate. The names are the JSON key paths of the statistics with "." → "_", so that the
// report finds each interval beside its statistic.
func statList(d *FieldData, res *FieldResult, values []int64, judges []judgeUnits, exchangeable bool) []bootStat {
	ordinal := d.Field.Type == Ordinal
	k := len(values)
	var out []bootStat
	add := func(name string, full Value, f func(s *repState) Value) {
		out = append(out, bootStat{name: name, full: full, eval: func(s *repState) float64 { return nanIfUndef(f(s)) }})
	}
	if d.Field.Type == Continuous {
		addJudges(d, res, judges, add)
		return out
	}
	add("krippendorff_alpha_nominal", res.Alpha.Nominal, func(s *repState) Value { return krippendorff(s.t, values, LevelNominal) })
	if ordinal {
		add("krippendorff_alpha_ordinal", res.Alpha.Ordinal, func(s *repState) Value { return krippendorff(s.t, values, LevelOrdinal) })
		add("krippendorff_alpha_interval", res.Alpha.Interval, func(s *repState) Value { return krippendorff(s.t, values, LevelInterval) })
	}
	add("fleiss_kappa", res.Fleiss, func(s *repState) Value { return fleiss(s.t) })
	add("gwet_ac1", res.AC1, func(s *repState) Value { return gwet(s.t, values, Unweighted) })
	if ordinal {
		add("gwet_ac2_linear", res.AC2Linear, func(s *repState) Value { return gwet(s.t, values, Linear) })
		add("gwet_ac2_quadratic", res.AC2Quadratic, func(s *repState) Value { return gwet(s.t, values, Quadratic) })
	}
	if ordinal && res.ICC != nil {
		full := []Value{res.ICC.ICC11, res.ICC.ICC21, res.ICC.ICC31, res.ICC.ICC1k, res.ICC.ICC2k, res.ICC.ICC3k}
		for fi, form := range ICCForms {
			if exchangeable && (fi == 1 || fi == 2 || fi == 4 || fi == 5) {
				continue
			}
			add("icc_"+form.ShroutFleiss, full[fi], func(s *repState) Value { return s.iccValues()[fi] })
		}
	}
	names := [3]string{"all_agree_complete_items", "pairwise_mean_pairable_items", "all_agree_pairable_items"}
	fullPct := [3]Value{res.Percent.AllAgreeComplete, res.Percent.PairwiseMeanPairable, res.Percent.AllAgreePairable}
	for i, n := range names {
		add("percent_agreement_"+n, fullPct[i], func(s *repState) Value {
			a, b, c := percentAgreement(s.t)
			return [3]Value{a, b, c}[i]
		})
	}
	if !exchangeable {
		r := d.Ratings.Raters
		kk := k * k
		pi := 0
		for a := 0; a < r; a++ {
			for b := a + 1; b < r; b++ {
				off := pairIndex(a, b, r) * kk
				p := res.Pairwise[pi]
				key := fmt.Sprintf("pairwise[%d]_", pi)
				add(key+"percent_agreement", p.PercentAgreement, func(s *repState) Value { return PercentTable(s.t.pair[off:off+kk], k) })
				ws := []Weighting{Unweighted}
				if ordinal {
					ws = append(ws, Linear, Quadratic)
				}
				for _, w := range ws {
					add(key+kappaKeys[w], p.Kappa[w], func(s *repState) Value { return CohenTable(s.t.pair[off:off+kk], values, w) })
				}
				if ordinal {
					add(key+"pearson", p.Pearson, func(s *repState) Value { return PearsonTable(s.t.pair[off:off+kk], values) })
				}
				pi++
			}
		}
	}
	addJudges(d, res, judges, add)
	return out
}

// addJudges lists the statistics of the judges (correlations, labels) and the judge
// differences.
func addJudges(d *FieldData, res *FieldResult, judges []judgeUnits, add func(string, Value, func(*repState) Value)) {
	ordinal := d.Field.Type != Nominal
	k := len(d.Field.Categories)
	values := catValues(d.Field)
	for ji := range judges {
		j := judges[ji]
		jr := res.Judges[ji]
		prefix := "human_vs_auto_"
		if len(judges) > 1 {
			prefix += sanitize(d.Judges[ji].Name) + "_"
		}
		if ordinal && j.hasPoints {
			full := [3]Value{jr.Pearson, jr.Spearman, jr.KendallTauB}
			for c, name := range CorrNames {
				add(prefix+name, full[c], func(s *repState) Value {
					if c == 0 { // the three are evaluated in order: compute them together
						s.jcorr[ji] = j.corr3(s.jw[ji], s.jws[ji], s.corr[ji])
					}
					return s.jcorr[ji][c]
				})
			}
		}
		if d.Field.Type == Continuous {
			continue
		}
		add(prefix+"exact_match_accuracy", jr.ExactMatch, func(s *repState) Value { return PercentTable(s.jtab[ji], k) })
		ws := []Weighting{Unweighted}
		if ordinal {
			ws = append(ws, Linear, Quadratic)
		}
		for _, w := range ws {
			add(prefix+kappaKeys[w], jr.Kappa[w], func(s *repState) Value { return CohenTable(s.jtab[ji], values, w) })
		}
	}
	for ci := range res.Comparisons {
		c := res.Comparisons[ci]
		a := slices.IndexFunc(d.Judges, func(j Judge) bool { return j.Name == c.A })
		b := slices.IndexFunc(d.Judges, func(j Judge) bool { return j.Name == c.B })
		if !judges[a].hasPoints || !judges[b].hasPoints {
			continue
		}
		for s := range CorrNames {
			// The judges' correlations of this replicate were computed (and cached) just before.
			add(comparisonKey(c.A, c.B, s), c.Diff[s], func(st *repState) Value {
				x, ok1 := st.jcorr[a][s].Float()
				y, ok2 := st.jcorr[b][s].Float()
				if !ok1 || !ok2 {
					return Undefined("a correlation is undefined in the replicate")
				}
				return Num(x - y)
			})
		}
	}
}

func comparisonKey(a, b string, s int) string {
	return "difference_" + sanitize(a) + "_vs_" + sanitize(b) + "_" + CorrNames[s]
}

// jackknife computes every statistic with one cluster (or one group of clusters) left out.
func jackknife(stats []bootStat, nc int, newState func() *repState, fill func(*repState, []int32)) [][]float64 {
	groups := min(nc, maxJackknife)
	out := make([][]float64, len(stats))
	for i := range out {
		out[i] = make([]float64, groups)
	}
	// Cluster c belongs to group c·groups/nc.
	parallel(context.Background(), groups, 0, newState, func(s *repState, g int) {
		for c := range s.cw {
			s.cw[c] = 1
			if c*groups/nc == g {
				s.cw[c] = 0
			}
		}
		fill(s, s.cw)
		for si, st := range stats {
			out[si][g] = st.eval(s)
		}
	})
	return out
}

// summarizeCI turns replicate values into a 95% interval of the chosen kind.
func summarizeCI(name string, vals []float64, full Value, method CIMethod, jack []float64) Interval {
	iv := summarize(name, vals)
	iv.Method = CIPercentile
	if method != CIBCa || !iv.Lo.OK() {
		return iv
	}
	theta, ok := full.Float()
	if !ok {
		return iv
	}
	var reps, jk []float64
	for _, v := range vals {
		if !math.IsNaN(v) {
			reps = append(reps, v)
		}
	}
	for _, v := range jack {
		if !math.IsNaN(v) {
			jk = append(jk, v)
		}
	}
	slices.Sort(reps)
	lo, hi, err := bcaInterval(theta, reps, jk, 0.05)
	iv.Method = CIBCa
	if err != "" {
		u := Undefined(err)
		iv.Lo, iv.Hi = u, u
		return iv
	}
	iv.Lo, iv.Hi = Num(lo), Num(hi)
	return iv
}

// bcaInterval is the BCa interval as SciPy's stats.bootstrap computes it (_bca_interval):
// z0 = Φ⁻¹(p) with p the "mean" percentile of theta among the replicates ((#below +
// #at-or-below)/2B), acceleration a from the jackknife values (Σ(θ̄ − θ_i)³ /
// (6 (Σ(θ̄ − θ_i)²)^1.5)), and the percentiles (numpy's linear rule) of the sorted
// replicates at Φ(z0 + (z0 + z_α)/(1 − a(z0 + z_α))) for α/2 and 1 − α/2.
func bcaInterval(theta float64, sorted, jack []float64, alpha float64) (lo, hi float64, undefined string) {
	b := len(sorted)
	below, atOrBelow := 0, 0
	for _, v := range sorted {
		if v < theta {
			below++
		}
		if v <= theta {
			atOrBelow++
		}
	}
	pct := float64(below+atOrBelow) / float64(2*b)
	if pct == 0 || pct == 1 {
		return 0, 0, "every bootstrap replicate lies on one side of the estimate (BCa bias correction is infinite)"
	}
	if len(jack) < 2 {
		return 0, 0, "fewer than 2 defined jackknife values"
	}
	norm := distuv.UnitNormal
	z0 := norm.Quantile(pct)
	mean := stat.Mean(jack, nil)
	var num, den float64
	for _, v := range jack {
		d := mean - v
		num += d * d * d
		den += d * d
	}
	a := 0.0
	if den > 0 {
		a = num / (6 * math.Pow(den, 1.5))
	}
	at := func(p float64) float64 {
		z := norm.Quantile(p)
		q := norm.CDF(z0 + (z0+z)/(1-a*(z0+z)))
		return percentile(sorted, 100*q)
	}
	return at(alpha / 2), at(1 - alpha/2), ""
}

// bootstrapTest is the two-sided bootstrap test of "the difference is 0": twice the smaller
// share of defined replicates at or below 0 and at or above 0, at most 1.
func bootstrapTest(vals []float64) Test {
	var n, le, ge int
	for _, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		n++
		if v <= 0 {
			le++
		}
		if v >= 0 {
			ge++
		}
	}
	if n == 0 {
		return noTest("every bootstrap replicate is undefined")
	}
	p := math.Min(1, 2*float64(min(le, ge))/float64(n))
	return Test{Method: MethodBootstrap, Statistic: Undefined("the bootstrap test has no statistic"), P: Num(p), PAdjusted: Undefined("not adjusted")}
}

// compareJudges fills res.Comparisons: every pair of judges with numeric scores on an
// ordinal field, in the order of the judges.
func compareJudges(d *FieldData, res *FieldResult, values []int64) {
	if d.Field.Type == Nominal || len(d.Judges) < 2 {
		return
	}
	for a := 0; a < len(d.Judges); a++ {
		for b := a + 1; b < len(d.Judges); b++ {
			ja, jb := res.Judges[a], res.Judges[b]
			c := Comparison{A: ja.Judge, B: jb.Judge}
			fa := [3]Value{ja.Pearson, ja.Spearman, ja.KendallTauB}
			fb := [3]Value{jb.Pearson, jb.Spearman, jb.KendallTauB}
			for s := range CorrNames {
				x, ok1 := fa[s].Float()
				y, ok2 := fb[s].Float()
				if ok1 && ok2 {
					c.Diff[s] = Num(x - y)
				} else {
					c.Diff[s] = Undefined("a correlation is undefined")
				}
				c.Tests[s] = noTest("needs --bootstrap")
			}
			c.Williams, c.NCommon = williams(d, d.Judges[a], d.Judges[b], values)
			if c.Williams.P.OK() {
				c.Tests[0] = c.Williams
			}
			res.Comparisons = append(res.Comparisons, c)
		}
	}
}

// williams is Williams' t for H0: ρ(h, a) = ρ(h, b), with h the mean human rating and a, b
// the judges' scores over the n items all three have (Steiger 1980, eq. 7):
// t = (r_ha − r_hb)·√((n−1)(1+r_ab)) / √(2|R|(n−1)/(n−3) + r̄²(1−r_ab)³), n − 3 df, where
// |R| = 1 − r_ha² − r_hb² − r_ab² + 2 r_ha r_hb r_ab and r̄ = (r_ha + r_hb)/2.
func williams(d *FieldData, a, b Judge, values []int64) (Test, int) {
	hx, hok := humanMeans(d)
	var h, xa, xb []float64
	for i := range hx {
		if !hok[i] || !a.Present[i] || !b.Present[i] || math.IsNaN(a.Num[i]) || math.IsNaN(b.Num[i]) {
			continue
		}
		h = append(h, hx[i])
		xa, xb = append(xa, a.Num[i]), append(xb, b.Num[i])
	}
	n := len(h)
	if n < 4 {
		return noTest("fewer than 4 items scored by both judges"), n
	}
	rha, ok1 := Pearson(h, xa).Float()
	rhb, ok2 := Pearson(h, xb).Float()
	rab, ok3 := Pearson(xa, xb).Float()
	if !ok1 || !ok2 || !ok3 {
		return noTest("a correlation over the common items is undefined"), n
	}
	return WilliamsTest(rha, rhb, rab, n), n
}

// WilliamsTest is Williams' t test of H0 ρ12 = ρ13 for two correlations sharing variable 1.
// r23 is the correlation of the other two, over n cases (Steiger 1980, eq. 7; R
// psych::r.test with r12, r13, r23).
func WilliamsTest(r12, r13, r23 float64, n int) Test {
	if n < 4 {
		return noTest("fewer than 4 items")
	}
	fn := float64(n)
	det := 1 - r12*r12 - r13*r13 - r23*r23 + 2*r12*r13*r23
	rbar := (r12 + r13) / 2
	den := 2*det*(fn-1)/(fn-3) + rbar*rbar*math.Pow(1-r23, 3)
	if !(den > 0) {
		return noTest("Williams' t is 0/0 (degenerate correlations)")
	}
	t := (r12 - r13) * math.Sqrt((fn-1)*(1+r23)) / math.Sqrt(den)
	df := fn - 3
	p := mathext.RegIncBeta(df/2, 0.5, df/(df+t*t))
	return Test{Method: MethodWilliams, Statistic: Num(t), DF1: df, P: Num(p), PAdjusted: Undefined("not adjusted")}
}

// kappaKeys name the three Cohen's kappas in keys, indexed by Weighting.
var kappaKeys = [3]string{"cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"}
