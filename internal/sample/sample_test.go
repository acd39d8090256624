package sample

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func TestAllocate(t *testing.T) {
	tests := []struct {
		name   string
		keys   []string
		counts []int
		total  int
		want   []int
	}{
		{"empty", nil, nil, 1000, []int{}},
		{"zeros", []string{"Easy"}, []int{0}, 10, []int{0}},
		{"exact", []string{"Easy", "Hard"}, []int{50, 50}, 10, []int{5, 5}},
		// 10/3 each: one left over, the tie goes to the largest key.
		{"tie", []string{"Easy", "Medium", "Hard"}, []int{1, 1, 1}, 10, []int{3, 4, 3}},
		// The largest remainder wins before key order matters.
		{"remainder", []string{"Easy", "Medium", "Hard"}, []int{7, 2, 1}, 4, []int{3, 1, 0}},
		{"more than rows", []string{"Easy", "Hard"}, []int{1, 3}, 100, []int{25, 75}},
		// By hand: 30, 5, 1000 of 1035 for 100 are 2.90, 0.48, 96.62: floors 98, then a and c.
		{"hand", []string{"a", "b", "c"}, []int{30, 5, 1000}, 100, []int{3, 0, 97}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allocate(tt.keys, tt.counts, tt.total); !slices.Equal(got, tt.want) {
				t.Errorf("Allocate = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAllocateGuide compares with the guide's own Python function over 300 seeded cases
// (testdata/alloc_ref.py).
func TestAllocateGuide(t *testing.T) {
	data, err := os.ReadFile("testdata/alloc_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Keys   []string `json:"keys"`
		Counts []int    `json:"counts"`
		Total  int      `json:"total"`
		Want   []int    `json:"want"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 300 {
		t.Fatalf("%d cases", len(cases))
	}
	for i, c := range cases {
		if got := Allocate(c.Keys, c.Counts, c.Total); !slices.Equal(got, c.Want) {
			t.Errorf("case %d %v %v total %d: got %v, want %v", i, c.Keys, c.Counts, c.Total, got, c.Want)
		}
	}
}

func TestAllocateMin(t *testing.T) {
	// By hand: b's proportional share (0.48) is under the floor, so b gets 1 and the other 99
	// go to a and c in proportion: 2.88 and 96.12, floors 98, the remainder to a.
	got, err := AllocateMin([]string{"a", "b", "c"}, []int{30, 5, 1000}, 100, 1)
	if err != nil || !slices.Equal(got, []int{3, 1, 96}) {
		t.Fatalf("AllocateMin = %v, %v", got, err)
	}
	// A stratum smaller than the floor gives all it has.
	got, err = AllocateMin([]string{"a", "b"}, []int{2, 1000}, 20, 5)
	if err != nil || !slices.Equal(got, []int{2, 18}) {
		t.Fatalf("AllocateMin small stratum = %v, %v", got, err)
	}
	for _, bad := range []struct {
		counts       []int
		total, floor int
	}{
		{[]int{3, 4}, 8, 0},       // more than there is
		{[]int{10, 10, 10}, 5, 2}, // floors need 6
		{[]int{10}, -1, 0},
	} {
		if _, err := AllocateMin(make([]string, len(bad.counts)), bad.counts, bad.total, bad.floor); !errors.Is(err, ErrInfeasible) {
			t.Errorf("AllocateMin(%v, %d, %d) error = %v, want ErrInfeasible", bad.counts, bad.total, bad.floor, err)
		}
	}
}

// TestAllocateMinProperties: over many random configurations the allocation sums to the
// total, honors every bound, and without a floor equals the plain allocation when that one
// fits.
func TestAllocateMinProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 5000; iter++ {
		n := 1 + rng.IntN(8)
		keys := make([]string, n)
		counts := make([]int, n)
		sum := 0
		for i := range counts {
			keys[i] = string(rune('a' + i))
			switch rng.IntN(3) {
			case 0:
				counts[i] = rng.IntN(4)
			case 1:
				counts[i] = rng.IntN(50)
			default:
				counts[i] = rng.IntN(5000)
			}
			sum += counts[i]
		}
		total := rng.IntN(sum + 1)
		floor := rng.IntN(6)
		got, err := AllocateMin(keys, counts, total, floor)
		need := 0
		for _, c := range counts {
			need += min(c, floor)
		}
		if need > total {
			if !errors.Is(err, ErrInfeasible) {
				t.Fatalf("counts %v total %d floor %d: error %v, want ErrInfeasible", counts, total, floor, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("counts %v total %d floor %d: %v", counts, total, floor, err)
		}
		s := 0
		for i, a := range got {
			s += a
			if a < min(floor, counts[i]) || a > counts[i] {
				t.Fatalf("counts %v total %d floor %d: stratum %d gets %d", counts, total, floor, i, a)
			}
		}
		if s != total {
			t.Fatalf("counts %v total %d floor %d: sum %d", counts, total, floor, s)
		}
		if floor == 0 && !slices.Equal(got, Allocate(keys, counts, total)) {
			t.Fatalf("counts %v total %d: %v differs from Allocate %v", counts, total, got, Allocate(keys, counts, total))
		}
	}
}

func pools() []Pool {
	mk := func(lo, hi int64) []int64 {
		var s []int64
		for i := lo; i < hi; i++ {
			s = append(s, i)
		}
		return s
	}
	return []Pool{{[]string{"a"}, mk(100, 130)}, {[]string{"b"}, mk(200, 205)}, {[]string{"c"}, mk(300, 1300)}}
}

// TestDrawPython: the draw equals Python's
//
//	rng = random.Random(42); [sorted(rng.sample(p, a)) for p, a in zip(pools, [3, 1, 96])]
func TestDrawPython(t *testing.T) {
	got, err := Draw(pools(), Request{N: 100, MinPerStratum: 1, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{100, 103, 120}, {202}}
	for i, w := range want {
		if !slices.Equal(got[i].Items, w) {
			t.Errorf("stratum %d: %v, want %v", i, got[i].Items, w)
		}
	}
	c := got[2]
	if c.Available != 1000 || c.Allocated != 96 || c.Drawn != 96 || c.Items[0] != 306 || c.Items[95] != 1295 {
		t.Errorf("stratum c: %+v", c)
	}
	again, _ := Draw(pools(), Request{N: 100, MinPerStratum: 1, Seed: 42})
	other, _ := Draw(pools(), Request{N: 100, MinPerStratum: 1, Seed: 43})
	if !slices.Equal(again[2].Items, c.Items) {
		t.Error("same seed, different draw")
	}
	if slices.Equal(other[2].Items, c.Items) {
		t.Error("another seed, same draw")
	}
	if _, err := Draw(pools(), Request{N: 2000}); !errors.Is(err, ErrInfeasible) {
		t.Errorf("N over the population: %v", err)
	}
}
