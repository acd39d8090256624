package campaign

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// GoldCount returns how many gold turns a queue of load sampled turns gets, so that gold
// makes up rate of the whole queue. It is load·rate/(1−rate), rounded half up.
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

// PickGold chooses each annotator's gold turns. Each gets GoldCount(load, rate) of them (at
// most the gold turns there are), the kept ones first, the rest drawn at random with the
// seed. The
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
		var own []int64
		if a < len(r.Own) {
			own = r.Own[a]
		}
		var pool []int64
		for _, g := range r.Gold {
			if !slices.Contains(own, g) {
				pool = append(pool, g)
			}
		}
		out[a] = pick(pool, GoldCount(load, r.Rate), at(r.Keep, a), rng)
	}
	return out, nil
}

// RepeatRequest asks for a share of each annotator's turns to be shown to them again.
type RepeatRequest struct {
	// Own lists each annotator's sampled turns, in queue order.
	Own  [][]int64
	Rate float64
	// Keep lists turns already repeated (kept first, so a re-run does not move them).
	Keep [][]int64
	Seed uint64
}

// PickRepeats chooses round(rate × load) of each annotator's own turns to show again. The
// kept ones come first, the rest are drawn at random with the seed, and each list is in
// queue order.
func PickRepeats(r RepeatRequest) ([][]int64, error) {
	if r.Rate < 0 || r.Rate > 1 {
		return nil, fmt.Errorf("%w: repeat share %g must be between 0 and 1", ErrAssign, r.Rate)
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0x726570656174))
	out := make([][]int64, len(r.Own))
	for a, own := range r.Own {
		out[a] = pick(own, int(math.Floor(float64(len(own))*r.Rate+0.5)), at(r.Keep, a), rng)
	}
	return out, nil
}

func at(lists [][]int64, i int) []int64 {
	if i < len(lists) {
		return lists[i]
	}
	return nil
}

// pick takes want members of pool (at most all): those of keep first, the rest at random;
// the result is in pool order.
func pick(pool []int64, want int, keep []int64, rng *rand.Rand) []int64 {
	taken := map[int64]bool{}
	var out []int64
	for _, k := range keep {
		if len(out) < want && slices.Contains(pool, k) && !taken[k] {
			out = append(out, k)
			taken[k] = true
		}
	}
	var free []int64
	for _, p := range pool {
		if !taken[p] {
			free = append(free, p)
		}
	}
	rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	for _, p := range free {
		if len(out) >= want {
			break
		}
		out = append(out, p)
	}
	pos := map[int64]int{}
	for i, p := range pool {
		pos[p] = i
	}
	slices.SortFunc(out, func(x, y int64) int { return pos[x] - pos[y] })
	return out
}
