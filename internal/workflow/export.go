package workflow

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// ExportCommand is m3eval export's options: each annotator's labels (Labels), or with
// Final one final label per turn, of the Campaign's turns when it is given.
type ExportCommand struct {
	Labels   store.ExportOptions
	Format   render.LabeledOptions // Rubric, Final and Multi are set by Run
	Final    bool
	Campaign string
	Disagree campaign.DisagreeOptions
	Output   string // -o FILE: the command writes there instead of standard output
}

// NewExportCommand has the default disagreement rule of --final.
func NewExportCommand() *ExportCommand {
	return &ExportCommand{Disagree: campaign.DefaultDisagreeOptions()}
}

// AddFlags defines the flags of m3eval export on fs.
func (q *ExportCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&q.Labels.Annotator, "annotator", "", "export only this annotator's labels")
	fs.BoolVar(&q.Labels.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	cmdutil.EnumVar(fs, &q.Format.Format, "format", render.JSON, render.LabeledFormats, "output format")
	fs.BoolVar(&q.Final, "final", false, "one final label per turn: adjudicated, else agreed")
	fs.StringVar(&q.Campaign, "campaign", "", "with --final: only this campaign's turns")
	fs.IntVar(&q.Disagree.ScaleGap, "gap", q.Disagree.ScaleGap, "with --final: 1-5 answers this far apart disagree")
	fs.BoolVar(&q.Disagree.CountNA, "count-na", false, "with --final: NA against an answer is a disagreement too")
	q.Format.CSV.AddFlags(fs)
	fs.StringVarP(&q.Output, "output", "o", "", "write to FILE instead of standard output")
}

// StoreOptions says how to open the database: export only reads.
func (q *ExportCommand) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run is m3eval export once its flags are parsed: it opens the database read only, checks
// the command and what there is to export, and streams the labels to e's output or -o;
// with Final it says after them, on e's standard error, what the final labels are made of.
// A mistake in the command, or nothing to export, is an error before anything is written,
// so that it leaves no file; the labels themselves are read while they are written.
func (q *ExportCommand) Run(ctx context.Context, e *cmdio.IO) error {
	st, r, err := cmdstore.Open(ctx, e, q.StoreOptions(), false)
	if err != nil {
		return err
	}
	defer st.Close()
	var notes []string
	write, err := q.run(ctx, st, r, &notes)
	if err != nil {
		return err
	}
	if err := e.Write(q.Output, string(q.Format.Format), func(w io.Writer, _ bool) error { return write(w) }); err != nil {
		return err
	}
	return printNotes(e, notes)
}

// run checks the command and what there is to export, and returns the function that streams
// the labels, which sets *notes.
func (q *ExportCommand) run(ctx context.Context, st *store.Store, r *rubric.Rubric, notes *[]string) (func(io.Writer) error, error) {
	lo := q.Format
	lo.Rubric = r
	if q.Final || q.Campaign != "" {
		if !q.Final {
			return nil, usagef("--campaign goes with --final")
		}
		if q.Labels.Annotator != "" || q.Labels.IncludeDrafts {
			return nil, usagef("--final takes every annotator's submitted labels: drop --annotator and --include-drafts")
		}
		lo.Final = true
		return func(w io.Writer) error {
			lw, err := render.NewLabeledWriter(w, lo)
			if err != nil {
				return err
			}
			counts, err := ExportFinal(ctx, st, q.Campaign, r, q.Disagree, lw.Write)
			if err != nil {
				return err
			}
			*notes = []string{"final labels: " + counts.String()}
			return lw.Close()
		}, nil
	}
	names, err := st.ExportAnnotators(ctx, q.Labels)
	if err != nil {
		return nil, err
	}
	if q.Labels.Annotator != "" && len(names) == 0 {
		hint := " (drafts are left out without --include-drafts)"
		if q.Labels.IncludeDrafts {
			hint = ""
		}
		return nil, fmt.Errorf("export: %s has no labels to export%s", q.Labels.Annotator, hint)
	}
	lo.Multi = len(names) > 1
	return func(w io.Writer) error {
		lw, err := render.NewLabeledWriter(w, lo)
		if err != nil {
			return err
		}
		if err := st.Export(ctx, q.Labels, lw.Write); err != nil {
			return err
		}
		return lw.Close()
	}, nil
}
