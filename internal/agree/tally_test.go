package agree

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestHistogramTallyEqualsScan checks the row-histogram pass against the item-by-item pass
// it replaces on large inputs, for 2 to 4 raters with missing values.
func TestHistogramTallyEqualsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, r := range []int{2, 3, 4} {
		const k = 5
		m := NewMatrix(3000, r)
		for i := range m.Codes {
			if rng.Float64() > 0.25 {
				m.Codes[i] = uint8(rng.IntN(k))
			}
		}
		o := tallyOpts{pairs: true, icc: true, values: []int64{1, 2, 3, 4, 5}}
		dense := tallyMatrix(m, k, o)
		plain := newTally(k, r, o)
		plain.scan(m, 0, m.Items, o)
		if !reflect.DeepEqual(dense, plain) {
			t.Fatalf("%d raters: histogram tally differs from the plain scan", r)
		}
	}
}

// TestBootstrapDeterministic checks that the intervals depend on the seed only, not on the
// number of goroutines.
func TestBootstrapDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := NewOrdinal("q", 1, 2, 3, 4, 5)
	m := NewMatrix(200, 3)
	j := NewJudge("auto", 200)
	for i := 0; i < 200; i++ {
		base := rng.IntN(5)
		for r := 0; r < 3; r++ {
			if r == 0 || rng.Float64() > 0.2 {
				m.Set(i, r, uint8(max(0, min(4, base+rng.IntN(3)-1))))
			}
		}
		j.Present[i], j.Num[i], j.Code[i] = true, float64(base)+rng.Float64(), uint8(base)
	}
	d := FieldData{Field: f, Items: make([]string, 200), Raters: []string{"a", "b", "c"}, Ratings: m, Judges: []Judge{j}}
	run := func(workers int, seed uint64) []Interval {
		res, err := AnalyzeField(context.Background(), &d, 0, Options{Bootstrap: 300, Seed: seed, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return res.Bootstrap
	}
	a, b := run(1, 42), run(4, 42)
	if len(a) != 38 || !reflect.DeepEqual(a, b) { // every statistic of the field (with the pairs' Pearson r)
		t.Fatalf("1 worker and 4 workers differ:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, run(2, 43)) {
		t.Fatal("another seed gave the same intervals")
	}
}
