package sample

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// This file is the active choice of the turns to label (m3eval sample --active): turns where
// the judge is less certain get a higher chance to be drawn, every turn's chance is recorded,
// and the estimate weights each label by 1/chance (internal/ppi's ActiveMean), so it stays
// unbiased however the chances were chosen (Zrnic & Candès, "Active statistical inference",
// ICML 2024). No library draws a fixed-size sample with given inclusion probabilities in Go,
// so the systematic design is written here.

// DefaultMix is the share of the inclusion probability that follows the judge's
// uncertainty. The rest is uniform, which keeps every turn's chance at least (1 − mix)·n/N
// and so the weights 1/π bounded.
const DefaultMix = 0.5

// Inclusion returns the probability with which each of the len(u) turns is to be drawn in a
// sample of n. It is proportional to (1 − mix)/N + mix·u_i/Σu, scaled to add up to n; any
// that would exceed 1 is set to 1 and the rest rescaled (repeatedly) so the total stays n. u are
// non-negative uncertainties; all zero means uniform.
func Inclusion(u []float64, n int, mix float64) ([]float64, error) {
	N := len(u)
	if n < 1 || n > N {
		return nil, fmt.Errorf("%w: %d turns asked of %d", ErrInfeasible, n, N)
	}
	if mix < 0 || mix > 1 {
		return nil, fmt.Errorf("mix %v: give a share from 0 to 1", mix)
	}
	var sum float64
	for i, x := range u {
		if x < 0 || x != x {
			return nil, fmt.Errorf("uncertainty %v of turn %d: give a number ≥ 0", x, i)
		}
		sum += x
	}
	w := make([]float64, N)
	for i, x := range u {
		w[i] = (1 - mix) / float64(N)
		if sum > 0 {
			w[i] += mix * x / sum
		} else {
			w[i] += mix / float64(N)
		}
	}
	pi := make([]float64, N)
	capped := make([]bool, N)
	for {
		// Scale the uncapped weights to the turns still to place.
		left, wsum := float64(n), 0.0
		for i := range w {
			if capped[i] {
				left--
			} else {
				wsum += w[i]
			}
		}
		again := false
		for i := range w {
			if capped[i] {
				pi[i] = 1
				continue
			}
			pi[i] = left * w[i] / wsum
			if pi[i] >= 1 {
				capped[i], again = true, true
			}
		}
		if !again {
			return pi, nil
		}
	}
}

// DrawSystematic draws a sample of exactly round(Σπ) turns in which turn i is included with
// probability π_i exactly. It is systematic sampling over a random order of the turns (Madow
// 1949); the random order makes the joint inclusion of two turns depend on no list order. It
// returns the drawn indexes in increasing order.
func DrawSystematic(pi []float64, rng *rand.Rand) []int {
	order := rng.Perm(len(pi))
	start := rng.Float64()
	var drawn []int
	var cum float64
	next := start
	for _, i := range order {
		lo := cum
		cum += pi[i]
		// Tolerance: sums of n floating-point probabilities can miss an integer by ~1e-12.
		for next < cum-1e-12 && next >= lo-1e-12 {
			drawn = append(drawn, i)
			next++
		}
	}
	slices.Sort(drawn)
	return drawn
}
