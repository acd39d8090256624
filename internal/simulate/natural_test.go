package simulate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// naturalItem is one labeled natural answer (testdata/natural/README.md): an answer given
// to a scene at a turn whose state has the listed updates applied, whether it is correct
// for that state, which object attributes it gets wrong, and which required evidence of the
// task it truly asserts (the only evidence a redundancy or follow-up turn may quote).
type naturalItem struct {
	ID    string `json:"id"`
	Scene string `json:"scene"`
	Task  int    `json:"task"`
	State []struct {
		Entity, Attribute, Value string
	} `json:"state"`
	Answer   string   `json:"answer"`
	Correct  bool     `json:"correct"`
	Wrong    []string `json:"wrong"`
	Evidence []string `json:"evidence"`
}

// naturalFigures are the simulator's figures on one set of natural answers.
type naturalFigures struct {
	correct, wrong int
	// falseCorrections are correct answers the simulator would correct; misses are wrong
	// answers it corrects on none of the labeled wrong attributes.
	falseCorrections, misses []string
	// unasserted are answers that activate evidence they do not assert: a later redundancy
	// turn ("You said …") or follow-up would quote the model saying what it did not.
	unasserted []string
}

func (f naturalFigures) String() string {
	return fmt.Sprintf("false corrections %d/%d (%.1f%%), misses %d/%d (%.1f%%), answers activating unasserted evidence %d/%d",
		len(f.falseCorrections), f.correct, 100*float64(len(f.falseCorrections))/float64(f.correct),
		len(f.misses), f.wrong, 100*float64(len(f.misses))/float64(f.wrong),
		len(f.unasserted), f.correct+f.wrong)
}

// naturalScenes are the demo scenes and the test's own (testdata/natural/scenes.jsonl).
func naturalScenes(t testing.TB) map[string]*Scene {
	t.Helper()
	out := map[string]*Scene{}
	for _, f := range []string{demoScenes, filepath.Join("testdata", "natural", "scenes.jsonl")} {
		scenes, err := ReadScenesFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range scenes {
			out[scenes[i].ID] = &scenes[i]
		}
	}
	return out
}

func readNatural(t testing.TB, name string) []naturalItem {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "natural", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var items []naturalItem
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var it naturalItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return items
}

// naturalKnowledge is the simulator's knowledge of the item's scene at the item's turn: its
// task's evidence tracked, its updates applied.
func naturalKnowledge(t testing.TB, scenes map[string]*Scene, it naturalItem) *knowledge {
	t.Helper()
	sc := scenes[it.Scene]
	if sc == nil {
		t.Fatalf("%s: no scene %q", it.ID, it.Scene)
	}
	k := newKnowledge(sc)
	if it.Task > 0 {
		k.setTask(sc.Tasks()[it.Task])
	}
	for _, s := range it.State {
		oi := k.index(s.Entity)
		if oi < 0 {
			t.Fatalf("%s: state names no object %q", it.ID, s.Entity)
		}
		k.setValue(oi, s.Attribute, s.Value)
	}
	return k
}

// measureNatural reads each answer of the set as the simulator does after a turn.
func measureNatural(t testing.TB, name string) naturalFigures {
	t.Helper()
	scenes := naturalScenes(t)
	var f naturalFigures
	for _, it := range readNatural(t, name) {
		k := naturalKnowledge(t, scenes, it)
		ob := k.observe(it.Answer, 1)
		var said []string
		for _, e := range ob.errors {
			said = append(said, k.objs[e.obj].ID+"."+e.attr+"="+e.said)
		}
		if it.Correct {
			f.correct++
			if len(ob.errors) > 0 {
				f.falseCorrections = append(f.falseCorrections, fmt.Sprintf("%s %q corrected as %v", it.ID, it.Answer, said))
			}
		} else {
			f.wrong++
			caught := slices.ContainsFunc(ob.errors, func(e wrongValue) bool {
				return slices.Contains(it.Wrong, k.objs[e.obj].ID+"."+e.attr)
			})
			if !caught {
				f.misses = append(f.misses, fmt.Sprintf("%s %q missed (wrong %v; corrected %v)", it.ID, it.Answer, it.Wrong, said))
			}
		}
		for _, ei := range ob.activated {
			if id := k.evidence[ei].ev.ID; !slices.Contains(it.Evidence, id) {
				f.unasserted = append(f.unasserted, fmt.Sprintf("%s %q activated %s", it.ID, it.Answer, id))
			}
		}
	}
	return f
}

// TestNaturalAnswers prints the simulator's figures on the development and held-out natural
// answers (go test -run TestNaturalAnswers -v ./internal/simulate/), each misread answer
// with them.
func TestNaturalAnswers(t *testing.T) {
	for _, set := range []string{"dev.jsonl", "heldout.jsonl"} {
		f := measureNatural(t, set)
		t.Logf("%s: %s", set, f)
		// The held-out answers' misreadings are listed only on request: rules are developed
		// on the development set, and the held-out set only measures them.
		if set == "dev.jsonl" || os.Getenv("M3EVAL_SHOW_HELDOUT") != "" {
			for _, l := range slices.Concat(f.falseCorrections, f.misses, f.unasserted) {
				t.Logf("  %s", l)
			}
		}
		// Issue #36's acceptance, on the held-out answers: at most 3% of the correct answers
		// corrected, at most 5% of the wrong ones missed, no evidence the model did not
		// assert (a redundancy or follow-up would quote it).
		if set == "heldout.jsonl" {
			if float64(len(f.falseCorrections)) > 0.03*float64(f.correct) || float64(len(f.misses)) > 0.05*float64(f.wrong) || len(f.unasserted) > 0 {
				t.Errorf("held-out natural answers below issue 36's acceptance: %s (M3EVAL_SHOW_HELDOUT=1 lists them)", f)
			}
		}
	}
}
