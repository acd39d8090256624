package workflow

import (
	"context"
	"fmt"
	"io"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// ExportOptions are what m3eval export asks for: each annotator's labels (Labels), or with
// Final one final label per turn, of the Campaign's turns when it is given.
type ExportOptions struct {
	Labels   store.ExportOptions
	Format   render.LabeledOptions // Rubric, Final and Multi are set by Export
	Final    bool
	Campaign string
	Disagree campaign.DisagreeOptions
}

// Export writes the labels through open, which gives it the output: open is called only
// once the options hold and there is something to export, so a mistake leaves no file. With
// Final it returns what the final labels are made of.
func Export(ctx context.Context, st *store.Store, r *rubric.Rubric, o ExportOptions, open func(func(io.Writer) error) error) (*FinalCounts, error) {
	lo := o.Format
	lo.Rubric = r
	if o.Final || o.Campaign != "" {
		if !o.Final {
			return nil, usagef("--campaign goes with --final")
		}
		if o.Labels.Annotator != "" || o.Labels.IncludeDrafts {
			return nil, usagef("--final takes every annotator's submitted labels: drop --annotator and --include-drafts")
		}
		var counts FinalCounts
		lo.Final = true
		return &counts, open(func(w io.Writer) error {
			lw, err := render.NewLabeledWriter(w, lo)
			if err != nil {
				return err
			}
			if counts, err = ExportFinal(ctx, st, o.Campaign, r, o.Disagree, lw.Write); err != nil {
				return err
			}
			return lw.Close()
		})
	}
	names, err := st.ExportAnnotators(ctx, o.Labels)
	if err != nil {
		return nil, err
	}
	if o.Labels.Annotator != "" && len(names) == 0 {
		hint := " (drafts are left out without --include-drafts)"
		if o.Labels.IncludeDrafts {
			hint = ""
		}
		return nil, fmt.Errorf("export: %s has no labels to export%s", o.Labels.Annotator, hint)
	}
	lo.Multi = len(names) > 1
	return nil, open(func(w io.Writer) error {
		lw, err := render.NewLabeledWriter(w, lo)
		if err != nil {
			return err
		}
		if err := st.Export(ctx, o.Labels, lw.Write); err != nil {
			return err
		}
		return lw.Close()
	})
}
