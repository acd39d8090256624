package illusion

import (
	"fmt"
	"slices"

	"github.com/m3bench/m3eval/internal/pyrandom"
	"github.com/m3bench/m3eval/internal/sample"
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

// Allocate splits total over the difficulty groups by the guide's proportional_allocation;
// it is sample.Allocate with the groups' names as keys.
func Allocate(keys []Difficulty, counts []int, total int) []int {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = string(k)
	}
	return sample.Allocate(names, counts, total)
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
