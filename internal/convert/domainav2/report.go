package domainav2

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/m3bench/m3eval/internal/cmdio"
)

// WriteText writes the statistics table (one column per source, plus "all" when there are
// several), then the problems and warnings, for a person reading a terminal.
func (r *Report) WriteText(w io.Writer) error {
	cols := r.Sources
	if len(cols) > 1 {
		total := r.Total
		cols = append(cols[:len(cols):len(cols)], &total)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(*Stats) int) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, c := range cols {
			fmt.Fprintf(tw, "%d\t", f(c))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "%s\t", "source")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.Source)
	}
	fmt.Fprintln(tw)
	row("samples", func(s *Stats) int { return s.Samples })
	row("sessions", func(s *Stats) int { return s.Sessions })
	row("dialogue turns", func(s *Stats) int { return s.Turns })
	row("image attachments", func(s *Stats) int { return s.ImageAttachments })
	// Memory Recall / Correctness: every gold point; Update Handling: the updates.
	row("memory points", func(s *Stats) int { return s.MemoryPoints })
	for _, t := range MemoryTypes {
		row("  "+t, func(s *Stats) int { return s.MemoryByType[t] })
	}
	for _, src := range MemorySources {
		row("  "+src, func(s *Stats) int { return s.MemoryBySource[src] })
	}
	row("updates (is_update)", func(s *Stats) int { return s.Updates })
	// VisTrajQA has no interference annotation; the row says so rather than leave it out.
	row("interference", func(*Stats) int { return 0 })
	row("checkpoints", func(s *Stats) int { return s.Checkpoints })
	// QA Accuracy, by type.
	row("questions", func(s *Stats) int { return s.Questions })
	for _, t := range QuestionTypes {
		row("  "+t.Abbrev+" "+t.Name, func(s *Stats) int { return s.QuestionsByType[t.Abbrev] })
	}
	// Evidence Coverage.
	row("evidence: memory", func(s *Stats) int { return s.EvidenceMemory })
	row("evidence: image", func(s *Stats) int { return s.EvidenceImage })
	if err := tw.Flush(); err != nil {
		return err
	}
	listed := func(kind string, n int, ps []Problem) {
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%d %s:\n", n, kind)
		for _, p := range ps {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if n > len(ps) {
			fmt.Fprintf(w, "  ... and %d more\n", n-len(ps))
		}
	}
	listed("problems", r.ProblemCount, r.Problems)
	listed("warnings", r.WarningCount, r.Warnings)
	_, err := fmt.Fprintf(w, "\n%s: %d samples, %d problems, %d warnings\n", r.Dir, r.Samples, r.ProblemCount, r.WarningCount)
	return err
}

// ValidateRequest is m3eval convert validate's options: the directory to check, its one
// argument. The command parses its command line into one and calls Run; so do the tests.
type ValidateRequest struct {
	Dir string
}

// Run is m3eval convert validate: it validates the directory as the eval framework loads
// it, writes the report with its statistics to e's standard output, and returns Report.Err
// (nil for a valid directory).
func (q *ValidateRequest) Run(_ context.Context, e *cmdio.IO) error {
	rep, err := Validate(q.Dir)
	if err != nil {
		return err
	}
	if err := rep.WriteText(e.Stdout()); err != nil {
		return err
	}
	return rep.Err()
}
