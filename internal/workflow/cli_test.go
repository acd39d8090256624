package workflow_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// These helpers import labels through the importer and run the campaign commands' engines
// (their flags, workflow.Command's Check and Run, workflow.Export) the way cmd/m3eval does,
// without the command: the checks of qc, adjudicate and export --final live here (moved
// from cmd/m3eval/qc_test.go and adjudicate_test.go).

// The shared helpers, written once in internal/testkit.
var (
	errFlag       = testkit.ErrFlag
	isUsage       = testkit.IsUsage
	defaultRubric = testkit.DefaultRubric
	openDB        = testkit.OpenDB
	openDBWith    = testkit.OpenDBWith
	importFiles   = testkit.ImportFiles
)

// flagCommand is a campaign command with its flags.
type flagCommand interface {
	workflow.Command
	AddFlags(fs *pflag.FlagSet)
}

// runCommand parses args into c's flags, checks them, and runs c on the database: what it
// shows, and the error.
func runCommand(t testing.TB, db string, c flagCommand, args ...string) (string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("m3eval", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", errFlag, err)
	}
	if a, ok := c.(*workflow.AssignCommand); ok {
		a.RateDefaults(fs.Changed("gold-rate"), fs.Changed("repeat")) // as assign's PreRun does
	}
	if err := c.Check(); err != nil {
		return "", err
	}
	s, r := openDB(t, db, c.StoreOptions())
	defer s.Close()
	render, err := c.Run(context.Background(), s, r)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = render(&out)
	if n, ok := c.(workflow.Noter); ok && err == nil {
		for _, line := range n.Notes() { // the command prints them on standard error
			fmt.Fprintln(&out, line)
		}
	}
	return out.String(), err
}

func mustCommand(t testing.TB, db string, c flagCommand, args ...string) string {
	t.Helper()
	out, err := runCommand(t, db, c, args...)
	if err != nil {
		t.Fatalf("%T %v: %v", c, args, err)
	}
	return out
}

// export runs workflow.Export (m3eval export) and returns what it wrote and the final
// labels' counts line ("" without --final).
func export(t testing.TB, db string, o workflow.ExportOptions) (string, string, error) {
	t.Helper()
	return exportWith(t, db, defaultRubric(t), o)
}

// exportWith is export under rubric r (m3eval --rubric FILE export).
func exportWith(t testing.TB, db string, r *rubric.Rubric, o workflow.ExportOptions) (string, string, error) {
	t.Helper()
	s, _ := openDBWith(t, db, store.Options{ReadOnly: true}, r)
	defer s.Close()
	var out bytes.Buffer
	counts, err := workflow.Export(context.Background(), s, r, o, func(fn func(io.Writer) error) error { return fn(&out) })
	if err != nil || counts == nil {
		return out.String(), "", err
	}
	return out.String(), "final labels: " + counts.String(), nil
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
	o := workflow.ExportOptions{Disagree: campaign.DefaultDisagreeOptions()}
	o.Format.Format, o.Labels.IncludeDrafts, o.Labels.Annotator = render.Format(format), drafts, annotator
	out, _, err := export(t, db, o)
	if err != nil {
		t.Fatalf("export %+v: %v", o, err)
	}
	return out
}

// statusOut is m3eval status: the store's status written by workflow.WriteStatus.
func statusOut(t testing.TB, db string) string {
	t.Helper()
	s, _ := openDB(t, db, store.Options{ReadOnly: true})
	defer s.Close()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := workflow.WriteStatus(&out, db, st); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
