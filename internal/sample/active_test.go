package sample

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestInclusion: the probabilities add up to n, none exceeds 1, more uncertain turns get
// more, and every turn keeps at least (1 − mix)·n/N.
func TestInclusion(t *testing.T) {
	u := []float64{0, 0, 0.1, 0.2, 5, 0.3, 0, 9, 0.05, 0.5}
	pi, err := Inclusion(u, 4, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i, p := range pi {
		sum += p
		if p > 1 || p < (1-0.8)*4/10-1e-12 {
			t.Errorf("π[%d] = %v out of [%v, 1]", i, p, 0.2*4/10)
		}
	}
	if math.Abs(sum-4) > 1e-12 {
		t.Errorf("Σπ = %v, want 4", sum)
	}
	if pi[7] != 1 || pi[4] != 1 {
		t.Errorf("the two most uncertain turns should be capped at 1: %v", pi)
	}
	if !(pi[9] > pi[5] && pi[5] > pi[3] && pi[3] > pi[0]) {
		t.Errorf("not increasing in uncertainty: %v", pi)
	}
	if flat, _ := Inclusion(make([]float64, 5), 2, 0.5); flat[0] != 0.4 || flat[4] != 0.4 {
		t.Errorf("no uncertainty: %v, want all 0.4", flat)
	}
	if _, err := Inclusion(u, 11, 0.5); err == nil {
		t.Error("11 of 10 turns: no error")
	}
}

// TestDrawSystematic: every draw has exactly n turns, all distinct, and over many draws each
// turn is drawn with its probability (within 4.5 binomial standard errors).
func TestDrawSystematic(t *testing.T) {
	u := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.5}
	pi, err := Inclusion(u, 5, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const R = 40000
	count := make([]int, len(pi))
	for range R {
		d := DrawSystematic(pi, rng)
		if len(d) != 5 {
			t.Fatalf("drew %d turns, want 5: %v", len(d), d)
		}
		for k, i := range d {
			if k > 0 && d[k-1] == i {
				t.Fatalf("turn %d drawn twice", i)
			}
			count[i]++
		}
	}
	for i, p := range pi {
		f := float64(count[i]) / R
		se := math.Sqrt(p * (1 - p) / R)
		if math.Abs(f-p) > 4.5*se+1e-9 {
			t.Errorf("turn %d drawn in %.4f of samples, want π = %.4f (±%.4f)", i, f, p, 4.5*se)
		}
	}
}
