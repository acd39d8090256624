package judgerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// ErrUnknownJudge marks the error of ExplainStored when --name names no judge of the
// database; the command answers it with its unknown-name message (the names it knows).
var ErrUnknownJudge = errors.New("no such judge")

// ExplainStored is judge --explain SAMPLE_ID --name NAME for a name other than "rules": a
// model judge shows its stored answer; a rule judge stored under another name explains the
// rules (rules, recomputed as for --name rules); a judge with nothing to explain is an
// error, and a name the database does not hold is ErrUnknownJudge. It returns the function
// that writes the explanation; database is the database's name as the messages show it.
func (o *Request) ExplainStored(ctx context.Context, s *store.Store, rb *rubric.Rubric, database string, rules func(io.Writer) error) (func(io.Writer) error, error) {
	judges, err := s.Judges(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(judges, o.Name) {
		return nil, fmt.Errorf("--name %s: %w", o.Name, ErrUnknownJudge)
	}
	model, err := s.IsModelJudge(ctx, o.Name)
	if err != nil {
		return nil, err
	}
	if model {
		n, err := s.ModelJudgeNote(ctx, o.Name, o.Explain)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return WriteModelNote(w, n, rb, o.Format) }, nil
	}
	versions, err := s.JudgeRuleVersions(ctx, o.Name)
	if err != nil {
		return nil, err
	}
	ruled := false
	for v, n := range versions {
		ruled = ruled || (v != "" && n > 0)
	}
	switch {
	case len(versions) == 0:
		return nil, fmt.Errorf("--name %s: judge %s has no scores in %s: nothing to explain", o.Name, o.Name, database)
	case !ruled:
		return nil, fmt.Errorf("--name %s: judge %s's scores were imported (import-scores), not judged here: nothing to explain", o.Name, o.Name)
	}
	return rules, nil
}
