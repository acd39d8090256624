package judge

import "testing"

// TestLatestFactIgnoresMapOrder pins the evidence of a contradiction to the input: the
// explanation once printed "turn 4: 3" or "turn 4: two" at random, from map order.
func TestLatestFactIgnoresMapOrder(t *testing.T) {
	vals := map[string]fact{
		"3":     {value: "3", spelling: "3", turn: 4},
		"three": {value: "3", spelling: "two", turn: 4},
		"2":     {value: "2", spelling: "2", turn: 2},
		"x":     {value: "x", spelling: "a", turn: 3},
	}
	for i := 0; i < 200; i++ {
		if got := latestFact(vals); got.spelling != "3" || got.turn != 4 {
			t.Fatalf("trial %d: latestFact = %+v, want turn 4 spelled 3", i, got)
		}
	}
	if got := latestFact(nil); got != (fact{}) {
		t.Fatalf("latestFact(nil) = %+v, want the zero fact", got)
	}
}
