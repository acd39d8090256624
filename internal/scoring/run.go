package scoring

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// NoTurnsLine is what score --metrics says of a database without turns.
const NoTurnsLine = "no turns yet: nothing to measure (import turns with m3eval import)"

// NoLabelsLine is what score says of a database without labels to compare.
const NoLabelsLine = "no annotations yet: nothing to score (label turns with m3eval annotate, or import labels)"

// Run is m3eval score once its flags are parsed (docs/architecture.md, "How a command is
// wired"): it checks the request, opens the database read only (a read-only user in a
// read-only directory can score too), computes the report under a progress bar of the
// bootstrap replicates, and writes it to e's output or -o. It computes before it writes, so
// that an error comes before any output file is touched. Errors of the command line are
// marked usage.Err.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	st, err := q.Check()
	if err != nil {
		return err
	}
	if q.flags != nil {
		q.BootstrapGiven = q.flags.Changed("bootstrap")
	}
	s, r, err := cmdstore.Open(ctx, e, store.Options{ReadOnly: true}, false)
	if err != nil {
		return err
	}
	defer s.Close()
	var write func(io.Writer, bool) error
	err = e.WithBar("score", progress.Unit{Name: "replicates"}, func(p progress.Func, _, _ io.Writer) error {
		q.Progress = p
		write, err = q.compute(ctx, s, r, st, store.DisplayName(e.DB))
		return err
	})
	if err != nil {
		return err
	}
	return e.Write(q.Output, string(q.Format), write)
}

// compute computes the report of an open database with the checked flags st, returning the
// function that writes it (color: the table may use the Landis–Koch colors). database is the
// database's name as the messages show it.
func (q *Request) compute(ctx context.Context, s *store.Store, r *rubric.Rubric, st Stats, database string) (func(w io.Writer, color bool) error, error) {
	line := func(text string) func(io.Writer, bool) error {
		return func(w io.Writer, _ bool) error {
			_, err := fmt.Fprintln(w, text)
			return err
		}
	}
	tables := q.Format != render.JSON && q.Format != render.CSV
	if q.Metrics {
		if len(q.Judges) > 0 {
			// The metrics read the rule judge's verdicts with their evidence (did the answer
			// take the update, list the candidates, reject the false premise), recomputed from
			// the turns; a stored judge's scores hold only the rubric's values.
			return nil, usage.Errorf("--metrics comes from the rule judge's verdicts, recomputed with their evidence; a judge's stored scores (--judge %s) hold only the rubric's values: drop --judge", q.Judges[0])
		}
		if !q.BootstrapGiven {
			q.Bootstrap = -1 // the metrics' default, 2000 replicates; --bootstrap 0 is none
		}
		if tables {
			status, err := s.Status(ctx)
			if err != nil {
				return nil, err
			}
			if status.Turns == 0 {
				return line(NoTurnsLine), nil
			}
		}
		return scoreReport(ctx, s, r, q, st)
	}
	// Whether there are labels to score, asked once for the two checks below.
	labeled := true
	if len(q.Judges) >= 2 || tables {
		var err error
		if labeled, err = hasLabels(ctx, s, q.IncludeDrafts); err != nil {
			return nil, err
		}
	}
	if len(q.Judges) >= 2 && !labeled {
		// Judges are compared through the human labels (each against the humans, and their
		// difference tested on the same labeled turns); without labels there is nothing to
		// compare them on, and one "nothing to score" line would read as success.
		return nil, fmt.Errorf("--judge %s: score compares judges through human labels, and %s has none: label turns with m3eval annotate, or import labels (m3eval import --annotator NAME FILE)",
			strings.Join(q.Judges, " --judge "), database)
	}
	if tables && !labeled {
		// Nothing to score: one line, as status says it, rather than every statistic's
		// table full of "—". JSON and CSV keep their shape for the programs that read them.
		return line(NoLabelsLine), nil
	}
	return scoreReport(ctx, s, r, q, st)
}

// hasLabels says whether any annotator has a done label (or a draft, with drafts).
func hasLabels(ctx context.Context, s *store.Store, drafts bool) (bool, error) {
	status, err := s.Status(ctx)
	if err != nil {
		return false, err
	}
	for _, a := range status.Annotators {
		if a.Done > 0 || (drafts && a.Draft > 0) {
			return true, nil
		}
	}
	return false, nil
}
