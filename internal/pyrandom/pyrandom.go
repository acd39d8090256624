// Package pyrandom is a bit-exact port of CPython's random.Random for integer seeds.
//
// IllusionBench test sets were drawn by a Python script with random.Random(42); a test set
// rebuilt by m3eval must contain the very same rows, so every draw has to consume the
// Mersenne Twister stream exactly as CPython does. No Go library reproduces CPython's
// seeding (init_by_array over the seed's 32-bit words), its getrandbits word order, its
// rejection-sampling _randbelow or the two branches of random.sample, so this package is
// written by hand from CPython's Modules/_randommodule.c and Lib/random.py. Python 3.11 is
// the reference; see Sample for which other versions draw the same samples.
//
// The generator is not safe for concurrent use, like Python's.
package pyrandom

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
)

// MT19937 parameters (Matsumoto and Nishimura), as in CPython's _randommodule.c.
const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// ErrSampleSize is returned by Sample when k is negative or larger than the population,
// the case where CPython raises ValueError("Sample larger than population or is negative").
var ErrSampleSize = errors.New("sample larger than population or is negative")

// Random is CPython's random.Random: an MT19937 state and the methods built on it.
type Random struct {
	mt    [n]uint32
	index int
}

// New returns a generator seeded like random.Random(seed) for a Python int seed.
func New(seed int64) *Random {
	// CPython seeds with abs(seed); the magnitude of math.MinInt64 fits a uint64.
	mag := uint64(seed)
	if seed < 0 {
		mag = -mag
	}
	key := []uint32{uint32(mag)}
	if hi := uint32(mag >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &Random{}
	r.initByArray(key)
	return r
}

// NewBig returns a generator seeded like random.Random(seed) for an arbitrarily large int.
func NewBig(seed *big.Int) *Random {
	mag := new(big.Int).Abs(seed)
	// The key is the magnitude's little-endian 32-bit words; zero is the single word 0.
	var key []uint32
	for _, w := range mag.Bits() {
		v := uint64(w)
		key = append(key, uint32(v))
		if bits.UintSize == 64 {
			key = append(key, uint32(v>>32))
		}
	}
	for len(key) > 1 && key[len(key)-1] == 0 {
		key = key[:len(key)-1]
	}
	if len(key) == 0 {
		key = []uint32{0}
	}
	r := &Random{}
	r.initByArray(key)
	return r
}

func (r *Random) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < n; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.index = n
}

func (r *Random) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := n
	if len(key) > k {
		k = len(key)
	}
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
	r.index = n
}

// Uint32 returns the next 32-bit output of the twister (genrand_uint32 in CPython).
func (r *Random) Uint32() uint32 {
	if r.index >= n {
		mag01 := [2]uint32{0, matrixA}
		var kk int
		for kk = 0; kk < n-m; kk++ {
			y := (r.mt[kk] & upperMask) | (r.mt[kk+1] & lowerMask)
			r.mt[kk] = r.mt[kk+m] ^ (y >> 1) ^ mag01[y&1]
		}
		for ; kk < n-1; kk++ {
			y := (r.mt[kk] & upperMask) | (r.mt[kk+1] & lowerMask)
			r.mt[kk] = r.mt[kk+(m-n)] ^ (y >> 1) ^ mag01[y&1]
		}
		y := (r.mt[n-1] & upperMask) | (r.mt[0] & lowerMask)
		r.mt[n-1] = r.mt[m-1] ^ (y >> 1) ^ mag01[y&1]
		r.index = 0
	}
	y := r.mt[r.index]
	r.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Random returns the next float in [0, 1), like random.random(): 53 bits from two words.
func (r *Random) Random() float64 {
	a := r.Uint32() >> 5
	b := r.Uint32() >> 6
	// The explicit conversion forbids a fused multiply-add; the product is exact anyway.
	return (float64(float64(a)*67108864.0) + float64(b)) * (1.0 / 9007199254740992.0)
}

// Bits returns getrandbits(k) for 0 <= k <= 64 without allocating.
// It panics if k is out of range.
func (r *Random) Bits(k int) uint64 {
	switch {
	case k < 0 || k > 64:
		panic("pyrandom: Bits needs 0 <= k <= 64")
	case k == 0:
		return 0
	case k <= 32:
		return uint64(r.Uint32() >> (32 - k))
	}
	// CPython fills the little-endian words from the least significant one and shifts only
	// the last (most significant) word.
	lo := uint64(r.Uint32())
	hi := uint64(r.Uint32() >> (64 - k))
	return hi<<32 | lo
}

// GetRandBits returns getrandbits(k) for any k >= 0 as a big.Int.
// It panics if k is negative, where CPython raises ValueError.
func (r *Random) GetRandBits(k int) *big.Int {
	if k < 0 {
		panic("pyrandom: number of bits must be non-negative")
	}
	if k <= 64 {
		return new(big.Int).SetUint64(r.Bits(k))
	}
	words := (k-1)/32 + 1
	buf := make([]byte, 4*words) // big-endian for big.Int.SetBytes
	for i := 0; i < words; i, k = i+1, k-32 {
		w := r.Uint32()
		if k < 32 {
			w >>= 32 - k
		}
		off := 4 * (words - 1 - i)
		buf[off], buf[off+1], buf[off+2], buf[off+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
	return new(big.Int).SetBytes(buf)
}

// Randbelow returns an integer in [0, n) as CPython's _randbelow(n) draws it. That is
// getrandbits(n.bit_length()), drawn again until it is below n.
// It panics if n <= 0 (CPython loops forever on 0 and fails on negative n).
func (r *Random) Randbelow(n int) int {
	if n <= 0 {
		panic("pyrandom: Randbelow needs n > 0")
	}
	// Not bit_length(n-1): CPython uses bit_length(n), which wastes draws when n is a power
	// of two, and the stream has to match.
	k := bits.Len64(uint64(n))
	v := r.Bits(k)
	for v >= uint64(n) {
		v = r.Bits(k)
	}
	return int(v)
}

// RandbelowBig is Randbelow for an arbitrarily large positive n.
func (r *Random) RandbelowBig(n *big.Int) *big.Int {
	if n.Sign() <= 0 {
		panic("pyrandom: RandbelowBig needs n > 0")
	}
	k := n.BitLen()
	v := r.GetRandBits(k)
	for v.Cmp(n) >= 0 {
		v = r.GetRandBits(k)
	}
	return v
}

// Shuffle permutes n elements in place like random.shuffle(x) with len(x) == n, calling
// swap(i, j) for x[i], x[j] = x[j], x[i].
func (r *Random) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i >= 1; i-- {
		j := r.Randbelow(i + 1)
		swap(i, j)
	}
}

// SetSize returns the population size up to which random.sample(population, k) copies the
// population into a pool. A larger population is sampled with a set of selected indices
// instead, and the two branches consume the stream differently.
func SetSize(k int) int {
	setsize := 21 // size of a small set minus size of an empty list
	if k > 5 {
		// CPython computes math.log(k*3, 4) in floating point, i.e. log(3k)/log(4).
		// 3k is never a power of four, so the ceiling cannot land on a rounding edge.
		e := math.Ceil(math.Log(float64(k*3)) / math.Log(4))
		setsize += 1 << (2 * int(e))
	}
	return setsize
}

// SampleIndices returns the indices that random.sample(range(n), k) would return, in
// selection order. It returns ErrSampleSize if k < 0 or k > n.
func (r *Random) SampleIndices(n, k int) ([]int, error) {
	if k < 0 || k > n {
		return nil, ErrSampleSize
	}
	result := make([]int, k)
	if n <= SetSize(k) {
		// The pool branch: swap-remove from a shrinking list.
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := 0; i < k; i++ {
			j := r.Randbelow(n - i)
			result[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return result, nil
	}
	// The set branch: redraw indices already taken.
	selected := make(map[int]struct{}, k)
	for i := 0; i < k; i++ {
		j := r.Randbelow(n)
		for {
			if _, dup := selected[j]; !dup {
				break
			}
			j = r.Randbelow(n)
		}
		selected[j] = struct{}{}
		result[i] = j
	}
	return result, nil
}

// Sample returns random.sample(population, k) from Python 3.11: k distinct elements in
// selection order. The branch (pool or set) depends on len(population) and k exactly as in
// CPython (see SetSize). This rule and the use of _randbelow have been the same since
// Python 3.2; 3.11 only removed sampling from sets and 3.9 added the counts argument,
// neither of which changes the draws for a sequence. Python 2.7 and 3.0-3.1 used
// int(random()*n) instead of _randbelow, and older Python 2 chose the pool branch by
// n < 6*k, so test sets drawn with those interpreters differ.
func Sample[T any](r *Random, population []T, k int) ([]T, error) {
	idx, err := r.SampleIndices(len(population), k)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = population[j]
	}
	return out, nil
}
