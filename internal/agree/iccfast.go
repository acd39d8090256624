package agree

import (
	"math"
	"math/bits"
)

// iccForms returns the six ICCs of the tally (order ICC11, ICC21, ICC31, ICC1k, ICC2k,
// ICC3k), bit for bit what [icc] returns, without math/big when the numbers allow: the
// bootstrap evaluates them on every replicate, and icc's rationals (a GCD per operation)
// were most of the time of a small report.
//
// Every ICC is a ratio of linear combinations of the four mean squares, and the mean
// squares times D = T·n·(n−1)·(k−1) (T = n·k) are integers:
//
//	R = SSR·n·(k−1), C = SSC·n·(n−1), E = SSE·n, W = SSW·(n−1)
//
// with SSR, SSC, SSE, SSW the sums of squares times T (icc's integers). Each ICC is then
// P/Q with integers P, Q, and quoRound rounds P/Q to the nearest float64, ties to even —
// what big.Rat.Float64 returns for the same rational. Anything that could overflow int64
// goes the exact way (icc).
func iccForms(t *tally) [6]Value {
	if v, ok := iccFormsInt(t); ok {
		return v
	}
	c := icc(t)
	return [6]Value{c.ICC11, c.ICC21, c.ICC31, c.ICC1k, c.ICC2k, c.ICC3k}
}

// checked is int64 arithmetic that remembers an overflow.
type checked struct{ bad bool }

func (c *checked) mul(a, b int64) int64 {
	if c.bad {
		return 0
	}
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		c.bad = true
		return 0
	}
	p := int64(lo)
	if (a < 0) != (b < 0) {
		p = -p
	}
	return p
}

func (c *checked) add(a, b int64) int64 {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		c.bad = true
	}
	return s
}

func (c *checked) sub(a, b int64) int64 {
	if b == math.MinInt64 {
		c.bad = true
		return 0
	}
	return c.add(a, -b)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// iccFormsInt is iccForms in int64; ok is false when a number does not fit.
func iccFormsInt(t *tally) (out [6]Value, ok bool) {
	r := t.r
	n := t.items[r]
	if n < 2 || r < 2 {
		u := Undefined("needs >= 2 complete items and >= 2 raters")
		return [6]Value{u, u, u, u, u, u}, true
	}
	var c checked
	k := int64(r)
	T := c.mul(n, k)
	S2 := c.mul(t.sumX, t.sumX)
	var cc int64
	for _, col := range t.colSum {
		cc = c.add(cc, c.mul(col, col))
	}
	sst := c.sub(c.mul(T, t.sumX2), S2)
	ssr := c.sub(c.mul(n, t.sumRow2), S2)
	ssc := c.sub(c.mul(k, cc), S2)
	sse := c.sub(c.sub(sst, ssr), ssc)
	ssw := c.sub(sst, ssr)
	R := c.mul(c.mul(ssr, n), k-1)
	C := c.mul(c.mul(ssc, n), n-1)
	E := c.mul(sse, n)
	W := c.mul(ssw, n-1)
	km1 := k - 1
	num1 := c.sub(R, W)
	num3 := c.sub(R, E)
	num2 := c.mul(n, num3)
	dens := [6]int64{
		c.add(R, c.mul(km1, W)),
		c.add(c.add(c.mul(n, R), c.mul(c.mul(n, km1), E)), c.mul(k, c.sub(C, E))),
		c.add(R, c.mul(km1, E)),
		R,
		c.add(c.mul(n, R), c.sub(C, E)),
		R,
	}
	nums := [6]int64{num1, num2, num3, num1, num2, num3}
	if c.bad {
		return out, false
	}
	for i := range out {
		p, q := nums[i], dens[i]
		if q == 0 {
			out[i] = Undefined("0/0 (no variance)")
			continue
		}
		if p == math.MinInt64 || q == math.MinInt64 {
			return out, false
		}
		out[i] = Num(quoRound(p, q))
	}
	return out, true
}

// quoRound returns p/q (q ≠ 0) rounded to the nearest float64, ties to even, as
// big.Rat.Float64 does, for |p|, |q| < 2^63, without allocating: the quotient is formed to
// 64 bits by a 128-by-64-bit division, then rounded to 53 with the remainder as the sticky
// bit. Its results lie far inside float64's normal range (|p/q| > 2^-63).
func quoRound(p, q int64) float64 {
	if p == 0 {
		return 0 // big.Rat's zero is +0
	}
	neg := (p < 0) != (q < 0)
	a, b := uint64(abs64(p)), uint64(abs64(q))
	la, lb := bits.LeadingZeros64(a), bits.LeadingZeros64(b)
	a, b = a<<la, b<<lb // both with the top bit set
	// a/b in [1/2, 2): divide a·2^64 (a < b) or a·2^63 (a ≥ b), either way a quotient in
	// [2^63, 2^64).
	var quo, rem uint64
	exp := lb - la
	if a < b {
		quo, rem = bits.Div64(a, 0, b)
		exp -= 64
	} else {
		quo, rem = bits.Div64(a>>1, a<<63, b)
		exp -= 63
	}
	// Keep 53 bits: the 11 dropped ones decide the rounding with the remainder.
	m := quo >> 11
	guard := quo&(1<<10) != 0
	rest := quo&(1<<10-1) != 0 || rem != 0
	if guard && (rest || m&1 == 1) {
		m++ // m = 2^53 still converts exactly
	}
	f := math.Ldexp(float64(m), exp+11)
	if neg {
		f = -f
	}
	return f
}
