// Package campaign is the domain of a team annotation campaign: giving a sample's turns to
// annotators with overlap, mixing in gold turns, checking the work (quality control) and
// settling disagreements into final labels. It works on plain values; the store keeps them
// and cmd/m3eval wires the two.
package campaign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// ErrAssign marks an assignment the request cannot have.
var ErrAssign = errors.New("cannot assign")

// AssignRequest asks for every one of Items items to go to exactly Overlap of Annotators
// annotators (both counted, indices from 0).
type AssignRequest struct {
	Items, Annotators, Overlap int
	// Locked lists, per item, the annotators who have started it: they keep it whatever
	// happens ("work already done never moves").
	Locked [][]int
	// Prev lists, per item, the annotators of an earlier assignment: among equally loaded
	// annotators they are preferred, so a re-run changes as little as it can.
	Prev [][]int
	Seed uint64
}

// Assignment is, per item, its annotators in ascending order, with what could not be met.
type Assignment struct {
	Items [][]int
	// Warnings say which goal was missed and why (loads apart by more than one because
	// locked work is unbalanced, an item with more locked annotators than the overlap).
	Warnings []string
}

// Loads counts each annotator's items.
func (a Assignment) Loads(annotators int) []int {
	l := make([]int, annotators)
	for _, it := range a.Items {
		for _, x := range it {
			l[x]++
		}
	}
	return l
}

// PairOverlap counts, for every two annotators, the items they share.
func (a Assignment) PairOverlap(annotators int) [][]int {
	m := make([][]int, annotators)
	for i := range m {
		m[i] = make([]int, annotators)
	}
	for _, it := range a.Items {
		for i, x := range it {
			for _, y := range it[i+1:] {
				m[x][y]++
				m[y][x]++
			}
		}
	}
	return m
}

// assigner holds the working state: who is on which item, loads and pair counts.
type assigner struct {
	r      AssignRequest
	on     [][]bool // on[item][annotator]
	locked [][]bool
	prev   [][]bool
	load   []int
	pairs  [][]int
	rng    *rand.Rand
}

// Assign gives every item of the request its annotators. Every item gets exactly Overlap
// annotators, loads differ by at most one, and with an overlap of two or more every two
// annotators share at least one item. It starts
// from the locked work, fills each item with the least loaded annotators (preferring the
// earlier assignment, then annotators who do not share an item yet, then a seeded draw),
// then repairs uncovered pairs by swaps that keep loads and coverage, and finally evens out
// loads that locked work left apart. Written by hand: this is a small constrained design
// problem no Go library solves.
func Assign(r AssignRequest) (Assignment, error) {
	m, k, n := r.Annotators, r.Overlap, r.Items
	switch {
	case m < 1:
		return Assignment{}, fmt.Errorf("%w: no annotators", ErrAssign)
	case k < 1 || k > m:
		return Assignment{}, fmt.Errorf("%w: overlap %d must be between 1 and the number of annotators (%d)", ErrAssign, k, m)
	case k >= 2 && n*k*(k-1) < m*(m-1):
		return Assignment{}, fmt.Errorf("%w: %d turns with overlap %d give at most %d annotator pairs a shared turn, %d annotators make %d pairs; sample more turns or raise --overlap",
			ErrAssign, n, k, n*k*(k-1)/2, m, m*(m-1)/2)
	}
	a := &assigner{r: r, load: make([]int, m), rng: rand.New(rand.NewPCG(r.Seed, 0x6d336576616c))}
	a.on, a.locked, a.prev = grid(n, m), grid(n, m), grid(n, m)
	a.pairs = make([][]int, m)
	for i := range a.pairs {
		a.pairs[i] = make([]int, m)
	}
	var out Assignment
	for i := 0; i < n; i++ {
		if i < len(r.Locked) {
			for _, x := range r.Locked[i] {
				if x < 0 || x >= m {
					return Assignment{}, fmt.Errorf("%w: item %d: locked annotator %d out of range", ErrAssign, i, x)
				}
				if !a.on[i][x] {
					a.add(i, x)
				}
				a.locked[i][x] = true
			}
			if len(r.Locked[i]) > k {
				out.Warnings = append(out.Warnings, fmt.Sprintf("item %d keeps %d annotators who started it, more than the overlap %d", i, len(r.Locked[i]), k))
			}
		}
		if i < len(r.Prev) {
			for _, x := range r.Prev[i] {
				if x >= 0 && x < m {
					a.prev[i][x] = true
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		for a.count(i) < k {
			a.add(i, a.pick(i))
		}
	}
	if k >= 2 {
		for x := 0; x < m; x++ {
			for y := x + 1; y < m; y++ {
				if a.pairs[x][y] == 0 && !a.cover(x, y, true) && !a.cover(y, x, true) && !a.cover(x, y, false) && !a.cover(y, x, false) {
					return Assignment{}, &NoSharedTurnError{A: x, B: y}
				}
			}
		}
	}
	a.balance()
	lo, hi := slices.Min(a.load), slices.Max(a.load)
	if hi-lo > 1 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("loads range from %d to %d: with the work already started in place, no assignment is both balanced and gives every pair a shared turn", lo, hi))
	}
	out.Items = make([][]int, n)
	for i := range out.Items {
		for x := 0; x < m; x++ {
			if a.on[i][x] {
				out.Items[i] = append(out.Items[i], x)
			}
		}
	}
	return out, nil
}

func grid(n, m int) [][]bool {
	g := make([][]bool, n)
	cells := make([]bool, n*m)
	for i := range g {
		g[i] = cells[i*m : (i+1)*m]
	}
	return g
}

func (a *assigner) count(i int) int {
	c := 0
	for _, on := range a.on[i] {
		if on {
			c++
		}
	}
	return c
}

func (a *assigner) add(i, x int) {
	for y, on := range a.on[i] {
		if on {
			a.pairs[x][y]++
			a.pairs[y][x]++
		}
	}
	a.on[i][x] = true
	a.load[x]++
}

func (a *assigner) remove(i, x int) {
	a.on[i][x] = false
	a.load[x]--
	for y, on := range a.on[i] {
		if on {
			a.pairs[x][y]--
			a.pairs[y][x]--
		}
	}
}

// pick chooses the annotator to add to item i: least loaded, then one of the earlier
// assignment, then the one who gains the most pairs not yet sharing an item, then at random.
func (a *assigner) pick(i int) int {
	best, bestKey := -1, [4]int{}
	for x := 0; x < a.r.Annotators; x++ {
		if a.on[i][x] {
			continue
		}
		gain := 0
		for y, on := range a.on[i] {
			if on && a.pairs[x][y] == 0 {
				gain++
			}
		}
		notPrev := 1
		if a.prev[i][x] {
			notPrev = 0
		}
		key := [4]int{a.load[x], notPrev, -gain, a.rng.IntN(1 << 30)}
		if best < 0 || slices.Compare(key[:], bestKey[:]) < 0 {
			best, bestKey = x, key
		}
	}
	return best
}

// removable tells whether x can leave item i without leaving a pair with no shared item.
func (a *assigner) removable(i, x int) bool {
	if a.locked[i][x] || !a.on[i][x] {
		return false
	}
	for y, on := range a.on[i] {
		if on && y != x && a.pairs[x][y] < 2 {
			return false
		}
	}
	return true
}

func (a *assigner) spread() int { return slices.Max(a.load) - slices.Min(a.load) }

// cover gives x and y a shared item: on an item of x without y, y replaces some c; if that
// unbalances the loads, c takes y's place on another item. With balanced false it accepts a
// swap that leaves loads apart (a shared item for every pair comes first; locked work can
// make both impossible at once).
func (a *assigner) cover(x, y int, balanced bool) bool {
	before := a.spread()
	for i := range a.on {
		if !a.on[i][x] || a.on[i][y] {
			continue
		}
		for c := 0; c < a.r.Annotators; c++ {
			if c == x || !a.removable(i, c) {
				continue
			}
			a.remove(i, c)
			a.add(i, y)
			if !balanced || a.spread() <= max(before, 1) {
				return true
			}
			for j := range a.on {
				if j == i || a.on[j][c] || !a.removable(j, y) {
					continue
				}
				a.remove(j, y)
				a.add(j, c)
				return true
			}
			a.remove(i, y)
			a.add(i, c)
		}
	}
	return false
}

// balance moves items from the most to the least loaded annotators while it can do so
// without breaking pair coverage or moving started work.
func (a *assigner) balance() {
	for a.spread() > 1 {
		hi, lo := 0, 0
		for x, l := range a.load {
			if l > a.load[hi] {
				hi = x
			}
			if l < a.load[lo] {
				lo = x
			}
		}
		moved := false
		for i := range a.on {
			if a.on[i][lo] || !a.removable(i, hi) {
				continue
			}
			a.remove(i, hi)
			a.add(i, lo)
			moved = true
			break
		}
		if !moved {
			// Try any over-loaded annotator towards any under-loaded one before giving up.
			if !a.balanceAny() {
				return
			}
		}
	}
}

func (a *assigner) balanceAny() bool {
	lo, hi := slices.Min(a.load), slices.Max(a.load)
	for x, lx := range a.load {
		if lx != hi {
			continue
		}
		for y, ly := range a.load {
			if ly != lo {
				continue
			}
			for i := range a.on {
				if !a.on[i][y] && a.removable(i, x) {
					a.remove(i, x)
					a.add(i, y)
					return true
				}
			}
		}
	}
	return false
}

// NoSharedTurnError says that no assignment gives two annotators a turn in common. A and B
// are indices into the request's annotators: the caller, who knows their names, says which.
type NoSharedTurnError struct{ A, B int }

// Error implements error.
func (e *NoSharedTurnError) Error() string {
	return fmt.Sprintf("%v: found no swap that gives annotators %d and %d a shared turn; sample more turns", ErrAssign, e.A, e.B)
}

// Unwrap makes the error an ErrAssign.
func (e *NoSharedTurnError) Unwrap() error { return ErrAssign }
