package illusion

import (
	"fmt"
	"slices"

	"github.com/m3bench/m3eval/internal/pyrandom"
)

// Group is one difficulty group of a split: its size, the rows the allocation gave it and
// the rows really drawn (fewer than allocated when the group is too small).
type Group struct {
	Difficulty Difficulty
	Original   int
	Allocated  int
	Sampled    int
}

// Selection is the outcome of sampling one split.
type Selection struct {
	// Groups are in order of first appearance in the split, as Python's dict keeps them.
	Groups []Group
	// Indices are the selected row numbers (0-based, in file order), sorted ascending.
	Indices []int
}

// Short reports the groups that had fewer rows than allocated.
func (s Selection) Short() []Group {
	var short []Group
	for _, g := range s.Groups {
		if g.Sampled < g.Allocated {
			short = append(short, g)
		}
	}
	return short
}

// Allocate splits total over groups of the given sizes in proportion to their size, by the
// guide's proportional_allocation: floor of the exact share, then one more for each group in
// order of decreasing remainder until the total is reached. Python sorts (remainder, key)
// pairs in reverse, so equal remainders go to the larger key first (string order).
// An empty set of groups (or all sizes zero) gives all zeros.
func Allocate(keys []Difficulty, counts []int, total int) []int {
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
		key  Difficulty
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

// Sampler draws test sets for several splits from one generator, in the order the splits
// are sampled, as the guide's script shares one random.Random(SEED) across its SPLITS.
type Sampler struct {
	rng *pyrandom.Random
	n   int
}

// NewSampler returns a Sampler drawing n rows per split with random.Random(seed).
func NewSampler(seed int64, n int) (*Sampler, error) {
	if n < 0 {
		return nil, fmt.Errorf("sample size %d is negative", n)
	}
	return &Sampler{rng: pyrandom.New(seed), n: n}, nil
}

// Select samples one split given the image_name of every row in file order. Calls must be
// made in split order: each one advances the shared generator.
func (s *Sampler) Select(names []string) Selection {
	var keys []Difficulty
	byDiff := map[Difficulty][]int{}
	for i, name := range names {
		d := ParseDifficulty(name)
		if _, seen := byDiff[d]; !seen {
			keys = append(keys, d)
		}
		byDiff[d] = append(byDiff[d], i)
	}
	counts := make([]int, len(keys))
	for i, k := range keys {
		counts[i] = len(byDiff[k])
	}
	alloc := Allocate(keys, counts, s.n)
	sel := Selection{Groups: make([]Group, len(keys))}
	for i, k := range keys {
		rows := byDiff[k]
		take := min(alloc[i], len(rows))
		picked, err := pyrandom.Sample(s.rng, rows, take)
		if err != nil {
			// take is within [0, len(rows)] by construction.
			panic(err)
		}
		sel.Indices = append(sel.Indices, picked...)
		sel.Groups[i] = Group{Difficulty: k, Original: len(rows), Allocated: alloc[i], Sampled: take}
	}
	slices.Sort(sel.Indices)
	return sel
}
