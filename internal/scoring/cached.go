package scoring

import (
	"sync/atomic"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/store"
)

// replicates counts the bootstrap replicates Run has asked agree to draw in this process (per
// field and block). A run whose intervals come from the cache adds nothing: the tests read it
// (export_test.go) to tell a reused run from a computed one; it is not part of the package's API.
var replicates atomic.Int64

// The cache entry of a run: what the bootstrap adds to each field's result, per block, in the
// order of Result.Sections. agree.Value keeps its fields to itself, so values are stored as
// (number, defined, reason) and made again with agree.Num and agree.Undefined, which gives
// the same numbers bit for bit (JSON writes a float64 in the shortest form that reads back
// to the same bits).
type (
	storedRun struct {
		Blocks [][]storedField `json:"blocks"`
	}
	storedField struct {
		Intervals   []storedInterval   `json:"intervals"`
		Comparisons []storedComparison `json:"comparisons"`
	}
	storedComparison struct {
		CI    [3]int        `json:"ci"` // index into Intervals; -1: none
		Tests [3]storedTest `json:"tests"`
	}
	storedInterval struct {
		Stat       string         `json:"stat"`
		B          int            `json:"b"`
		NUndefined int            `json:"n_undefined"`
		Method     agree.CIMethod `json:"method"`
		Cluster    string         `json:"cluster"`
		Clusters   int            `json:"clusters"`
		Lo, Hi, SE storedValue
	}
	storedTest struct {
		Method       agree.Method `json:"method"`
		Statistic    storedValue  `json:"statistic"`
		DF1, DF2     float64
		P, PAdjusted storedValue
	}
	storedValue struct {
		V  float64 `json:"v"`
		OK bool    `json:"ok"`
		R  string  `json:"r,omitempty"`
	}
)

func storeValue(v agree.Value) storedValue {
	x, ok := v.Float()
	return storedValue{V: x, OK: ok, R: v.Reason()}
}

func (s storedValue) value() agree.Value {
	if s.OK {
		return agree.Num(s.V)
	}
	return agree.Undefined(s.R)
}

func storeTest(t agree.Test) storedTest {
	return storedTest{Method: t.Method, Statistic: storeValue(t.Statistic), DF1: t.DF1, DF2: t.DF2,
		P: storeValue(t.P), PAdjusted: storeValue(t.PAdjusted)}
}

func (s storedTest) test() agree.Test {
	return agree.Test{Method: s.Method, Statistic: s.Statistic.value(), DF1: s.DF1, DF2: s.DF2,
		P: s.P.value(), PAdjusted: s.PAdjusted.value()}
}

// storeBlock takes what the bootstrap added to a block's results.
func storeBlock(res []agree.FieldResult) []storedField {
	out := make([]storedField, len(res))
	for fi := range res {
		r := &res[fi]
		sf := storedField{Intervals: make([]storedInterval, len(r.Bootstrap)), Comparisons: make([]storedComparison, len(r.Comparisons))}
		for i, iv := range r.Bootstrap {
			sf.Intervals[i] = storedInterval{Stat: iv.Stat, B: iv.B, NUndefined: iv.NUndefined, Method: iv.Method,
				Cluster: iv.Cluster, Clusters: iv.Clusters, Lo: storeValue(iv.Lo), Hi: storeValue(iv.Hi), SE: storeValue(iv.SE)}
		}
		for ci := range r.Comparisons {
			c := &r.Comparisons[ci]
			sc := &sf.Comparisons[ci]
			for s := range c.CI {
				sc.CI[s] = -1
				for i := range r.Bootstrap {
					if c.CI[s] == &r.Bootstrap[i] {
						sc.CI[s] = i
					}
				}
				sc.Tests[s] = storeTest(c.Tests[s])
			}
		}
		out[fi] = sf
	}
	return out
}

// applyBlock puts a stored block's intervals and tests into results computed without the
// bootstrap; false (and res untouched) when the shapes differ, which an exact key rules out
// but a hand-edited entry could cause.
func applyBlock(res []agree.FieldResult, stored []storedField) bool {
	if len(stored) != len(res) {
		return false
	}
	for fi := range res {
		sf := &stored[fi]
		if len(sf.Comparisons) != len(res[fi].Comparisons) {
			return false
		}
		for _, sc := range sf.Comparisons {
			for _, i := range sc.CI {
				if i < -1 || i >= len(sf.Intervals) {
					return false
				}
			}
		}
	}
	for fi := range res {
		r, sf := &res[fi], &stored[fi]
		r.Bootstrap = make([]agree.Interval, len(sf.Intervals))
		for i, si := range sf.Intervals {
			r.Bootstrap[i] = agree.Interval{Stat: si.Stat, B: si.B, NUndefined: si.NUndefined, Method: si.Method,
				Cluster: si.Cluster, Clusters: si.Clusters, Lo: si.Lo.value(), Hi: si.Hi.value(), SE: si.SE.value()}
		}
		for ci, sc := range sf.Comparisons {
			c := &r.Comparisons[ci]
			for s := range c.CI {
				c.CI[s] = nil
				if sc.CI[s] >= 0 {
					c.CI[s] = &r.Bootstrap[sc.CI[s]]
				}
				c.Tests[s] = sc.Tests[s].test()
			}
		}
	}
	return true
}

// newRunKey starts the fingerprint of a run's intervals with everything but the rows: the
// program, the rubric's fields as the analysis sees them, the filter and the options the
// intervals depend on. The rows streamed out of the store are added as they come (addRow),
// so an edited label, a new score or a moved turn changes the key whatever the counts.
func newRunKey(sc *scorer, o *Options) *intervalcache.Key {
	k := intervalcache.NewKey("scoring.Run")
	ci := agree.CIPercentile
	if o.Agree.CI == agree.CIBCa {
		ci = agree.CIBCa
	}
	k.AddJSON(struct {
		Fields       []agree.Field
		NA           map[string]string
		NACategory   bool
		Judges       []string
		Filter       store.ScoreFilter
		Bootstrap    int
		Seed         uint64
		CI           agree.CIMethod
		ClusterName  string
		Exchangeable bool
	}{sc.fields, sc.naValue, sc.naCategory, sc.judges, o.Filter, o.Agree.Bootstrap, o.Agree.Seed, ci,
		o.ClusterName, o.Agree.Exchangeable})
	return k
}

func addRow(k *intervalcache.Key, kind string, row *store.ScoreRow) {
	k.Add(kind, row.Group, row.Cluster, row.Sample, row.Who, row.Field, row.Value)
}
