package agree

import "math"

// The correlations need the points sorted by y and by (x, y). A comparison sort through an
// index slice spends most of its time on cache misses (about 1.5 s for a million points);
// an LSD radix sort of (key, index) records streams through memory instead (tens of ms).

type keyed struct {
	k uint64
	i int32
	r int32 // the y rank, carried through the sort by x
}

// floatKey maps a float64 to a uint64 with the same order; equal values (including −0 and
// +0) get equal keys, so ties can be found by comparing keys. NaN never reaches it.
func floatKey(f float64) uint64 {
	if f == 0 {
		f = 0 // −0 → +0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

const radixBits = 11

// radixSort sorts recs by key, stably, using tmp (same length) as scratch; it returns the
// slice holding the result (recs or tmp).
func radixSort(recs, tmp []keyed) []keyed {
	var count [1 << radixBits]int
	const mask = 1<<radixBits - 1
	for shift := uint(0); shift < 64; shift += radixBits {
		clear(count[:])
		for _, r := range recs {
			count[(r.k>>shift)&mask]++
		}
		if count[(recs[0].k>>shift)&mask] == len(recs) {
			continue // every key has the same digit here
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, r := range recs {
			d := (r.k >> shift) & mask
			tmp[count[d]] = r
			count[d]++
		}
		recs, tmp = tmp, recs
	}
	return recs
}

// sortOrders fills the sort orders of p: by y (with the sorted keys and the dense y ranks)
// and by (x, y) (with the sorted x keys and the y ranks in that order).
func (p *pairs) sortOrders() {
	x, y := p.x, p.y
	n := len(x)
	p.byY, p.yKeys = make([]int32, n), make([]uint64, n)
	p.byXY, p.xKeys, p.yrXY = make([]int32, n), make([]uint64, n), make([]int32, n)
	p.yRank = make([]int32, n)
	if n == 0 {
		return
	}
	recs, tmp := make([]keyed, n), make([]keyed, n)
	for i, v := range y {
		recs[i] = keyed{k: floatKey(v), i: int32(i)}
	}
	s := radixSort(recs, tmp)
	rank := int32(-1)
	for j, r := range s {
		if j == 0 || r.k != s[j-1].k {
			rank++
		}
		p.byY[j], p.yKeys[j] = r.i, r.k
		p.yRank[r.i] = rank
	}
	p.yCount = int(rank + 1)
	other := tmp
	if &s[0] == &tmp[0] {
		other = recs
	}
	for j, i := range p.byY {
		other[j] = keyed{k: floatKey(x[i]), i: i, r: p.yRank[i]}
	}
	s = radixSort(other, s)
	for j, r := range s {
		p.byXY[j], p.xKeys[j], p.yrXY[j] = r.i, r.k, r.r
		if j == 0 || r.k != s[j-1].k {
			p.xRuns = append(p.xRuns, int32(j))
		}
	}
	p.xRuns = append(p.xRuns, int32(n))
}
