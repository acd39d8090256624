package campaign

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkAssignment verifies the three promises: exactly k distinct annotators per item
// (locked ones kept), loads apart by at most one unless a warning says why, and every pair
// sharing an item when k >= 2.
func checkAssignment(t *testing.T, r AssignRequest, a Assignment) {
	t.Helper()
	if len(a.Items) != r.Items {
		t.Fatalf("%+v: %d items, want %d", r, len(a.Items), r.Items)
	}
	for i, it := range a.Items {
		if !slices.IsSorted(it) || len(slices.Compact(slices.Clone(it))) != len(it) {
			t.Fatalf("%+v: item %d annotators %v not distinct and sorted", r, i, it)
		}
		want := r.Overlap
		if i < len(r.Locked) {
			want = max(want, len(r.Locked[i]))
			for _, x := range r.Locked[i] {
				if !slices.Contains(it, x) {
					t.Fatalf("%+v: item %d lost locked annotator %d: %v", r, i, x, it)
				}
			}
		}
		if len(it) != want {
			t.Fatalf("%+v: item %d has %d annotators %v, want %d", r, i, len(it), it, want)
		}
	}
	loads := a.Loads(r.Annotators)
	if slices.Max(loads)-slices.Min(loads) > 1 && len(a.Warnings) == 0 {
		t.Fatalf("%+v: loads %v without a warning", r, loads)
	}
	if r.Overlap >= 2 {
		po := a.PairOverlap(r.Annotators)
		for x := range po {
			for y := range po {
				if x != y && po[x][y] == 0 {
					t.Fatalf("%+v: annotators %d and %d share nothing: %v", r, x, y, a.Items)
				}
			}
		}
	}
}

func minItems(m, k int) int {
	if k < 2 {
		return 1
	}
	return (m*(m-1) + k*(k-1) - 1) / (k * (k - 1))
}

func TestAssignProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 3000; iter++ {
		m := 1 + rng.IntN(9)
		k := 1 + rng.IntN(min(m, 4))
		lo := minItems(m, k)
		// The counting bound is not always reachable (K4 does not split into two
		// triangles): sizes start at twice the bound plus the annotators.
		n := 2*lo + m + rng.IntN(3*lo+60)
		r := AssignRequest{Items: n, Annotators: m, Overlap: k, Seed: rng.Uint64()}
		a, err := Assign(r)
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if len(a.Warnings) > 0 {
			t.Fatalf("%+v: warnings %v on a fresh assignment", r, a.Warnings)
		}
		checkAssignment(t, r, a)

		// Extend: some items started, then more annotators and/or a larger overlap.
		locked := make([][]int, n)
		for i, it := range a.Items {
			for _, x := range it {
				if rng.IntN(3) == 0 {
					locked[i] = append(locked[i], x)
				}
			}
		}
		m2 := m + rng.IntN(3)
		k2 := min(m2, k+rng.IntN(2))
		if k2 < 2 && m2 > 1 {
			k2 = 2
		}
		r2 := AssignRequest{Items: n, Annotators: m2, Overlap: k2, Locked: locked, Prev: a.Items, Seed: rng.Uint64()}
		if n < 2*minItems(m2, k2)+m2 {
			continue
		}
		a2, err := Assign(r2)
		if err != nil {
			t.Fatalf("extend %+v: %v", r2, err)
		}
		checkAssignment(t, r2, a2)
	}
}

// TestAssignTight: with overlap 2, the smallest sample that can give every pair a shared
// turn (one turn per pair).
func TestAssignTight(t *testing.T) {
	for _, c := range [][2]int{{4, 2}, {5, 2}, {6, 2}, {3, 2}, {2, 2}} {
		m, k := c[0], c[1]
		for seed := uint64(0); seed < 50; seed++ {
			r := AssignRequest{Items: minItems(m, k), Annotators: m, Overlap: k, Seed: seed}
			a, err := Assign(r)
			if err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
			checkAssignment(t, r, a)
		}
	}
}

func TestAssignErrors(t *testing.T) {
	for _, r := range []AssignRequest{
		{Items: 10, Annotators: 0, Overlap: 1},
		{Items: 10, Annotators: 3, Overlap: 4},
		{Items: 10, Annotators: 3, Overlap: 0},
		{Items: 5, Annotators: 5, Overlap: 2}, // 10 pairs, 5 turns cover 5
	} {
		if _, err := Assign(r); !errors.Is(err, ErrAssign) {
			t.Errorf("%+v: error %v, want ErrAssign", r, err)
		}
	}
}

// TestAssignKeepsPrevious: re-running the same request changes nothing, and with nothing
// started a re-run with one more annotator keeps most of the earlier assignment.
func TestAssignKeepsPrevious(t *testing.T) {
	r := AssignRequest{Items: 300, Annotators: 4, Overlap: 2, Seed: 42}
	a, err := Assign(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Prev = a.Items
	r.Seed = 9
	b, err := Assign(r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a.Items, b.Items, slices.Equal) {
		t.Error("the same request with the earlier assignment moved items")
	}
	loads := a.Loads(4)
	if !slices.Equal(loads, []int{150, 150, 150, 150}) {
		t.Errorf("loads %v", loads)
	}
}

// TestAssignUnbalancedLocks: locked work that no move can even out gives a warning.
func TestAssignUnbalancedLocks(t *testing.T) {
	locked := make([][]int, 20)
	for i := range locked {
		locked[i] = []int{0, 1}
	}
	r := AssignRequest{Items: 20, Annotators: 4, Overlap: 2, Locked: locked}
	if _, err := Assign(r); !errors.Is(err, ErrAssign) {
		// 0 and 1 hold every item, so 2 and 3 cannot share one with anybody.
		t.Fatalf("error %v, want ErrAssign", err)
	}
	locked = locked[:10]
	r = AssignRequest{Items: 20, Annotators: 4, Overlap: 2, Locked: locked}
	a, err := Assign(r)
	if err != nil {
		t.Fatal(err)
	}
	checkAssignment(t, r, a)
	// Balanced loads (10 each) would give the 10 free items to 2 and 3 alone, and 0 and 1
	// would share nothing with them: coverage wins, with a warning.
	if l := a.Loads(4); slices.Max(l)-slices.Min(l) <= 1 || len(a.Warnings) != 1 {
		t.Errorf("loads %v warnings %v", l, a.Warnings)
	}
}

func TestGoldCount(t *testing.T) {
	for _, c := range []struct {
		load int
		rate float64
		want int
	}{{150, 0.1, 17}, {100, 0.2, 25}, {0, 0.5, 0}, {10, 0, 0}, {9, 0.1, 1}, {4, 0.1, 0}} {
		if got := GoldCount(c.load, c.rate); got != c.want {
			t.Errorf("GoldCount(%d, %g) = %d, want %d", c.load, c.rate, got, c.want)
		}
	}
}

func TestPickGold(t *testing.T) {
	gold := []int64{901, 902, 903, 904, 905, 906}
	r := GoldRequest{Loads: []int{90, 45, 9}, Gold: gold, Rate: 0.1, Own: [][]int64{nil, {903}, nil},
		Keep: [][]int64{{906, 999}, nil, nil}, Seed: 3}
	got, err := PickGold(r)
	if err != nil {
		t.Fatal(err)
	}
	// 90 → 10 wanted, capped at the 6 gold turns; 45 → 5, never its own 903; 9 → 1.
	if len(got[0]) != 6 || len(got[1]) != 5 || len(got[2]) != 1 {
		t.Fatalf("gold %v", got)
	}
	if slices.Contains(got[1], 903) {
		t.Errorf("annotator 1 got its own turn 903 as gold: %v", got[1])
	}
	r.Loads = []int{9, 9, 9}
	again, _ := PickGold(r)
	if !slices.Equal(again[0], []int64{906}) {
		t.Errorf("kept gold turn not kept first: %v", again[0])
	}
	if _, err := PickGold(GoldRequest{Loads: []int{3}, Rate: 0.1}); !errors.Is(err, ErrAssign) {
		t.Errorf("rate without gold: %v", err)
	}
	if _, err := PickGold(GoldRequest{Loads: []int{3}, Gold: gold, Rate: 1}); !errors.Is(err, ErrAssign) {
		t.Errorf("rate 1: %v", err)
	}
}

func TestPickRepeats(t *testing.T) {
	own := [][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {11, 12, 13}, nil}
	got, err := PickRepeats(RepeatRequest{Own: own, Rate: 0.2, Keep: [][]int64{{9, 99}}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	// 10 × 0.2 = 2 (9 kept, one more), 3 × 0.2 = 0.6 → 1, none of nothing.
	if len(got[0]) != 2 || !slices.Contains(got[0], 9) || len(got[1]) != 1 || len(got[2]) != 0 {
		t.Fatalf("repeats %v", got)
	}
	for a, ps := range got {
		for _, p := range ps {
			if !slices.Contains(own[a], p) {
				t.Errorf("annotator %d repeats %d, not one of theirs", a, p)
			}
		}
		if !slices.IsSorted(ps) {
			t.Errorf("annotator %d: %v not in queue order", a, ps)
		}
	}
	again, _ := PickRepeats(RepeatRequest{Own: own, Rate: 0.2, Keep: got, Seed: 77})
	if !slices.EqualFunc(again, got, slices.Equal) {
		t.Errorf("a re-run with the earlier repeats kept moved them: %v vs %v", again, got)
	}
	if _, err := PickRepeats(RepeatRequest{Own: own, Rate: 1.5}); !errors.Is(err, ErrAssign) {
		t.Errorf("rate 1.5: %v", err)
	}
}

// TestNoSharedTurnNamesThePair: when the work already started (locked) leaves two annotators
// no turn in common and no swap can give them one, the error says which two, as indices the
// caller turns into names.
func TestNoSharedTurnNamesThePair(t *testing.T) {
	_, err := Assign(AssignRequest{Items: 3, Annotators: 3, Overlap: 2, Seed: 1,
		Locked: [][]int{{0, 2}, {0, 2}, {1, 2}}})
	var pair *NoSharedTurnError
	if !errors.As(err, &pair) || !errors.Is(err, ErrAssign) || pair.A != 0 || pair.B != 1 {
		t.Fatalf("got %v (%#v), want annotators 0 and 1 with no shared turn", err, pair)
	}
}
