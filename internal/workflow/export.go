package workflow

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// ExportRequest is m3eval export's options: each annotator's labels (Labels), or with
// Final one final label per turn, of the Campaign's turns when it is given.
type ExportRequest struct {
	Labels   store.ExportOptions
	Format   render.LabeledOptions // Rubric, Final and Multi are set by Run
	Final    bool
	Campaign string
	Disagree campaign.DisagreeOptions
	Output   string   // -o FILE: the command writes there instead of standard output
	notes    []string // for standard error, after the output
}

// NewExportRequest has the default disagreement rule of --final.
func NewExportRequest() *ExportRequest {
	return &ExportRequest{Disagree: campaign.DefaultDisagreeOptions()}
}

// AddFlags defines the flags of m3eval export on fs but -o.
func (q *ExportRequest) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&q.Labels.Annotator, "annotator", "", "export only this annotator's labels")
	fs.BoolVar(&q.Labels.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	cmdutil.EnumVar(fs, &q.Format.Format, "format", render.JSON, render.LabeledFormats, "output format")
	fs.BoolVar(&q.Final, "final", false, "one final label per turn: adjudicated, else agreed")
	fs.StringVar(&q.Campaign, "campaign", "", "with --final: only this campaign's turns")
	fs.IntVar(&q.Disagree.ScaleGap, "gap", q.Disagree.ScaleGap, "with --final: 1-5 answers this far apart disagree")
	fs.BoolVar(&q.Disagree.CountNA, "count-na", false, "with --final: NA against an answer is a disagreement too")
	q.Format.CSV.AddFlags(fs)
}

// StoreOptions says how to open the database: export only reads.
func (q *ExportRequest) StoreOptions() store.Options { return store.Options{ReadOnly: true} }

// Run is m3eval export once its flags are parsed and its database is open (StoreOptions):
// it checks the request and what there is to export, and returns the function that streams
// the labels; Notes has, after it, what the final labels are made of (with Final). A
// mistake in the request, or nothing to export, is an error before the writer is returned,
// so that it leaves no file; the labels themselves are read while they are written.
func (q *ExportRequest) Run(ctx context.Context, st *store.Store, r *rubric.Rubric) (func(io.Writer) error, error) {
	q.notes = nil
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
			q.notes = []string{"final labels: " + counts.String()}
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

// Notes are what the last Run's writer wants the user to know, for standard error after
// the output: with Final, how many final labels were adjudicated, agreed or single.
func (q *ExportRequest) Notes() []string { return q.notes }
