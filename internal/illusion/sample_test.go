package illusion

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

// selectGolden mirrors testdata/select_golden.json, written by testdata/gen_golden.py: the
// guide's selection code run by CPython 3.11 on synthetic splits.
type selectGolden struct {
	Cases []struct {
		Name   string `json:"name"`
		Seed   int64  `json:"seed"`
		N      int    `json:"n"`
		Splits []struct {
			Name    string `json:"name"`
			Size    int    `json:"size"`
			Salt    uint64 `json:"salt"`
			Weights []int  `json:"weights"`
			Equal   bool   `json:"equal"`
		} `json:"splits"`
		Results []struct {
			Split      string   `json:"split"`
			Original   [][2]any `json:"original_counts"`
			Allocated  [][2]any `json:"allocated"`
			Indices    []int    `json:"indices"`
			FirstNames []string `json:"first_names"`
		} `json:"results"`
	} `json:"cases"`
}

var (
	synthShapes = []string{"animal", "face_emoji", "Stationary", "mercedes-benz", "paper_clip", "vehicle"}
	synthScenes = []string{"Sand_dune", "Ocean", "Medieval_Village", "Time_square", "under-water"}
	synthDiffs  = []string{"Easy", "Medium", "Hard", "EASY", "hard"}
)

// synthNames repeats synth_names of testdata/gen_golden.py.
func synthNames(size int, salt uint64, weights []int, equal bool) []string {
	out := make([]string, 0, size)
	for i := 0; i < size; i++ {
		if equal {
			out = append(out, fmt.Sprintf("s-%d-c-%s-1.png", i, synthDiffs[i%3]))
			continue
		}
		x := (uint64(i)*2654435761 + salt*40503) % (1 << 32)
		b := int(x % 100)
		shape := synthShapes[(x>>8)%uint64(len(synthShapes))]
		scene := synthScenes[(x>>12)%uint64(len(synthScenes))]
		var d string
		switch {
		case b < weights[0]:
			d = synthDiffs[0]
			if (x>>16)%4 == 0 {
				d = synthDiffs[3]
			}
		case b < weights[1]:
			d = synthDiffs[1]
		case b < weights[2]:
			d = synthDiffs[2]
			if (x>>16)%3 == 0 {
				d = synthDiffs[4]
			}
		default:
			out = append(out, fmt.Sprintf("%s-%d-%s-%d.%d-%d.png", shape, i, scene, x%7, x%10, x%97))
			continue
		}
		out = append(out, fmt.Sprintf("%s-%d-%s-%s-%d.%d-%d.png", shape, i, scene, d, x%7, x%10, x%97))
	}
	return out
}

func TestSelectGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/select_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g selectGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s, err := NewSampler(c.Seed, c.N)
			if err != nil {
				t.Fatal(err)
			}
			for i, sp := range c.Splits {
				want := c.Results[i]
				names := synthNames(sp.Size, sp.Salt, sp.Weights, sp.Equal)
				if !slices.Equal(names[:min(3, len(names))], want.FirstNames) {
					t.Fatalf("%s: synthetic names differ from the script's: %q vs %q", sp.Name, names[:3], want.FirstNames)
				}
				sel := s.Select(names)
				if got, w := groupsString(sel, false), pairsString(want.Original); got != w {
					t.Errorf("%s original counts: got %s, want %s", sp.Name, got, w)
				}
				if got, w := groupsString(sel, true), pairsString(want.Allocated); got != w {
					t.Errorf("%s allocation: got %s, want %s", sp.Name, got, w)
				}
				if !slices.Equal(sel.Indices, want.Indices) && !(len(sel.Indices) == 0 && len(want.Indices) == 0) {
					t.Fatalf("%s indices differ: got %d rows %v..., want %d rows %v...", sp.Name,
						len(sel.Indices), sel.Indices[:min(8, len(sel.Indices))], len(want.Indices), want.Indices[:min(8, len(want.Indices))])
				}
			}
		})
	}
}

func groupsString(sel Selection, alloc bool) string {
	s := ""
	for _, g := range sel.Groups {
		v := g.Original
		if alloc {
			v = g.Allocated
		}
		s += fmt.Sprintf("%s=%d ", g.Difficulty, v)
	}
	return s
}

func pairsString(p [][2]any) string {
	s := ""
	for _, kv := range p {
		s += fmt.Sprintf("%v=%v ", kv[0], kv[1])
	}
	return s
}

func TestAllocate(t *testing.T) {
	tests := []struct {
		name   string
		keys   []Difficulty
		counts []int
		total  int
		want   []int
	}{
		{"empty", nil, nil, 1000, []int{}},
		{"zeros", []Difficulty{Easy}, []int{0}, 10, []int{0}},
		{"exact", []Difficulty{Easy, Hard}, []int{50, 50}, 10, []int{5, 5}},
		// 10/3 each: one left over, the tie goes to the largest key.
		{"tie", []Difficulty{Easy, Medium, Hard}, []int{1, 1, 1}, 10, []int{3, 4, 3}},
		{"tie with unknown", []Difficulty{Unknown, Easy, Medium}, []int{1, 1, 1}, 2, []int{1, 0, 1}},
		// The largest remainder wins before key order matters.
		{"remainder", []Difficulty{Easy, Medium, Hard}, []int{7, 2, 1}, 4, []int{3, 1, 0}},
		{"more than rows", []Difficulty{Easy, Hard}, []int{1, 3}, 100, []int{25, 75}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allocate(tt.keys, tt.counts, tt.total); !slices.Equal(got, tt.want) {
				t.Errorf("Allocate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectShort(t *testing.T) {
	s, _ := NewSampler(1, 10)
	sel := s.Select([]string{"a-1-b-Easy-1.png", "a-2-b-Hard-1.png", "a-3-b-Hard-1.png"})
	short := sel.Short()
	if len(short) != 2 || short[0].Allocated != 3 || short[0].Sampled != 1 || len(sel.Indices) != 3 {
		t.Fatalf("Short() = %+v, indices %v", short, sel.Indices)
	}
	if _, err := NewSampler(1, -1); err == nil {
		t.Fatal("negative n accepted")
	}
}
