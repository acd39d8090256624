package rubric

import (
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// CheckCommand is m3eval rubric check's options: the rubric file to check ("-": standard
// input). A lab's rubric is an input like its data, so it can be checked before an import.
type CheckCommand struct {
	File string
}

// Run is m3eval rubric check: it reads the file as every command reads --rubric (Load) and
// writes a summary of its fields to stdout, or returns the first problem, with its line and
// field. It takes the two streams it uses rather than a cmdio.IO, which imports this
// package; and no context: it opens no database and waits for nothing.
func (q CheckCommand) Run(stdin io.Reader, stdout io.Writer) error {
	r, err := Load(q.File, stdin, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: rubric %s, %s, version %s\n", textsafe.Line(q.File), textsafe.Line(r.Name), plural.N(len(r.Fields), "field"), r.Version)
	for _, f := range r.Fields {
		what := string(f.Kind)
		switch f.Kind {
		case KindScale:
			what = fmt.Sprintf("scale %d–%d", f.Min, f.Max)
		case KindChoice:
			var vs []string
			for _, c := range f.Choices {
				vs = append(vs, c.Value)
			}
			what = "choice " + strings.Join(vs, "/")
		}
		req := "optional"
		if f.Required {
			req = "required"
		}
		extra := ""
		if len(f.Fixed) > 0 {
			extra = fmt.Sprintf(", %d NA rules", len(f.Fixed))
		}
		if _, err := fmt.Fprintf(stdout, "  %-24s %s, %s%s\n", textsafe.Line(f.Name), what, req, extra); err != nil {
			return err
		}
	}
	return nil
}
