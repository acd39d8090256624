package workflow_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// These helpers call the commands' own Run (issue #42): a request's flags parsed by its
// AddFlags, the database opened as its StoreOptions say, then Run and its writer. Nothing of
// the commands' wiring is copied here: Run checks the request itself.

// The shared helpers, written once in internal/testkit.
var (
	errFlag       = testkit.ErrFlag
	isUsage       = testkit.IsUsage
	defaultRubric = testkit.DefaultRubric
	openDB        = testkit.OpenDB
	openDBWith    = testkit.OpenDBWith
	importFiles   = testkit.ImportFiles
)

// request is a campaign command's request (workflow.SampleRequest, …).
type request interface {
	AddFlags(fs *pflag.FlagSet)
	StoreOptions() store.Options
	Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error)
}

// runCommand parses args into q's flags and runs q on the database: what it shows followed
// by its notes for standard error (Notes, if it has them), and the error.
func runCommand(t testing.TB, db string, q request, args ...string) (string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("m3eval", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", errFlag, err)
	}
	s, r := openDB(t, db, q.StoreOptions())
	defer s.Close()
	return runWrite(q.Run(context.Background(), s, r))(q)
}

// runWrite writes what a Run returned, then the request's notes.
func runWrite(write func(io.Writer) error, err error) func(q any) (string, error) {
	return func(q any) (string, error) {
		if err != nil {
			return "", err
		}
		var out bytes.Buffer
		err := write(&out)
		if n, ok := q.(interface{ Notes() []string }); ok && err == nil {
			for _, line := range n.Notes() { // the command prints them on standard error
				fmt.Fprintln(&out, line)
			}
		}
		return out.String(), err
	}
}

func mustCommand(t testing.TB, db string, q request, args ...string) string {
	t.Helper()
	out, err := runCommand(t, db, q, args...)
	if err != nil {
		t.Fatalf("%T %v: %v", q, args, err)
	}
	return out
}

// export runs m3eval export's request o and returns what it wrote and its notes (the final
// labels' counts line with --final, else "").
func export(t testing.TB, db string, o *workflow.ExportRequest) (string, string, error) {
	t.Helper()
	return exportWith(t, db, defaultRubric(t), o)
}

// exportWith is export under rubric r (m3eval --rubric FILE export).
func exportWith(t testing.TB, db string, r *rubric.Rubric, o *workflow.ExportRequest) (string, string, error) {
	t.Helper()
	s, _ := openDBWith(t, db, o.StoreOptions(), r)
	defer s.Close()
	write, err := o.Run(context.Background(), s, r)
	if err != nil {
		return "", "", err
	}
	var out bytes.Buffer
	if err := write(&out); err != nil {
		return out.String(), "", err
	}
	notes := o.Notes()
	if len(notes) == 0 {
		return out.String(), "", nil
	}
	return out.String(), notes[0], nil
}

// importOut is m3eval import with o (DB and Out filled in; Rubric nil: the guide's) of
// files: what it printed.
func importOut(t testing.TB, db string, o importer.Options, files ...string) (string, error) {
	t.Helper()
	if o.Rubric == nil {
		o.Rubric = defaultRubric(t)
	}
	s, r := openDBWith(t, db, store.Options{}, o.Rubric)
	defer s.Close()
	var out bytes.Buffer
	o.Rubric, o.DB, o.Out = r, db, &out
	err := importer.New(s, o).Run(context.Background(), files, false)
	return out.String(), err
}

func mustImportOut(t testing.TB, db string, o importer.Options, files ...string) string {
	t.Helper()
	out, err := importOut(t, db, o, files...)
	if err != nil {
		t.Fatalf("import %v: %v", files, err)
	}
	return out
}

// exportAs is m3eval export --format format [--include-drafts] [--annotator annotator].
func exportAs(t testing.TB, db, format string, drafts bool, annotator string) string {
	t.Helper()
	o := workflow.NewExportRequest()
	o.Format.Format, o.Labels.IncludeDrafts, o.Labels.Annotator = render.Format(format), drafts, annotator
	out, _, err := export(t, db, o)
	if err != nil {
		t.Fatalf("export %+v: %v", o, err)
	}
	return out
}

// statusOut is m3eval status's Run on the database.
func statusOut(t testing.TB, db string) string {
	t.Helper()
	var q workflow.StatusRequest
	s, _ := openDB(t, db, q.StoreOptions())
	defer s.Close()
	out, err := runWrite(q.Run(context.Background(), s, db))(q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
