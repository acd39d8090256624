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

// maxPatterns bounds the dense histogram of distinct rows ((K+1)^R cells).
const maxPatterns = 1 << 16

// tallyMatrix collects the tally of m. Every count in a tally is a sum over items of a
// function of the item's row, so when the number of possible rows (K+1)^R is small the pass
// only builds a histogram of rows (a few ns per item) and each distinct row is then added
// once with its multiplicity. Large inputs are split across the CPUs.
func tallyMatrix(m Matrix, k int, o tallyOpts) *tally {
	size := 1
	for r := 0; r < m.Raters && size <= maxPatterns; r++ {
		size *= k + 1
	}
	dense := size <= maxPatterns && m.Items > size
	workers := runtime.GOMAXPROCS(0)
	if m.Items < parallelMin || workers < 2 {
		workers = 1
	}
	workers = min(workers, 8)
	parts := make([]*tally, workers)
	hists := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := m.Items*w/workers, m.Items*(w+1)/workers
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			if dense {
				hists[w] = rowHistogram(m, k, size, lo, hi)
				return
			}
			t := newTally(k, m.Raters, o)
			t.scan(m, lo, hi, o)
			parts[w] = t
		}(w, lo, hi)
	}
	wg.Wait()
	if dense {
		h := hists[0]
		for _, o := range hists[1:] {
			for i, x := range o {
				h[i] += x
			}
		}
		t := newTally(k, m.Raters, o)
		t.addHistogram(h, o)
		return t
	}
	for _, p := range parts[1:] {
		parts[0].add(p)
	}
	return parts[0]
}

// rowHistogram counts the rows lo..hi-1 of m by their index in base k+1 (Missing → k).
func rowHistogram(m Matrix, k, size, lo, hi int) []int64 {
	h := make([]int64, size)
	var lut [256]int
	for c := range lut {
		lut[c] = min(c, k)
	}
	lut[Missing] = k
	r := m.Raters
	base := k + 1
	codes := m.Codes[lo*r : hi*r]
	if r == 3 {
		// The common case gets an unrolled loop.
		for i := 0; i+2 < len(codes); i += 3 {
			h[(lut[codes[i]]*base+lut[codes[i+1]])*base+lut[codes[i+2]]]++
		}
		return h
	}
	for i := 0; i < len(codes); i += r {
		idx := 0
		for _, c := range codes[i : i+r] {
			idx = idx*base + lut[c]
		}
		h[idx]++
	}
	return h
}

// addHistogram adds every distinct row with its multiplicity.
func (t *tally) addHistogram(h []int64, o tallyOpts) {
	r, k := t.r, t.k
	row := make([]uint8, r)
	one := Matrix{Items: 1, Raters: r, Codes: row}
	for idx, n := range h {
		if n == 0 {
			continue
		}
		x := idx
		for j := r - 1; j >= 0; j-- {
			c := x % (k + 1)
			x /= k + 1
			if c == k {
				row[j] = Missing
			} else {
				row[j] = uint8(c)
			}
		}
		t.scanWeighted(one, 0, 1, o, n)
	}
}

// scan adds items lo..hi-1 of m.
func (t *tally) scan(m Matrix, lo, hi int, o tallyOpts) { t.scanWeighted(m, lo, hi, o, 1) }

// scanWeighted adds items lo..hi-1 of m, each counted w times.
func (t *tally) scanWeighted(m Matrix, lo, hi int, o tallyOpts, w int64) {
	t.scanRows(m, lo, hi, o, nil, w, make([]int, 2*m.Raters))
}

// reset zeroes every count.
func (t *tally) reset() {
	clear(t.p)
	clear(t.c)
	clear(t.items)
	clear(t.pair)
	clear(t.colSum)
	t.allAgreePairable, t.allAgreeComplete = 0, 0
	t.sumX, t.sumX2, t.sumRow2 = 0, 0, 0
}

// scanRows adds items lo..hi-1 of m, item i counted ws[i] times (w times when ws is nil);
// buf is scratch of 2·raters ints.
func (t *tally) scanRows(m Matrix, lo, hi int, o tallyOpts, ws []int64, w int64, buf []int) {
	r, k := m.Raters, t.k
	kk := k * k
	who := buf[:r]
	code := buf[r : 2*r]
	codes := m.Codes
	for i := lo; i < hi; i++ {
		if ws != nil {
			if w = ws[i]; w == 0 {
				continue
			}
		}
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
		t.items[n] += w
		cm := t.c[n*k : n*k+k]
		for j := 0; j < n; j++ {
			cm[code[j]] += w
		}
		agree := true
		if n >= 2 {
			pm := t.p[n*kk : n*kk+kk]
			for a := 0; a < n; a++ {
				ca := code[a]
				for b := a + 1; b < n; b++ {
					cb := code[b]
					pm[ca*k+cb] += w
					pm[cb*k+ca] += w
					if ca != cb {
						agree = false
					}
					if t.pair != nil {
						t.pair[pairIndex(who[a], who[b], r)*kk+ca*k+cb] += w
					}
				}
			}
			if agree {
				t.allAgreePairable += w
			}
		}
		if n == r {
			if agree {
				t.allAgreeComplete += w
			}
			if o.icc {
				var s int64
				for j := 0; j < n; j++ {
					v := o.values[code[j]]
					s += v
					t.sumX2 += w * v * v
					t.colSum[j] += w * v
				}
				t.sumX += w * s
				t.sumRow2 += w * s * s
			}
		}
	}
}
