package agree

import "math"

// Wilson returns the 95% Wilson score interval for hits successes out of n trials. It is
// well defined at 0 and n hits, unlike the normal approximation; n = 0 gives NaNs.
func Wilson(hits, n int) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.959963984540054 // the 0.975 quantile of the standard normal
	nf := float64(n)
	p := float64(hits) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, center-half), min(1, center+half)
}
