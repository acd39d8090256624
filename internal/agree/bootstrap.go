package agree

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat"
)

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

// sanitize keeps a judge name usable inside a statistic key.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '.' {
			return '_'
		}
		return r
	}, s)
}

// parallel calls fn(state, r) for r = 0..n−1 on workers goroutines (GOMAXPROCS when 0),
// each with its own state from newState, and returns ctx's error if it was cancelled.
// Which goroutine runs which r does not matter: callers derive everything random from r.
func parallel[S any](ctx context.Context, n, workers int, newState func() S, fn func(s S, r int)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newState()
			for {
				r := int(next.Add(1) - 1)
				if r >= n || ctx.Err() != nil {
					return
				}
				fn(s, r)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// drawClusters fills draws with how often each cluster is drawn in replicate r: len(draws)
// draws with replacement from the PCG stream numbered (stream, r).
//
// It draws exactly what rand.New(rand.NewPCG(seed, stream<<20|r)).IntN(nc) draws, nc times
// (TestDrawClustersMatchesRand), but calls the PCG directly instead of through Rand's
// interface: a report draws hundreds of millions of clusters, and the indirect call was
// most of the cost of a draw.
func drawClusters(draws []int32, seed, stream uint64, r int) {
	var src rand.PCG
	src.Seed(seed, stream<<20|uint64(r))
	clear(draws)
	nc := len(draws)
	for c := 0; c < nc; c++ {
		draws[intN(&src, uint64(nc))]++
	}
}

// intN is math/rand/v2's (*Rand).IntN(n) on a 64-bit machine (its uint64n: a power of two
// masks, anything else is Lemire's multiply-and-reject), on the PCG itself.
func intN(src *rand.PCG, n uint64) int {
	if n&(n-1) == 0 {
		return int(src.Uint64() & (n - 1))
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return int(hi)
}
