package illusion

import (
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/chars"
)

func TestParseDifficulty(t *testing.T) {
	tests := []struct {
		name string
		want Difficulty
	}{
		{"animal-100-Sand_dune-Hard-1.1-64.png", Hard},
		{"animal-1-Medieval_Village-Easy-1.5-90.png", Easy},
		{"x-1-y-MEDIUM-2.png", Medium},
		{"x-1-y-medium-2.png", Medium},
		{"x-1-y-Hard.png", Unknown}, // the token needs a '-' on both sides
		{"hard-1-y-2.png", Unknown},
		{"x-1-y-Hardly-2.png", Unknown},
		// Token order, not position, decides: "-easy-" is looked for first.
		{"x-1-hard-easy-1.png", Easy},
		{"x-1-y-Hard-medium-1.png", Medium},
		{"", Unknown},
	}
	for _, tt := range tests {
		if got := ParseDifficulty(tt.name); got != tt.want {
			t.Errorf("ParseDifficulty(%q) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestParseImageName(t *testing.T) {
	tests := []struct {
		in   string
		want ImageName
		err  string // substring of the error, "" for success
	}{
		{in: "animal-100-Sand_dune-Hard-1.1-64.png",
			want: ImageName{"animal", "100", "Sand_dune", Hard, "Hard", "1.1-64", ".png"}},
		{in: "animal-1-Medieval_Village-Easy-1.5-90.png",
			want: ImageName{"animal", "1", "Medieval_Village", Easy, "Easy", "1.5-90", ".png"}},
		{in: "face_emoji-7-Time_square-medium-2.0-1.PNG",
			want: ImageName{"face_emoji", "7", "Time_square", Medium, "medium", "2.0-1", ".PNG"}},
		// '-' inside the shape and inside the scene.
		{in: "mercedes-benz-12-under-water-HARD-1.0-3.png",
			want: ImageName{"mercedes-benz", "12", "under-water", Hard, "HARD", "1.0-3", ".png"}},
		// A scene part that looks like a difficulty but is not a whole part.
		{in: "cat-3-Hard_rock-Easy-1.jpg",
			want: ImageName{"cat", "3", "Hard_rock", Easy, "Easy", "1", ".jpg"}},
		// The scene may be a number; the difficulty is searched after the index and scene.
		{in: "cat-3-66-Easy-1",
			want: ImageName{"cat", "3", "66", Easy, "Easy", "1", ""}},
		// A difficulty word inside the shape is part of the shape.
		{in: "easy-rider-5-Ocean-Hard-1.png",
			want: ImageName{"easy-rider", "5", "Ocean", Hard, "Hard", "1", ".png"}},
		// The index is the first numeric part: a numeric shape part ends the shape.
		{in: "covid-19-4-Ocean-Easy-1.png",
			want: ImageName{"covid", "19", "4-Ocean", Easy, "Easy", "1", ".png"}},
		{in: "animal-100-Sand_dune-1.1-64.png", err: "no -easy-"},
		{in: "animal-Sand_dune-Hard.png", err: "no numeric index"},
		{in: "100-Sand_dune-Hard-x.png", err: "no numeric index"},
		{in: "animal-Sand_dune-Hard-1.png", err: "no -easy-"}, // "1" is taken for the index
		{in: "animal-1-Hard-1.png", err: "no -easy-"},
		{in: "animal-1--Hard-1.png", err: "empty scene"},
		{in: "animal-1-Ocean-Hard.png", err: "no version"},
		{in: "animal-1-Ocean-Hard-.png", err: "no version"},
		{in: "-1-Ocean-Hard-1.png", err: "empty shape"},
		{in: "", err: "no numeric index"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseImageName(tt.in)
			if tt.err != "" {
				if err == nil || !errors.Is(err, ErrImageName) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseImageName(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseImageName(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseImageName(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.in {
				t.Fatalf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

// FuzzParseImageName checks the parser's invariants on arbitrary input: it never panics, a
// parsed name reassembles to the input, its fields have their fixed forms, and the parsed
// difficulty agrees with the guide's ParseDifficulty whenever the name holds only one
// difficulty token. Seeds are in testdata/fuzz/FuzzParseImageName.
func FuzzParseImageName(f *testing.F) {
	for _, s := range []string{"animal-100-Sand_dune-Hard-1.1-64.png", "a-1-b-easy-2", "x--1-y-Hard-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseImageName(s)
		if err != nil {
			if !errors.Is(err, ErrImageName) {
				t.Fatalf("error does not wrap ErrImageName: %v", err)
			}
			return
		}
		if n.String() != s {
			t.Fatalf("String() = %q, want %q", n.String(), s)
		}
		if n.Shape == "" || n.Scene == "" || n.Version == "" || !chars.IsDigits(n.Index) {
			t.Fatalf("bad fields %+v", n)
		}
		switch n.Difficulty {
		case Easy, Medium, Hard:
		default:
			t.Fatalf("difficulty %q", n.Difficulty)
		}
		lower := strings.ToLower(s)
		tokens := 0
		for _, tok := range []string{"-easy-", "-medium-", "-hard-"} {
			tokens += strings.Count(lower, tok)
		}
		if tokens == 1 && ParseDifficulty(s) != n.Difficulty {
			t.Fatalf("ParseDifficulty = %s, ParseImageName difficulty = %s", ParseDifficulty(s), n.Difficulty)
		}
	})
}
