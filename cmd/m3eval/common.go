package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// io is the IO a command's Run gets (internal/cmdio): the root's flags, with the rubric
// already read when --rubric was given (PersistentPreRunE), and cmd's streams.
func (o *globalOptions) io(cmd *cobra.Command) *cmdio.IO {
	e := cmdIO(cmd)
	e.DB, e.RubricPath, e.Quiet, e.Rubric = o.dbPath, o.rubricPath, o.quiet, o.rubric
	return e
}

// cmdIO is the IO of a command that has no globalOptions at hand: the shared flags as cmd's
// flag set holds them, and cmd's streams.
func cmdIO(cmd *cobra.Command) *cmdio.IO {
	e := &cmdio.IO{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}
	if f := cmd.Flag("db"); f != nil {
		e.DB = f.Value.String()
	}
	if f := cmd.Flag("rubric"); f != nil {
		e.RubricPath = f.Value.String()
	}
	if f := cmd.Flag("quiet"); f != nil {
		e.Quiet = f.Value.String() == "true"
	}
	return e
}

// env is the IO of the root's flags alone, for the commands not yet moved to a Run of their
// own; what it reads of the rubric is kept for the next call.
func (o *globalOptions) env(work func(e *cmdio.IO) error) error {
	e := &cmdio.IO{DB: o.dbPath, RubricPath: o.rubricPath, Quiet: o.quiet, Rubric: o.rubric}
	err := work(e)
	o.rubric = e.Rubric
	return err
}

// openDB is cmdio.IO.OpenDB on the root's flags.
func (o *globalOptions) openDB(ctx context.Context, so store.Options, create bool) (s *store.Store, r *rubric.Rubric, err error) {
	err = o.env(func(e *cmdio.IO) error {
		s, r, err = cmdstore.Open(ctx, e, so, create)
		return err
	})
	return s, r, err
}

// openForAnnotating opens an existing database for saving labels, with the rubric and the
// action descriptions the annotator shows (m3eval annotate, m3eval serve).
func (o *globalOptions) openForAnnotating(ctx context.Context, so store.Options) (*store.Store, *rubric.Rubric, rubric.Actions, error) {
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return nil, nil, nil, err
	}
	s, r, err := o.openDB(ctx, so, false)
	return s, r, actions, err
}

// guideCases is the M3Bench guide's edge cases for the annotator's help screen when r is
// that guide's rubric (another rubric has its own guide, which m3eval does not know).
func guideCases(r *rubric.Rubric) string {
	def, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil || r.Name != def.Name {
		return ""
	}
	return annotations.GuideCases
}

// loadRubric is cmdio.IO.LoadRubric on the root's flags: read once, since --rubric - reads
// standard input.
func (o *globalOptions) loadRubric() (r *rubric.Rubric, err error) {
	err = o.env(func(e *cmdio.IO) error {
		r, err = e.LoadRubric()
		return err
	})
	return r, err
}

// oneStdin fails when standard input (-) is given for more than one file argument: it can be
// read only once.
func oneStdin(paths ...string) error { return usageIf(usage.OneStdin(paths...)) }
