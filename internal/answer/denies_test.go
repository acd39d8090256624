package answer

import "testing"

// TestDenies: Denies finds a negation cue as a whole word (English) or character run
// (Chinese), and nothing in a text without one.
func TestDenies(t *testing.T) {
	rd := NewReader(Scope{})
	for text, want := range map[string]bool{
		"The door isn't closed.":  true,
		"The door is not open.":   true,
		"门没有关。":                   true,
		"The door is closed.":     false,
		"Nothing but a notebook.": true,
		"A notebook on the desk.": false,
		"门是关着的。":                  false,
	} {
		if got := rd.Denies(text); got != want {
			t.Errorf("Denies(%q) = %v, want %v", text, got, want)
		}
	}
}
