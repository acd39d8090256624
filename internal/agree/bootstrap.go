package agree

import (
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// summarize turns replicate values into an interval.
func summarize(name string, vals []float64) Interval {
	iv := Interval{Stat: name, B: len(vals)}
	ok := make([]float64, 0, len(vals))
	for _, v := range vals {
		if math.IsNaN(v) {
			iv.NUndefined++
		} else {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		u := Undefined("every bootstrap replicate is undefined")
		iv.Lo, iv.Hi, iv.SE = u, u, u
		return iv
	}
	slices.Sort(ok)
	iv.Lo = Num(percentile(ok, 2.5))
	iv.Hi = Num(percentile(ok, 97.5))
	if len(ok) > 1 {
		iv.SE = Num(stat.StdDev(ok, nil))
	} else {
		iv.SE = Undefined("a single defined bootstrap replicate")
	}
	return iv
}

// percentile is numpy's default (linear) percentile of sorted values. gonum's stat.Quantile
// offers only the empirical and the Hyndman–Fan type 4 rules, not numpy's type 7, hence by
// hand.
func percentile(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func nanIfUndef(v Value) float64 {
	if x, ok := v.Float(); ok {
		return x
	}
	return math.NaN()
}

// stream numbers: field index, statistic group, judge.
func streamID(field, group, judge int) uint64 {
	return uint64(field)<<24 | uint64(group)<<16 | uint64(judge)
}

// sanitize keeps a judge name usable inside a statistic key.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '.' {
			return '_'
		}
		return r
	}, s)
}
