package simulate

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A next task does not contradict an update made earlier in the conversation (#36): the
// apples scene with an update of the cup's color, which its second task asks about; the
// next-task turn and the second task's direct question expect the cup as it is now.
func TestNextTaskKeepsEarlierUpdate(t *testing.T) {
	sc := *demoScene(t, "apples_en")
	sc.Updates = []UpdateDef{{Entity: "cup_1", Attribute: "color", NewValue: "yellow"}}
	r := newRules(&sc, 12, rand.New(rand.NewPCG(42, 0)))
	var updated bool
	var seen []Step
	for {
		s, ok := r.next("I see a plate, apples and a cup.")
		if !ok {
			break
		}
		seen = append(seen, s)
		if s.Action == ActUpdate && s.Meta.Entity == "cup" {
			updated = true
		}
		if r.ti == 1 && (s.Action == ActNextTask || s.Phase == PhaseReasoningTest) {
			if !updated {
				t.Fatalf("the second task began before the update: %+v", seen)
			}
			// The cup as it is now: yellow, or what a later update of this task made it.
			now := r.k.cur[r.k.index("cup_1")]["color"]
			if !strings.Contains(s.Expected, now) || strings.Contains(s.Expected, "cup is green") {
				t.Errorf("%s turn expects %q, when the cup is %s", s.Action, s.Expected, now)
			}
		}
	}
	if !updated {
		t.Fatal("no update of the cup")
	}
	// The second task's evidence takes the updated value: "a yellow cup" activates it.
	if st := r.k.evidence[1]; st.ev.ID != "cup_green" || st.value != "yellow" {
		t.Errorf("second task's cup evidence: %+v", st)
	}
}

// Random updates leave alone what a later task rests on (the apples scene's second task asks
// the plate's and the cup's colors).
func TestRandomUpdatesSpareLaterTasks(t *testing.T) {
	sc := demoScene(t, "apples_en")
	for seed := range uint64(20) {
		r := newRules(sc, 12, rand.New(rand.NewPCG(seed, 0)))
		for {
			s, ok := r.next("I see a plate, apples and a cup.")
			if !ok {
				break
			}
			if s.Action == ActUpdate && r.ti == 0 && (s.Meta.Entity == "plate" || s.Meta.Entity == "cup") && s.Meta.Attribute == "color" {
				t.Errorf("seed %d: the first task updates %s's color, which the second task asks", seed, s.Meta.Entity)
			}
		}
	}
}
