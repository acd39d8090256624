package agree

import (
	"runtime"
	"sync"
)

// tally holds the integer counts every statistic of a field is derived from. Its size
// depends on the numbers of raters and categories only, never on the number of items.
type tally struct {
	k, r int
	// p[m*k*k + c*k + d]: over items with m ratings, the number of ordered pairs of distinct
	// raters who gave c and d. Krippendorff's coincidences are Σ_m p_m/(m−1); for a single
	// item, Σ_d p[c][d] = n_c(m−1) and the trace is Σ_c n_c(n_c−1).
	p []int64
	// c[m*k + c]: over items with m ratings, the number of ratings in category c.
	c []int64
	// items[m]: the number of items with m ratings.
	items []int64
	// allAgreePairable and allAgreeComplete count items with ≥2 ratings (resp. every rater)
	// whose values are all equal.
	allAgreePairable, allAgreeComplete int64

	// pair[(index of rater pair)*k*k + c*k + d]: the confusion table of each rater pair on
	// their co-rated items. Only filled when wanted.
	pair []int64

	// Sums over complete items of the category values, for the ICC (ordinal fields only):
	// Σx, Σx², Σ(row sum)², and the column (rater) sums.
	sumX, sumX2, sumRow2 int64
	colSum               []int64
}

type tallyOpts struct {
	pairs  bool
	icc    bool
	values []int64 // category values, needed for the ICC
}

func newTally(k, r int, o tallyOpts) *tally {
	t := &tally{
		k: k, r: r,
		p:     make([]int64, (r+1)*k*k),
		c:     make([]int64, (r+1)*k),
		items: make([]int64, r+1),
	}
	if o.pairs {
		t.pair = make([]int64, r*(r-1)/2*k*k)
	}
	if o.icc {
		t.colSum = make([]int64, r)
	}
	return t
}

func (t *tally) add(o *tally) {
	for i, v := range o.p {
		t.p[i] += v
	}
	for i, v := range o.c {
		t.c[i] += v
	}
	for i, v := range o.items {
		t.items[i] += v
	}
	for i, v := range o.pair {
		t.pair[i] += v
	}
	for i, v := range o.colSum {
		t.colSum[i] += v
	}
	t.allAgreePairable += o.allAgreePairable
	t.allAgreeComplete += o.allAgreeComplete
	t.sumX += o.sumX
	t.sumX2 += o.sumX2
	t.sumRow2 += o.sumRow2
}

// pairIndex numbers the rater pairs a < b in the order (0,1), (0,2), …, (1,2), …
func pairIndex(a, b, r int) int { return a*(2*r-a-1)/2 + (b - a - 1) }

// parallelMin is the number of items below which a tally runs on one goroutine: smaller
// inputs finish before the goroutines would start.
const parallelMin = 1 << 17

// tallyMatrix runs the one pass over the matrix, split across the CPUs for large inputs.
func tallyMatrix(m Matrix, k int, o tallyOpts) *tally {
	workers := runtime.GOMAXPROCS(0)
	if m.Items < parallelMin || workers < 2 {
		t := newTally(k, m.Raters, o)
		t.scan(m, 0, m.Items, o)
		return t
	}
	if workers > 8 {
		workers = 8
	}
	parts := make([]*tally, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := m.Items*w/workers, m.Items*(w+1)/workers
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			t := newTally(k, m.Raters, o)
			t.scan(m, lo, hi, o)
			parts[w] = t
		}(w, lo, hi)
	}
	wg.Wait()
	for _, p := range parts[1:] {
		parts[0].add(p)
	}
	return parts[0]
}

// scan adds items lo..hi-1 of m.
func (t *tally) scan(m Matrix, lo, hi int, o tallyOpts) {
	r, k := m.Raters, t.k
	kk := k * k
	who := make([]int, r)
	code := make([]int, r)
	codes := m.Codes
	for i := lo; i < hi; i++ {
		row := codes[i*r : i*r+r]
		n := 0
		for j, c := range row {
			if c != Missing {
				who[n] = j
				code[n] = int(c)
				n++
			}
		}
		if n == 0 {
			continue
		}
		t.items[n]++
		cm := t.c[n*k : n*k+k]
		for j := 0; j < n; j++ {
			cm[code[j]]++
		}
		agree := true
		if n >= 2 {
			pm := t.p[n*kk : n*kk+kk]
			for a := 0; a < n; a++ {
				ca := code[a]
				for b := a + 1; b < n; b++ {
					cb := code[b]
					pm[ca*k+cb]++
					pm[cb*k+ca]++
					if ca != cb {
						agree = false
					}
					if t.pair != nil {
						t.pair[pairIndex(who[a], who[b], r)*kk+ca*k+cb]++
					}
				}
			}
			if agree {
				t.allAgreePairable++
			}
		}
		if n == r {
			if agree {
				t.allAgreeComplete++
			}
			if o.icc {
				var s int64
				for j := 0; j < n; j++ {
					v := o.values[code[j]]
					s += v
					t.sumX2 += v * v
					t.colSum[j] += v
				}
				t.sumX += s
				t.sumRow2 += s * s
			}
		}
	}
}
