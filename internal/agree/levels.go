package agree

import (
	"math"
	"math/big"
)

// LevelCorr is a correlation between human ratings and a judge after aggregation, as in the
// HANNA and WMT meta-evaluations. At the system level there is one point per system: the
// mean over its items of the mean human rating and of the score. At the segment level there
// is one coefficient per segment, over the items of that segment, averaged over the
// segments where it is defined.
type LevelCorr struct {
	// N is the number of systems (system level) or of segments (segment level).
	N int
	// Defined counts, for the segment level, the segments whose coefficient was defined and
	// entered the mean, per coefficient (Pearson, Spearman, Kendall).
	Defined                        [3]int
	Pearson, Spearman, KendallTauB Value
	// Tests and Ties: system level only (the segment-level mean has no test here).
	Tests CorrTests
	Ties  KendallTies
}

// levelData holds what the system- and segment-level correlations of one judge need.
type levelData struct {
	x, y       []float64 // per item: mean human rating and score
	sysOrder   []int     // system ids in order of first appearance
	sysMembers map[int][]int
	sysX, sysY []float64 // per system (in sysOrder): the means
	segOrder   []int
	segMembers map[int][]int
}

func newLevelData(d *FieldData, j Judge, system, segment []int, floatMean bool) *levelData {
	m := d.Ratings
	r := m.Raters
	values := catValues(d.Field)
	ld := &levelData{x: make([]float64, m.Items), y: j.Num}
	sum := make([]int64, m.Items) // the item's rating sum and count, for exact system means
	cnt := make([]int64, m.Items)
	ok := make([]bool, m.Items)
	continuous := d.Field.Type == Continuous
	hx, hok := humanMeans(d)
	for i := 0; i < m.Items; i++ {
		if !hok[i] || !j.Present[i] || math.IsNaN(j.Num[i]) {
			continue
		}
		ld.x[i], ok[i] = hx[i], true
		if continuous {
			continue
		}
		for _, c := range m.Codes[i*r : i*r+r] {
			if c != Missing {
				cnt[i]++
				sum[i] += values[c]
			}
		}
	}
	group := func(g []int) (map[int][]int, []int) {
		members := map[int][]int{}
		var order []int
		for i, id := range g {
			if id < 0 || !ok[i] {
				continue
			}
			if _, seen := members[id]; !seen {
				order = append(order, id)
			}
			members[id] = append(members[id], i)
		}
		return members, order
	}
	if system != nil {
		ld.sysMembers, ld.sysOrder = group(system)
		for _, id := range ld.sysOrder {
			// The human side is a mean of rational item means: summed exactly, so that
			// systems with equal means tie exactly (ties change Kendall's tau-b), whatever
			// the order of summation.
			var sx big.Rat
			var sy float64
			fx := make([]float64, 0, len(ld.sysMembers[id]))
			for _, i := range ld.sysMembers[id] {
				if !continuous {
					sx.Add(&sx, big.NewRat(sum[i], cnt[i]))
				}
				sy += j.Num[i]
				fx = append(fx, ld.x[i])
			}
			n := len(ld.sysMembers[id])
			mx, _ := sx.Quo(&sx, big.NewRat(int64(n), 1)).Float64()
			if floatMean || continuous {
				// Continuous means have no exact form; numpy's order is what an analysis of
				// the same numbers prints.
				mx = pairwiseSum(fx) / float64(n)
			}
			ld.sysX = append(ld.sysX, mx)
			ld.sysY = append(ld.sysY, sy/float64(n))
		}
	}
	if segment != nil {
		ld.segMembers, ld.segOrder = group(segment)
	}
	return ld
}

// Levels computes the system-level and segment-level correlations of the field's mean human
// rating with judge j. system[i] and segment[i] number the system and the segment of item i
// (0, 1, …; −1 when unknown, which leaves the item out). Items need a rating and a numeric
// score. Either slice may be nil to skip that level. With floatMean the system means are
// accumulated in floating point in numpy's order (pairwise summation of the float item
// means, then one division), to reproduce analyses done that way; otherwise they are exact.
func Levels(d *FieldData, j Judge, system, segment []int, floatMean bool) (sys, seg *LevelCorr) {
	ld := newLevelData(d, j, system, segment, floatMean)
	if system != nil {
		xs, ys := ld.sysX, ld.sysY
		sys = &LevelCorr{N: len(xs)}
		if len(xs) < 2 {
			u := Undefined("fewer than 2 items")
			sys.Pearson, sys.Spearman, sys.KendallTauB, sys.Tests = u, u, u, noCorrTests("fewer than 2 items")
		} else {
			sys.Pearson, sys.Spearman, sys.KendallTauB, sys.Tests, sys.Ties = newPairs(xs, ys).correlations()
		}
		for i, v := range []Value{sys.Pearson, sys.Spearman, sys.KendallTauB} {
			if v.OK() {
				sys.Defined[i] = 1
			}
		}
	}
	if segment != nil {
		seg = &LevelCorr{N: len(ld.segOrder)}
		var sum [3]float64
		for _, id := range ld.segOrder {
			var xs, ys []float64
			for _, i := range ld.segMembers[id] {
				xs = append(xs, ld.x[i])
				ys = append(ys, ld.y[i])
			}
			for c, v := range []Value{Pearson(xs, ys), Spearman(xs, ys), KendallTauB(xs, ys)} {
				if f, ok := v.Float(); ok {
					sum[c] += f
					seg.Defined[c]++
				}
			}
		}
		mean := func(c int) Value {
			if seg.Defined[c] == 0 {
				return Undefined("no segment with a defined coefficient")
			}
			return Num(sum[c] / float64(seg.Defined[c]))
		}
		seg.Pearson, seg.Spearman, seg.KendallTauB = mean(0), mean(1), mean(2)
	}
	return sys, seg
}

// pairwiseSum is numpy's pairwise summation of float64 (pairwise_sum_DOUBLE in
// numpy/core/src/umath/loops_utils.h): below 8 values a plain loop, up to 128 eight
// interleaved accumulators, above that the two halves (split at a multiple of 8) summed
// recursively. Only --mean float uses it, to give the numbers a numpy analysis prints.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		s := 0.0
		for _, v := range a {
			s += v
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += a[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}
