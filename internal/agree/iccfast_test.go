package agree

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestICCFormsMatchExact checks that the bootstrap's int64 ICCs are bit for bit the exact
// rationals of icc (math/big) on random tallies: small ones (the int64 way), ones with
// constant rows or columns (0/0 and zero numerators), and huge ones (the fallback).
func TestICCFormsMatchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	values := []int64{1, 2, 3, 4, 5}
	fast := 0
	for trial := 0; trial < 3000; trial++ {
		r := 2 + rng.IntN(4)
		n := 2 + rng.IntN(300)
		mode := trial % 5
		tl := newTally(len(values), r, tallyOpts{pairs: true, icc: true, values: values})
		m := NewMatrix(n, r)
		for i := 0; i < n; i++ {
			base := rng.IntN(5)
			for j := 0; j < r; j++ {
				c := base
				switch mode {
				case 0, 4:
					c = max(0, min(4, base+rng.IntN(3)-1))
				case 1: // every rater gives the row's value: no within-item variance
				case 2: // constant column values
					c = j % 5
				case 3:
					c = rng.IntN(5)
				}
				m.Set(i, j, uint8(c))
			}
		}
		w := make([]int64, n)
		for i := range w {
			w[i] = int64(rng.IntN(3))
			if mode == 4 {
				w[i] = rng.Int64N(1 << 20) // huge weights: int64 overflows, the exact way runs
			}
		}
		tl.scanRows(m, 0, n, tallyOpts{pairs: true, icc: true, values: values}, w, 0, make([]int, 2*r))
		got := iccForms(tl)
		if _, ok := iccFormsInt(tl); ok {
			fast++
		}
		c := icc(tl)
		want := [6]Value{c.ICC11, c.ICC21, c.ICC31, c.ICC1k, c.ICC2k, c.ICC3k}
		for f := range want {
			gx, gok := got[f].Float()
			wx, wok := want[f].Float()
			if gok != wok || (gok && math.Float64bits(gx) != math.Float64bits(wx)) || (!gok && got[f].Reason() != want[f].Reason()) {
				t.Fatalf("trial %d (mode %d, n %d, r %d), %s: got %v, exact %v", trial, mode, n, r, ICCForms[f].ShroutFleiss, got[f], want[f])
			}
		}
	}
	if fast < 2000 {
		t.Errorf("only %d of 3000 tallies took the int64 way", fast)
	}
}

// TestQuoRoundMatchesRat checks quoRound against big.Rat.Float64 on random quotients of
// every size, halfway cases included.
func TestQuoRoundMatchesRat(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	check := func(p, q int64) {
		t.Helper()
		want, _ := new(big.Rat).SetFrac64(p, q).Float64()
		if got := quoRound(p, q); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%d/%d: got %v (%#x), big.Rat %v (%#x)", p, q, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	for i := 0; i < 300000; i++ {
		p := rng.Int64() >> rng.IntN(63)
		q := rng.Int64()>>rng.IntN(63) + 1
		if rng.IntN(2) == 0 {
			p = -p
		}
		if rng.IntN(2) == 0 {
			q = -q
		}
		check(p, q)
	}
	// Halfway cases: (2m+1)·2^k / 2^(k+1) with m of 53 bits lies exactly between two floats.
	for i := 0; i < 10000; i++ {
		m := int64(1)<<52 | rng.Int64N(1<<52)
		check(2*m+1, 2)
		check(2*m+1, 1<<10)
		check(-(2*m + 1), 2)
	}
	check(math.MaxInt64, 1)
	check(1, math.MaxInt64)
	check(math.MaxInt64, math.MaxInt64-1)
}
