package agree

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteTauB is the O(n²) textbook tau-b, the definition the fast versions must equal.
func bruteTauB(x, y []float64) float64 {
	var s, n1, n2 float64
	n := len(x)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				n1++
				n2++
			case dx == 0:
				n1++
			case dy == 0:
				n2++
			case (dx > 0) == (dy > 0):
				s++
			default:
				s--
			}
		}
	}
	n0 := float64(n*(n-1)) / 2
	return s / math.Sqrt((n0-n1)*(n0-n2))
}

func tiedData(rng *rand.Rand, n int) (x, y []float64) {
	for i := 0; i < n; i++ {
		a := float64(rng.IntN(7)) / 3
		x = append(x, a)
		y = append(y, math.Round((a+rng.NormFloat64())*2)/2)
	}
	return
}

func TestKendallMethodsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		x, y := tiedData(rng, 2+rng.IntN(300))
		want := bruteTauB(x, y)
		p := newPairs(x, y)
		ones := make([]int32, len(x))
		for i := range ones {
			ones[i] = 1
		}
		s := newCorrScratch(len(x), p.yCount)
		for name, v := range map[string]Value{"knight": p.kendall(nil, s), "fenwick": p.kendall(ones, s)} {
			got, ok := v.Float()
			if math.IsNaN(want) {
				if ok {
					t.Fatalf("%s: want undefined, got %v", name, got)
				}
				continue
			}
			if !ok || math.Abs(got-want) > 1e-12 {
				t.Fatalf("trial %d %s: tau-b %v, brute force %v", trial, name, v, want)
			}
		}
	}
}

// TestWeightedEqualsRepeated checks that a bootstrap replicate computed from draw counts
// equals the statistic of the resample written out point by point.
func TestWeightedEqualsRepeated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		x, y := tiedData(rng, 3+rng.IntN(200))
		w := make([]int32, len(x))
		var rx, ry []float64
		for range x {
			i := rng.IntN(len(x))
			w[i]++
			rx = append(rx, x[i])
			ry = append(ry, y[i])
		}
		p := newPairs(x, y)
		s := newCorrScratch(len(x), p.yCount)
		for _, c := range []struct {
			name     string
			got, exp Value
		}{
			{"pearson", p.pearson(w, s), Pearson(rx, ry)},
			{"spearman", p.spearman(w, s), Spearman(rx, ry)},
			{"kendall", p.kendall(w, s), KendallTauB(rx, ry)},
		} {
			g, ok1 := c.got.Float()
			e, ok2 := c.exp.Float()
			if ok1 != ok2 || math.Abs(g-e) > 1e-12 {
				t.Fatalf("trial %d %s: weighted %v, repeated %v", trial, c.name, c.got, c.exp)
			}
		}
	}
}

func TestRadixSortOrders(t *testing.T) {
	x := []float64{2, -1, 2, 0, math.Copysign(0, -1), 3.5, -7, 2}
	y := []float64{1, 5, -2, 0, 1, 1, 1, -2}
	p := newPairs(x, y)
	byY, byXY := p.byY, p.byXY
	for i := 1; i < len(x); i++ {
		a, b := byY[i-1], byY[i]
		if y[a] > y[b] {
			t.Fatalf("byY not sorted at %d", i)
		}
		a, b = byXY[i-1], byXY[i]
		if x[a] > x[b] || (x[a] == x[b] && y[a] > y[b]) {
			t.Fatalf("byXY not sorted at %d: %v", i, byXY)
		}
	}
}

// TestSmallCorrEqualsFull: the O(n²) correlations of the level bootstrap equal the
// sorting ones, ties and constant inputs included.
func TestSmallCorrEqualsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.IntN(12)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(4))
			y[i] = float64(rng.IntN(5)) + 0.5*float64(rng.IntN(2))
		}
		got := smallCorr(x, y, make([]float64, n), make([]float64, n))
		for c, v := range []Value{Pearson(x, y), Spearman(x, y), KendallTauB(x, y)} {
			want, ok := v.Float()
			if ok != !math.IsNaN(got[c]) || (ok && math.Abs(want-got[c]) > 1e-12) {
				t.Fatalf("x %v y %v coefficient %d: small %v, full %v", x, y, c, got[c], v)
			}
		}
	}
}
