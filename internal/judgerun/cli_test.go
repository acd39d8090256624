package judgerun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/m3bench/m3eval/internal/render"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// These helpers import data through the importer and run m3eval judge's and score's engines
// (their flags, judgerun.Request.Run, scoring.Score) the way the commands do, without the
// commands: the checks of the rule judge live here (moved from cmd/m3eval/judge_test.go).

// errFlag marks an error of flag parsing: the command reports it as a usage error too.
var errFlag = errors.New("flag")

// isUsage says whether the command would exit 2 for err.
func isUsage(err error) bool { return errors.Is(err, usage.Err) || errors.Is(err, errFlag) }

func defaultRubric(t testing.TB) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Load("", nil, annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openDB opens (or creates) the database with the guide's rubric recorded, as the commands
// that write do.
func openDB(t testing.TB, path string, readOnly bool) (*store.Store, *rubric.Rubric) {
	t.Helper()
	r := defaultRubric(t)
	s, err := store.Open(context.Background(), path, store.Options{ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	if !readOnly {
		if err := s.RememberRubric(context.Background(), r.Version, r.Source); err != nil {
			t.Fatal(err)
		}
	}
	return s, r
}

// importFiles is m3eval import [--annotator NAME] FILE... (no files: --demo).
func importFiles(t testing.TB, db, annotator string, files ...string) {
	t.Helper()
	s, r := openDB(t, db, false)
	defer s.Close()
	o := importer.Options{Rubric: r, Annotator: annotator, DB: db, Out: io.Discard}
	if err := importer.New(s, o).Run(context.Background(), files, len(files) == 0); err != nil {
		t.Fatalf("import %v: %v", files, err)
	}
}

// runJudge parses args as m3eval judge's flags and runs the rule judge, or with --endpoint
// the model judge (Request.PrepareModel and RunModel); --explain SAMPLE --name NAME of a
// model judge shows its stored note (WriteModelNote), as the command does. It returns the
// output and the error.
func runJudge(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	q := &judgerun.Request{}
	fs := pflag.NewFlagSet("judge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", errFlag, err)
	}
	filter, err := q.Check()
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	rb := defaultRubric(t)
	var out bytes.Buffer
	if q.Model.Endpoint != "" {
		actions, err := rubric.ParseActions(annotations.Actions)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := q.PrepareModel(rb, actions)
		if err != nil {
			return "", err
		}
		s, _ := openDB(t, db, false)
		defer s.Close()
		err = q.RunModel(ctx, s, pm, filter, nil, &out)
		return out.String(), err
	}
	j, err := judgerun.NewJudge(rb, q.Rules)
	if err != nil {
		return "", err
	}
	s, _ := openDB(t, db, q.Explain != "")
	defer s.Close()
	if q.Explain != "" && q.Name != "rules" {
		if model, err := s.IsModelJudge(ctx, q.Name); err != nil {
			t.Fatal(err)
		} else if model {
			n, err := s.ModelJudgeNote(ctx, q.Name, q.Explain)
			if err != nil {
				return "", err
			}
			err = judgerun.WriteModelNote(&out, n, rb, render.Format(q.Format))
			return out.String(), err
		}
	}
	err = q.Run(ctx, s, rb, j, filter, &out)
	return out.String(), err
}

func mustJudge(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runJudge(t, db, args...)
	if err != nil {
		t.Fatalf("judge %v: %v", args, err)
	}
	return out
}

// runScore parses args as m3eval score's flags and runs scoring.Score on the database,
// without the interval cache.
func runScore(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	q := &scoring.Request{}
	fs := pflag.NewFlagSet("score", pflag.ContinueOnError)
	q.AddFlags(fs)
	if err := fs.Parse(append(args, "--no-cache")); err != nil {
		t.Fatal(err)
	}
	st, err := q.Check()
	if err != nil {
		t.Fatal(err)
	}
	if q.Metrics && !fs.Changed("bootstrap") {
		q.Bootstrap = -1 // the metrics' default (2000 replicates), as the command sets it
	}
	s, rb := openDB(t, db, true)
	defer s.Close()
	write, err := scoring.Score(context.Background(), s, rb, q, st)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = write(&out, false)
	return out.String(), err
}

func mustScore(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runScore(t, db, args...)
	if err != nil {
		t.Fatalf("score %v: %v", args, err)
	}
	return out
}

func unmarshal(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
