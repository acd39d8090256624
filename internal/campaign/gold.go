package campaign

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// GoldCount is how many gold turns a queue of load sampled turns gets so that gold makes up
// rate of the whole queue: load·rate/(1−rate), rounded half up.
func GoldCount(load int, rate float64) int {
	if rate <= 0 || load <= 0 {
		return 0
	}
	return int(math.Floor(float64(load)*rate/(1-rate) + 0.5))
}

// GoldRequest asks for gold turns in each annotator's queue.
type GoldRequest struct {
	// Loads are the annotators' numbers of sampled turns.
	Loads []int
	// Gold are the gold turns (ids, in queue order).
	Gold []int64
	Rate float64
	// Own lists, per annotator, turns already in the queue: a gold turn is not one of them.
	Own [][]int64
	// Keep lists, per annotator, gold turns already given (kept first, so a re-run does not
	// move them).
	Keep [][]int64
	Seed uint64
}

// PickGold chooses each annotator's gold turns: GoldCount(load, rate) of them (at most the
// gold turns there are), the kept ones first, the rest drawn at random with the seed. The
// result lists each annotator's gold turns in the order of Gold.
func PickGold(r GoldRequest) ([][]int64, error) {
	if r.Rate < 0 || r.Rate >= 1 {
		return nil, fmt.Errorf("%w: gold rate %g must be at least 0 and below 1", ErrAssign, r.Rate)
	}
	if r.Rate > 0 && len(r.Gold) == 0 {
		return nil, fmt.Errorf("%w: a gold rate without gold turns (give --gold FILE)", ErrAssign)
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0x676f6c64))
	out := make([][]int64, len(r.Loads))
	for a, load := range r.Loads {
		want := GoldCount(load, r.Rate)
		taken := map[int64]bool{}
		var own []int64
		if a < len(r.Own) {
			own = r.Own[a]
		}
		var pick []int64
		if a < len(r.Keep) {
			for _, g := range r.Keep[a] {
				if len(pick) < want && slices.Contains(r.Gold, g) && !taken[g] {
					pick = append(pick, g)
					taken[g] = true
				}
			}
		}
		var free []int64
		for _, g := range r.Gold {
			if !taken[g] && !slices.Contains(own, g) {
				free = append(free, g)
			}
		}
		rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		for _, g := range free {
			if len(pick) >= want {
				break
			}
			pick = append(pick, g)
		}
		pos := func(g int64) int { return slices.Index(r.Gold, g) }
		slices.SortFunc(pick, func(x, y int64) int { return pos(x) - pos(y) })
		out[a] = pick
	}
	return out, nil
}
