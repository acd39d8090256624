package dataset

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
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
	escaped := tr
	escaped.Meta = json.RawMessage(`{"seed": 7, "tags": ["\u0078"]}`)
	if hex.EncodeToString(escaped.Hash()) != want {
		t.Fatal("the meta strings' escapes changed the hash")
	}
	if hex.EncodeToString(escaped.LegacyHash()) == want || hex.EncodeToString(tr.LegacyHash()) != want {
		t.Fatal("LegacyHash is not the hash of the meta's escapes as written")
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

// compactOrRaw is what Hash appended for meta before appendCompact: encoding/json's Compact,
// or the bytes as they are when Compact rejects them.
func compactOrRaw(meta []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, meta) != nil {
		return meta
	}
	return buf.Bytes()
}

// appendCompactCases are metas of every kind Hash may meet: valid and pretty-printed, with
// escapes that must stay as written, and invalid ones that Compact rejects.
var appendCompactCases = []string{
	``, ` `, `null`, ` null `, `{}`, "{\n}", `{"a":1}`, `{"a": 1, "b": [1, 2, {"c": "d e"}]}`,
	"{\n  \"language\": \"zh\",\n  \"phase\": \"memory_build\"\n}\n", "\t{\"a\":\r\n1}\t",
	`{"s": "\u00e9\n\"\\ \u2028 <&>"}`, `{"n": 1.50E+3, "m": -0.0, "big": 123456789012345678901234567890}`,
	`{"a": 1, "a": 2}`, "{\"bad\": \"\xff\xfe\"}", `{"lone": "\ud800"}`, `{"a": }`, `{"a": 1`, `{"a": 1}}`,
	`{"a": 1} {"b": 2}`, `[1, 2,]`, `{"a": NaN}`, "{\"ctl\": \"a\tb\"}", `"just a string"`, ` 42 `, `{"a":1}x`,
	`{"deep": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
}

// TestAppendCompactMatchesEncodingJSON holds appendCompact to what Hash did before it, byte
// for byte: a different byte would change the stored content hashes.
func TestAppendCompactMatchesEncodingJSON(t *testing.T) {
	for _, c := range appendCompactCases {
		if got, want := appendCompact([]byte("prefix"), []byte(c)), append([]byte("prefix"), compactOrRaw([]byte(c))...); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", c, got, want)
		}
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, c := range appendCompactCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		if got, want := appendCompact(nil, meta), compactOrRaw(meta); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", meta, got, want)
		}
	})
}
