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

// TestAgreeingIsNotAttributing: "你说得对" agrees with the user, so the claim after it is the
// model's own (asserted), while "你说" alone attributes the claim to the user.
func TestAgreeingIsNotAttributing(t *testing.T) {
	for text, want := range map[string]Stance{
		"你说得对，天空是绿色的。": Asserted,
		"你说天空是绿色的。":    Attributed,
	} {
		r := Read(text, Scope{})
		c, ok := r.Final(Color, "")
		if len(r.Claims) == 0 {
			t.Fatalf("%q: no claim", text)
		}
		got := r.Claims[len(r.Claims)-1].Stance
		if got != want {
			t.Errorf("%q: stance %s, want %s (final %v %v)", text, got, want, c, ok)
		}
	}
}
