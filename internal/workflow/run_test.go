package workflow_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// These helpers call the commands' own Run (issue #42), with flags (testkit.RunCommand) or
// with options: nothing of the commands' wiring is copied here.

// The shared helpers, written once in internal/testkit.
var (
	isUsage       = testkit.IsUsage
	defaultRubric = testkit.DefaultRubric
	openDBWith    = testkit.OpenDBWith
	importFiles   = testkit.ImportFiles
)

// command is a command's options struct with its flags and Run (testkit.Command).
type command = testkit.Command

// runCommand parses args into c's own flags and calls its Run on the database at db
// (testkit.RunCommand): what it wrote to standard output followed by what it wrote to
// standard error (a sample's notes), and its error.
func runCommand(t testing.TB, db string, c command, args ...string) (string, error) {
	t.Helper()
	out, errw, err := testkit.RunCommand(t, c, db, args...)
	return out + errw, err
}

func mustCommand(t testing.TB, db string, c command, args ...string) string {
	t.Helper()
	out, err := runCommand(t, db, c, args...)
	if err != nil {
		t.Fatalf("%T %v: %v", c, args, err)
	}
	return out
}

// export calls m3eval export's Run with o and returns what it wrote and its standard error
// (the final labels' counts line with --final, else "").
func export(t testing.TB, db string, o *workflow.ExportCommand) (string, string, error) {
	t.Helper()
	return exportWith(t, db, nil, o)
}

// exportWith is export under rubric r (m3eval --rubric FILE export; nil: the guide's).
func exportWith(t testing.TB, db string, r *rubric.Rubric, o *workflow.ExportCommand) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := o.Run(context.Background(), &cmdio.IO{DB: db, Rubric: r, Out: &out, Err: &errw})
	return out.String(), strings.TrimSuffix(errw.String(), "\n"), err
}

// importOut is m3eval import with the options o (Rubric nil: the guide's) of files, through
// its Run: what it printed.
func importOut(t testing.TB, db string, o importer.Options, files ...string) (string, error) {
	t.Helper()
	q := importer.NewImportCommand()
	q.Options, q.Files = o, files
	var out bytes.Buffer
	err := q.Run(context.Background(), &cmdio.IO{DB: db, Rubric: o.Rubric, Out: &out})
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
	o := workflow.NewExportCommand()
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
	out, err := runCommand(t, db, workflow.StatusCommand{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
