package estimate

import (
	"slices"
	"strings"
)

// turnTable holds what Compute reads of every turn and field, compactly: at a million turns
// (five million turn × field pairs) a map of string keys to one allocated turn each held
// over a gigabyte. Here a pair is two int32 in the map and 40 bytes in one slice, and the
// sample ids, models, groups and fields are each stored once.
type turnTable struct {
	samples  []string
	sampleAt map[string]int32
	strs     []string // models, groups and fields
	strAt    map[string]int32
	at       map[pairKey]int32 // index in turns
	turns    []compactTurn
	keys     []pairKey // in the order of turns
}

// pairKey names one turn (index in samples) of one field (index in strs).
type pairKey struct{ sample, field int32 }

// compactTurn is turn with its strings as indexes in turnTable.strs.
type compactTurn struct {
	model, group, episode, humanN int32
	judge, humanSum               float64
	scored                        bool
}

func newTurnTable() *turnTable {
	return &turnTable{sampleAt: map[string]int32{}, strAt: map[string]int32{}, at: map[pairKey]int32{}}
}

func (tt *turnTable) str(s string) int32 {
	i, ok := tt.strAt[s]
	if !ok {
		i = int32(len(tt.strs))
		tt.strs = append(tt.strs, s)
		tt.strAt[s] = i
	}
	return i
}

// get returns the turn of sample and field, adding it with model, group and episode when
// it is new.
func (tt *turnTable) get(sample, field, model, group string, episode int) *compactTurn {
	s, ok := tt.sampleAt[sample]
	if !ok {
		s = int32(len(tt.samples))
		tt.samples = append(tt.samples, sample)
		tt.sampleAt[sample] = s
	}
	k := pairKey{s, tt.str(field)}
	i, ok := tt.at[k]
	if !ok {
		i = int32(len(tt.turns))
		tt.turns = append(tt.turns, compactTurn{model: tt.str(model), group: tt.str(group), episode: int32(episode)})
		tt.keys = append(tt.keys, k)
		tt.at[k] = i
	}
	return &tt.turns[i]
}

// sorted returns the indexes of the turns by field name, then sample id: a fixed order, so
// that sums, and so the last digits, do not depend on the order of reading.
func (tt *turnTable) sorted() []int32 {
	order := make([]int32, len(tt.turns))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ka, kb := tt.keys[a], tt.keys[b]
		if c := strings.Compare(tt.strs[ka.field], tt.strs[kb.field]); c != 0 {
			return c
		}
		return strings.Compare(tt.samples[ka.sample], tt.samples[kb.sample])
	})
	return order
}

// tableOf is the table of a map of turns (the tests build maps).
func tableOf(turns map[turnKey]*turn) *turnTable {
	tt := newTurnTable()
	for k, t := range turns {
		c := tt.get(k.sample, k.field, t.model, t.group, t.episode)
		c.judge, c.scored, c.humanSum, c.humanN = t.judge, t.scored, t.humanSum, int32(t.humanN)
	}
	return tt
}
