package dataset

import (
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestHashIsStable pins the content hash: databases store it, and a re-import compares
// against it, so a change of the hash would make every stored turn look changed. The value
// was computed by the first implementation (a streaming SHA-256 over the same layout).
func TestHashIsStable(t *testing.T) {
	tr := Turn{SampleID: "ep1_turn_2", EpisodeID: "ep1", Turn: 2, ActionType: "mislead", TaskType: "counting",
		UserMessage: "图里有几只猫？", VLMResponse: "Three.", ExpectedAnswer: "2", Images: []string{"a.png", "b.png"},
		Model: "m", Meta: json.RawMessage(`{"seed": 7, "tags": ["x"]}`)}
	const want = "1c22d71e7210173e4b2be2f6a75ff53e"
	if got := hex.EncodeToString(tr.Hash()); got != want {
		t.Fatalf("hash %s, want %s", got, want)
	}
	pretty := tr
	pretty.Meta = json.RawMessage("{\n  \"seed\": 7,\n  \"tags\": [\"x\"]\n}")
	if hex.EncodeToString(pretty.Hash()) != want {
		t.Fatal("the meta object's layout changed the hash")
	}
	for name, change := range map[string]func(*Turn){
		"turn":   func(t *Turn) { t.Turn = 3 },
		"images": func(t *Turn) { t.Images = t.Images[:1] },
		"meta":   func(t *Turn) { t.Meta = json.RawMessage(`{"seed": 8, "tags": ["x"]}`) },
		// The length prefixes keep field boundaries: moving a character across them counts.
		"boundary": func(t *Turn) { t.UserMessage += "T"; t.VLMResponse = "hree." },
	} {
		changed := tr
		changed.Images = append([]string(nil), tr.Images...)
		change(&changed)
		if hex.EncodeToString(changed.Hash()) == want {
			t.Errorf("changing %s kept the hash", name)
		}
	}
}
