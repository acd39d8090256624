package illusion

import (
	"fmt"
	"io"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// Report is everything m3eval illusion score prints: recall per split and difficulty (or
// class, By), the most frequent wrong answers, the logs read, and what the user should know.
type Report struct {
	Rows       []Row
	Confusions []Confusion
	Warnings   []string
	Notes      []string
	Logs       []LogInfo
	Rule       Rule
	By         Kind
}

// WriteNotes writes the notes and warnings, one line each, safe for a terminal.
func (r *Report) WriteNotes(w io.Writer) {
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+textsafe.Line(n))
	}
	for _, x := range r.Warnings {
		fmt.Fprintln(w, "warning: "+textsafe.Line(x))
	}
}
