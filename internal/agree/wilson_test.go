package agree

import (
	"math"
	"testing"
)

// TestWilson compares with published values of the 95% Wilson interval (e.g. Newcombe
// 1998, Table I: 0/10, 10/10, 5/10 and 81/263).
func TestWilson(t *testing.T) {
	tests := []struct {
		hits, n int
		lo, hi  float64
	}{
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.hits, tt.n)
		if math.Abs(lo-tt.lo) > 5e-5 || math.Abs(hi-tt.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tt.hits, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
	if lo, hi := Wilson(0, 0); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("Wilson(0, 0) is not NaN")
	}
}
