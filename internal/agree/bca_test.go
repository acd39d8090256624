package agree

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestBCaMatchesSciPy recomputes SciPy's BCa interval (testdata/cluster/ref_cluster.py) of
// the mean of a sample from the same replicates, with the leave-one-out means as jackknife.
func TestBCaMatchesSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/cluster/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		BCa struct {
			Sample, Replicates []float64
			Lo, Hi             float64
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	x := ref.BCa.Sample
	var jack []float64
	for i := range x {
		jack = append(jack, stat.Mean(slices.Delete(slices.Clone(x), i, i+1), nil))
	}
	reps := slices.Clone(ref.BCa.Replicates)
	slices.Sort(reps)
	lo, hi, undef := bcaInterval(stat.Mean(x, nil), reps, jack, 0.05)
	if undef != "" || math.Abs(lo-ref.BCa.Lo) > 1e-12 || math.Abs(hi-ref.BCa.Hi) > 1e-12 {
		t.Fatalf("BCa [%v, %v] (%s), SciPy [%v, %v]", lo, hi, undef, ref.BCa.Lo, ref.BCa.Hi)
	}
}
