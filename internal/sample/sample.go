// Package sample draws stratified samples: proportional allocation by largest remainder (the
// lab's proportional_allocation of the IllusionBench guide, section 4.2), an optional floor per
// stratum, and a seeded draw that reproduces Python's random.sample. `m3eval illusion sample`
// and `m3eval sample` share this one implementation.
package sample

import (
	"errors"
	"fmt"
	"slices"

	"github.com/m3bench/m3eval/internal/pyrandom"
)

// ErrInfeasible marks a request no allocation can meet (more turns than there are, or floors
// that add up to more than the sample).
var ErrInfeasible = errors.New("infeasible sample")

// Allocate splits total over strata of the given sizes in proportion to their size. It
// follows the guide's proportional_allocation: the floor of the exact share, then one more
// for each stratum in order of decreasing remainder until the total is reached. Python sorts (remainder, key)
// pairs in reverse, so equal remainders go to the larger key first (string order). An empty
// set of strata (or all sizes zero) gives all zeros. The result may exceed a stratum's size
// when total exceeds the sum, as the guide's script allows.
func Allocate(keys []string, counts []int, total int) []int {
	alloc := make([]int, len(counts))
	grand := 0
	for _, c := range counts {
		grand += c
	}
	if grand == 0 {
		return alloc
	}
	type rem struct {
		frac float64
		key  string
		i    int
	}
	rems := make([]rem, len(counts))
	running := 0
	for i, c := range counts {
		// float64(...) conversions forbid fused multiply-adds: the remainders must round
		// exactly like Python's c / grand * total and exact - floor_val.
		exact := float64(float64(c) / float64(grand) * float64(total))
		floor := int(exact)
		alloc[i] = floor
		running += floor
		rems[i] = rem{float64(exact - float64(floor)), keys[i], i}
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.frac > b.frac:
			return -1
		case a.frac < b.frac:
			return 1
		case a.key > b.key:
			return -1
		case a.key < b.key:
			return 1
		}
		return 0
	})
	for _, r := range rems {
		if running >= total {
			break
		}
		alloc[r.i]++
		running++
	}
	return alloc
}

// AllocateMin is Allocate with a lower and an upper bound per stratum. Every stratum gets at
// least min(floor, its size) and at most its size. Strata that break a bound are fixed at it and the rest of the total is
// allocated again over the others, proportionally, until no bound is broken (raising the rare
// strata first). It fails with ErrInfeasible when total exceeds the strata's sizes or the
// floors add up to more than total.
func AllocateMin(keys []string, counts []int, total, floor int) ([]int, error) {
	if total < 0 || floor < 0 {
		return nil, fmt.Errorf("%w: negative size", ErrInfeasible)
	}
	lo := make([]int, len(counts))
	avail, need := 0, 0
	for i, c := range counts {
		avail += c
		lo[i] = min(floor, c)
		need += lo[i]
	}
	if total > avail {
		return nil, fmt.Errorf("%w: %d wanted, %d available", ErrInfeasible, total, avail)
	}
	if need > total {
		return nil, fmt.Errorf("%w: a floor of %d per stratum over %d strata needs %d, more than %d", ErrInfeasible, floor, len(counts), need, total)
	}
	alloc := make([]int, len(counts))
	fixed := make([]bool, len(counts))
	for {
		rest := total
		var fk []string
		var fc, fi []int
		for i := range counts {
			if fixed[i] {
				rest -= alloc[i]
				continue
			}
			fk, fc, fi = append(fk, keys[i]), append(fc, counts[i]), append(fi, i)
		}
		a := Allocate(fk, fc, rest)
		for j, i := range fi {
			alloc[i] = a[j]
		}
		// Raise the strata under their floor first: that only lowers the others' shares.
		changed := false
		for _, i := range fi {
			if alloc[i] < lo[i] {
				alloc[i], fixed[i], changed = lo[i], true, true
			}
		}
		if !changed {
			for _, i := range fi {
				if alloc[i] > counts[i] {
					alloc[i], fixed[i], changed = counts[i], true, true
				}
			}
		}
		if !changed {
			break
		}
	}
	sum := 0
	for _, a := range alloc {
		sum += a
	}
	if sum != total {
		return nil, fmt.Errorf("%w: the bounds leave %d of %d to allocate", ErrInfeasible, total-sum, total)
	}
	return alloc, nil
}

// Pool is one stratum of the population. It has a key (the values of the attributes it is
// stratified by) and its members in a fixed order.
type Pool struct {
	Key   []string
	Items []int64
}

// Stratum is the outcome of a draw for one pool: how many members were available, allocated
// and drawn. Drawn equals allocated here; the IllusionBench sampler keeps the guide's looser
// rule.
type Stratum struct {
	Key                         []string
	Available, Allocated, Drawn int
	// Items are the drawn members in the pool's order.
	Items []int64
	// Inclusion, for an active sample (m3eval sample --active), is the probability with
	// which each of Items was drawn; nil for a stratified sample.
	Inclusion []float64
}

// Request says what to draw. That is N members in total, at least MinPerStratum from every
// stratum (or all of a smaller one), with random.Random(Seed).
type Request struct {
	N             int
	MinPerStratum int
	Seed          int64
}

// Count is one stratum of the population by size: its key and how many members it has.
type Count struct {
	Key []string
	N   int
}

// Drawn is the outcome for one stratum as positions: the 0-based places of the drawn
// members in the stratum's fixed order, ascending.
type Drawn struct {
	Key                         []string
	Available, Allocated, Drawn int
	Positions                   []int
}

// DrawPositions draws a stratified sample and returns the drawn members' positions. It
// allocates r.N over the strata and draws each stratum's share with one generator, in the
// order of the strata, so the result depends only on the strata's keys and sizes and the
// request. Callers give the strata in a fixed order (e.g. sorted by key).
// Positions let a large population stay in the database: only the drawn members are read.
func DrawPositions(strata []Count, r Request) ([]Drawn, error) {
	keys := make([]string, len(strata))
	counts := make([]int, len(strata))
	for i, c := range strata {
		keys[i] = KeyString(c.Key)
		counts[i] = c.N
	}
	alloc, err := AllocateMin(keys, counts, r.N, r.MinPerStratum)
	if err != nil {
		return nil, err
	}
	rng := pyrandom.New(r.Seed)
	out := make([]Drawn, len(strata))
	for i, c := range strata {
		idx, err := rng.SampleIndices(c.N, alloc[i])
		if err != nil {
			return nil, fmt.Errorf("stratum %s: %w", keys[i], err)
		}
		slices.Sort(idx)
		out[i] = Drawn{Key: c.Key, Available: c.N, Allocated: alloc[i], Drawn: len(idx), Positions: idx}
	}
	return out, nil
}

// Draw is DrawPositions over pools held in memory: it returns the drawn members themselves.
func Draw(pools []Pool, r Request) ([]Stratum, error) {
	counts := make([]Count, len(pools))
	for i, p := range pools {
		counts[i] = Count{p.Key, len(p.Items)}
	}
	drawn, err := DrawPositions(counts, r)
	if err != nil {
		return nil, err
	}
	out := make([]Stratum, len(pools))
	for i, d := range drawn {
		items := make([]int64, len(d.Positions))
		for j, x := range d.Positions {
			items[j] = pools[i].Items[x]
		}
		out[i] = Stratum{Key: d.Key, Available: d.Available, Allocated: d.Allocated, Drawn: d.Drawn, Items: items}
	}
	return out, nil
}

// KeyString joins a stratum key for display and for the allocation's tie-break.
func KeyString(key []string) string {
	s := ""
	for i, k := range key {
		if i > 0 {
			s += " / "
		}
		s += k
	}
	return s
}
