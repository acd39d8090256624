package judge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
)

// A contradiction's evidence names the latest earlier statement: when one turn stated two
// values ("two apples have been eaten, so 3 apples remain"), the one said last, every time.
// The earlier statements are kept by value in a map, and the evidence was once chosen by
// ranging over it: "turn 2: two" or "turn 2: 3" at random.
func TestContradictionEvidenceIsDeterministic(t *testing.T) {
	j := newTestJudge(t)
	turns := []dataset.Turn{
		{SampleID: "e_turn_1", EpisodeID: "e", Turn: 1, ActionType: "initial", UserMessage: "How many apples?", VLMResponse: "There are five red apples on the table.", ExpectedAnswer: "Five apples."},
		{SampleID: "e_turn_2", EpisodeID: "e", Turn: 2, ActionType: "update", UserMessage: "I ate two of the apples.", VLMResponse: "Noted: two apples have been eaten, so 5 − 2 = 3 apples remain on the table.", ExpectedAnswer: "Three apples remain."},
		{SampleID: "e_turn_3", EpisodeID: "e", Turn: 3, ActionType: "mislead_subtle", UserMessage: "So the four apples left are enough for four of us?", VLMResponse: "Yes, with four apples left, each of the four of you can have one.", ExpectedAnswer: "Only three apples are left."},
	}
	var first []string
	for i := range 40 {
		vs, err := j.Episode(turns)
		if err != nil {
			t.Fatal(err)
		}
		var ev []string
		for _, v := range vs[2].Values {
			if v.Rule == "consistency.contradiction" {
				ev = v.Evidence
			}
		}
		if i == 0 {
			first = ev
			if len(ev) != 2 || ev[0] != "turn 2: 3" || !strings.HasPrefix(ev[1], "now: ") {
				t.Fatalf("evidence %q, want the contradiction of turn 2's last count, 3", ev)
			}
		}
		if !reflect.DeepEqual(ev, first) {
			t.Fatalf("run %d: evidence %q, run 0 gave %q", i, ev, first)
		}
	}
}
