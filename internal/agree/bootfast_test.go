package agree

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// corr3Reference is how the bootstrap evaluated the three correlations before issue #30:
// one function after the other, each with its own passes.
func (j judgeUnits) corr3Reference(w []int32, s *corrScratch) [3]Value {
	p := j.p
	n := weightSum(len(p.x), w)
	if n < 2 {
		u := Undefined("fewer than 2 items")
		return [3]Value{u, u, u}
	}
	if constant(p.x, w) || constant(p.y, w) {
		u := Undefined("constant input (zero variance)")
		return [3]Value{u, u, u}
	}
	r := Num(scaledCorrelation(p.x, p.y, w))
	averageRanks(p.xKeys, p.byXY, w, s.rx)
	averageRanks(p.yKeys, p.byY, w, s.ry)
	rho := Num(stat.Correlation(s.rx, s.ry, floatWeights(w, s)))
	return [3]Value{r, rho, j.pk.kendallWeighted(w, s, n)}
}

// TestCorr3MatchesReference checks that the fused correlations of a replicate are bit for
// bit those of the separate functions, on continuous and on tied points, with bootstrap
// weights (many zero), tiny and huge values, and degenerate samples.
func TestCorr3MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	for trial := 0; trial < 400; trial++ {
		n := 2 + rng.IntN(400)
		xs, ys := make([]float64, n), make([]float64, n)
		scale := math.Pow(10, float64(rng.IntN(40)-20))
		for i := range xs {
			xs[i] = float64(1+rng.IntN(9)) / float64(1+rng.IntN(3)) // item means: few values
			switch trial % 4 {
			case 0:
				ys[i] = scale * rng.NormFloat64()
			case 1:
				ys[i] = float64(rng.IntN(5))
			case 2:
				ys[i] = xs[i] + rng.NormFloat64()
			case 3:
				ys[i] = 3 // constant
			}
		}
		if trial%10 == 9 { // an infinite score: r is NaN both ways, rho must be the same
			ys[rng.IntN(n)] = math.Inf(1 - 2*rng.IntN(2))
		}
		p := newPairs(xs, ys)
		j := judgeUnits{p: p, pk: p, hasPoints: true}
		if sw := newPairs(ys, xs); sw.yCount < p.yCount {
			j.pk = sw
		}
		s := newCorrScratch(n, max(p.yCount, j.pk.yCount))
		w := make([]int32, n)
		for rep := 0; rep < 5; rep++ {
			for i := range w {
				w[i] = int32(rng.IntN(3)) * int32(rng.IntN(2))
			}
			if rep == 4 {
				clear(w)
				w[rng.IntN(n)] = 1
			}
			want := j.corr3Reference(w, s)
			got := j.corr3(w, nil, s)
			if j.pk != j.p { // the bootstrap's way: the weights also given in sorted order
				ws := make([]int32, n)
				for e, pt := range j.pk.byXY {
					ws[e] = w[pt]
				}
				if again := j.corr3(w, ws, s); again != got {
					t.Fatalf("trial %d, replicate %d: with sorted weights %v, without %v", trial, rep, again, got)
				}
			}
			for c := range got {
				gx, gok := got[c].Float()
				wx, wok := want[c].Float()
				same := gok == wok && (!gok && got[c].Reason() == want[c].Reason() ||
					gok && (math.Float64bits(gx) == math.Float64bits(wx) || math.IsNaN(gx) && math.IsNaN(wx)))
				if !same {
					t.Fatalf("trial %d, replicate %d, %s: got %v, before %v", trial, rep, CorrNames[c], got[c], want[c])
				}
			}
		}
	}
}

// TestClusterListsAddLikeItems checks that adding each cluster's lists gives the weights that
// adding each item's cluster weight gives.
func TestClusterListsAddLikeItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	for trial := 0; trial < 200; trial++ {
		items, nc, nid := 1+rng.IntN(500), 1+rng.IntN(60), 1+rng.IntN(40)
		cl, of := make([]int32, items), make([]int32, items)
		for i := range cl {
			cl[i] = int32(rng.IntN(nc))
			of[i] = int32(rng.IntN(nid+1)) - 1
		}
		cw := make([]int32, nc)
		for c := range cw {
			cw[c] = int32(rng.IntN(4))
		}
		want := make([]int64, nid)
		for i := range cl {
			if of[i] >= 0 {
				want[of[i]] += int64(cw[cl[i]])
			}
		}
		l := newClusterLists(cl, nc, of, nid)
		got := make([]int64, nid)
		l.add64(got, cw)
		got32 := make([]int32, nid)
		l.add32(got32, cw)
		for id := range want {
			if got[id] != want[id] || int64(got32[id]) != want[id] {
				t.Fatalf("trial %d, id %d: %d and %d, want %d", trial, id, got[id], got32[id], want[id])
			}
		}
	}
}

// TestDrawClustersMatchesRand checks that the bootstrap's draws are those of math/rand/v2's
// Rand.IntN on the same PCG stream (the streams of every interval m3eval has printed).
func TestDrawClustersMatchesRand(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("intN copies Rand.IntN of 64-bit machines")
	}
	for _, nc := range []int{1, 2, 3, 7, 8, 64, 100, 1000, 4096, 10007, 1 << 20, 1_000_003} {
		for r := 0; r < 3; r++ {
			seed, stream := uint64(12345+nc), uint64(r*7+1)
			got := make([]int32, nc)
			drawClusters(got, seed, stream, r)
			want := make([]int32, nc)
			rng := rand.New(rand.NewPCG(seed, stream<<20|uint64(r)))
			for c := 0; c < nc; c++ {
				want[rng.IntN(nc)]++
			}
			for c := range want {
				if got[c] != want[c] {
					t.Fatalf("nc %d, replicate %d: cluster %d drawn %d times, Rand.IntN %d", nc, r, c, got[c], want[c])
				}
			}
		}
	}
	// Large n makes the rejection step run (lo < thresh) now and then.
	var src rand.PCG
	src.Seed(1, 2)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		n := uint64(1)<<62 + uint64(i)*977
		if a, b := intN(&src, n), rng.IntN(int(n)); a != b {
			t.Fatalf("draw %d of IntN(%d): %d, Rand.IntN %d", i, n, a, b)
		}
	}
}

// BenchmarkCorr3Swapped is one replicate's three correlations of a judge against item means
// of 2–3 raters, 100,000 points with bootstrap weights: the kernel that issue #43's profile
// of score found hottest. Its scores are continuous (every score distinct) or, as in the
// score benchmarks' databases, of 4 significant digits (runs of equal scores).
func BenchmarkCorr3Swapped(b *testing.B) {
	for _, c := range []struct {
		name string
		step float64 // scores are multiples of step (0: continuous)
	}{{"continuous", 0}, {"digits=4", 1.0 / 2000}} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(43, 1))
			n := 100_000
			xs, ys := make([]float64, n), make([]float64, n)
			for i := range xs {
				xs[i] = float64(2+rng.IntN(13)) / float64(2+rng.IntN(2))
				ys[i] = xs[i] + rng.NormFloat64()
				if c.step > 0 {
					ys[i] = math.Round(ys[i]/c.step) * c.step
				}
			}
			p := newPairs(xs, ys)
			j := judgeUnits{p: p, pk: newPairs(ys, xs), hasPoints: true}
			if j.pk.yCount >= p.yCount {
				b.Fatal("the points are not swapped")
			}
			s := newCorrScratch(n, max(p.yCount, j.pk.yCount))
			w, ws := make([]int32, n), make([]int32, n)
			for range n { // an item bootstrap's draws: about 37% of the points get weight 0
				w[rng.IntN(n)]++
			}
			for e, pt := range j.pk.byXY {
				ws[e] = w[pt]
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j.corr3(w, ws, s)
			}
		})
	}
}
