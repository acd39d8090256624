package agree

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat"
)

// The bootstrap resamples units with replacement: all items for Krippendorff's alpha, the
// complete items for Fleiss' kappa, the (mean human rating, score) points for the
// correlations, as the oracle does. A replicate only needs how many times each unit was
// drawn, so alpha and Fleiss work on "patterns" (items with the same multiset of ratings
// contribute the same counts): a replicate costs n random draws plus a sum over the few
// distinct patterns. Correlations use the sort orders computed once for the full data.
//
// Replicate r of a statistic group draws from its own PCG stream, numbered from (field,
// group, r), so the result does not depend on which goroutine ran which replicate.

// pattern is the count vector of one kind of item.
type pattern struct {
	m      int
	counts []int64
}

// patterns groups the items of m (only complete items when complete is set) by their count
// vector; it returns the patterns and the pattern of each unit.
func patterns(m Matrix, k int, complete bool) ([]pattern, []int32) {
	var pats []pattern
	index := map[string]int32{}
	var unit []int32
	var key []byte
	cnt := make([]int64, k)
	for i := 0; i < m.Items; i++ {
		row := m.Codes[i*m.Raters : (i+1)*m.Raters]
		clear(cnt)
		n := 0
		for _, c := range row {
			if c != Missing {
				cnt[c]++
				n++
			}
		}
		if n == 0 || (complete && n != m.Raters) {
			continue
		}
		key = key[:0]
		for _, x := range cnt {
			key = binary.AppendUvarint(key, uint64(x))
		}
		id, ok := index[string(key)]
		if !ok {
			id = int32(len(pats))
			index[string(key)] = id
			pats = append(pats, pattern{m: n, counts: slices.Clone(cnt)})
		}
		unit = append(unit, id)
	}
	return pats, unit
}

// tallyOf fills t from pattern weights.
func (t *tally) fromPatterns(pats []pattern, w []int32) {
	clear(t.p)
	clear(t.c)
	clear(t.items)
	k := t.k
	kk := k * k
	for id, p := range pats {
		x := int64(w[id])
		if x == 0 {
			continue
		}
		t.items[p.m] += x
		cm := t.c[p.m*k:]
		pm := t.p[p.m*kk:]
		for c, nc := range p.counts {
			if nc == 0 {
				continue
			}
			cm[c] += x * nc
			for d, nd := range p.counts {
				if nd == 0 {
					continue
				}
				if c == d {
					pm[c*k+d] += x * nc * (nc - 1)
				} else {
					pm[c*k+d] += x * nc * nd
				}
			}
		}
	}
}

// replicateFunc computes the statistics of one replicate from the unit draw counts.
type replicateFunc func(draws []int32, s *scratch) []float64

type scratch struct {
	w    []int32 // pattern weights
	t    *tally
	corr *corrScratch
}

// runBootstrap draws B replicates of n units, in parallel; fn returns one value per
// statistic (NaN when undefined). It returns the replicate values by statistic.
func runBootstrap(ctx context.Context, n, b, nstat int, seed, stream uint64, workers int,
	newScratch func() *scratch, fn replicateFunc) ([][]float64, error) {
	vals := make([][]float64, nstat)
	for i := range vals {
		vals[i] = make([]float64, b)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newScratch()
			draws := make([]int32, n)
			for {
				r := int(next.Add(1) - 1)
				if r >= b || ctx.Err() != nil {
					return
				}
				rng := rand.New(rand.NewPCG(seed, stream<<20|uint64(r)))
				clear(draws)
				for i := 0; i < n; i++ {
					draws[rng.IntN(n)]++
				}
				for i, v := range fn(draws, s) {
					vals[i][r] = v
				}
			}
		}()
	}
	wg.Wait()
	return vals, ctx.Err()
}

// summarize turns replicate values into an interval.
func summarize(name string, vals []float64) Interval {
	iv := Interval{Stat: name, B: len(vals)}
	ok := make([]float64, 0, len(vals))
	for _, v := range vals {
		if math.IsNaN(v) {
			iv.NUndefined++
		} else {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		u := Undefined("every bootstrap replicate is undefined")
		iv.Lo, iv.Hi, iv.SE = u, u, u
		return iv
	}
	slices.Sort(ok)
	iv.Lo = Num(percentile(ok, 2.5))
	iv.Hi = Num(percentile(ok, 97.5))
	if len(ok) > 1 {
		iv.SE = Num(stat.StdDev(ok, nil))
	} else {
		iv.SE = Undefined("a single defined bootstrap replicate")
	}
	return iv
}

// percentile is numpy's default (linear) percentile of sorted values. gonum's stat.Quantile
// offers only the empirical and the Hyndman–Fan type 4 rules, not numpy's type 7, hence by
// hand.
func percentile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func nanIfUndef(v Value) float64 {
	if x, ok := v.Float(); ok {
		return x
	}
	return math.NaN()
}

// stream numbers: field index, statistic group, judge.
func streamID(field, group, judge int) uint64 {
	return uint64(field)<<24 | uint64(group)<<16 | uint64(judge)
}

func bootstrapField(ctx context.Context, d *FieldData, t *tally, values []int64, judges []*pairs, index int, opt Options) ([]Interval, error) {
	// Non-nil even when empty: the report then says that nothing could be resampled.
	out := []Interval{}
	k := len(values)
	m := d.Ratings
	ordinal := d.Field.Type == Ordinal
	var nItems int64
	for _, x := range t.items[1:] {
		nItems += x
	}
	if nItems < 2 {
		return out, nil
	}
	levels := []Level{LevelNominal}
	if ordinal {
		levels = append(levels, LevelOrdinal, LevelInterval)
	}
	pats, unit := patterns(m, k, false)
	newS := func() *scratch {
		return &scratch{w: make([]int32, len(pats)), t: newTally(k, m.Raters, tallyOpts{})}
	}
	patternDraws := func(draws []int32, s *scratch) {
		clear(s.w)
		for i, x := range draws {
			s.w[unit[i]] += x
		}
		s.t.fromPatterns(pats, s.w)
	}
	vals, err := runBootstrap(ctx, len(unit), opt.Bootstrap, len(levels), opt.Seed, streamID(index, 1, 0), opt.Workers, newS,
		func(draws []int32, s *scratch) []float64 {
			patternDraws(draws, s)
			r := make([]float64, len(levels))
			for i, l := range levels {
				r[i] = nanIfUndef(krippendorff(s.t, values, l))
			}
			return r
		})
	if err != nil {
		return nil, err
	}
	for i, l := range levels {
		out = append(out, summarize("krippendorff_alpha_"+l.String(), vals[i]))
	}

	if t.items[m.Raters] > 0 && m.Raters > 0 {
		cpats, cunit := patterns(m, k, true)
		newC := func() *scratch {
			return &scratch{w: make([]int32, len(cpats)), t: newTally(k, m.Raters, tallyOpts{})}
		}
		vals, err := runBootstrap(ctx, len(cunit), opt.Bootstrap, 1, opt.Seed, streamID(index, 2, 0), opt.Workers, newC,
			func(draws []int32, s *scratch) []float64 {
				clear(s.w)
				for i, x := range draws {
					s.w[cunit[i]] += x
				}
				s.t.fromPatterns(cpats, s.w)
				return []float64{nanIfUndef(fleiss(s.t))}
			})
		if err != nil {
			return nil, err
		}
		out = append(out, summarize("fleiss_kappa", vals[0]))
	}

	for ji, p := range judges {
		if !ordinal || p == nil || len(p.x) < 2 {
			continue
		}
		newP := func() *scratch { return &scratch{corr: newCorrScratch(len(p.x), p.yCount)} }
		vals, err := runBootstrap(ctx, len(p.x), opt.Bootstrap, 3, opt.Seed, streamID(index, 3, ji), opt.Workers, newP,
			func(draws []int32, s *scratch) []float64 {
				return []float64{
					nanIfUndef(p.pearson(draws, s.corr)),
					nanIfUndef(p.spearman(draws, s.corr)),
					nanIfUndef(p.kendall(draws, s.corr)),
				}
			})
		if err != nil {
			return nil, err
		}
		prefix := "human_vs_auto_"
		if len(judges) > 1 {
			prefix += sanitize(d.Judges[ji].Name) + "_"
		}
		for i, name := range []string{"pearson", "spearman", "kendall_tau_b"} {
			out = append(out, summarize(prefix+name, vals[i]))
		}
	}
	return out, nil
}

// sanitize keeps a judge name usable inside a statistic key.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '.' {
			return '_'
		}
		return r
	}, s)
}
