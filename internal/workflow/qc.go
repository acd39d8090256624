package workflow

import (
	"context"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// QC checks the submitted labels of a campaign ("" for the whole database).
func QC(ctx context.Context, st *store.Store, name string, r *rubric.Rubric, o campaign.QCOptions) ([]campaign.AnnotatorQC, error) {
	if err := assigned(ctx, st, name); err != nil {
		return nil, err
	}
	d, err := st.Review(ctx, name)
	if err != nil {
		return nil, err
	}
	in := campaign.QCInput{Rubric: r, Gold: d.Gold}
	for _, l := range d.Labels {
		in.Labels = append(in.Labels, campaign.QCLabel{Annotator: l.Annotator, Item: l.SampleID,
			Turn: rubric.Item{ActionType: l.ActionType, Turn: l.Turn}, Values: l.Values, Active: l.Active, At: l.At})
	}
	for _, l := range d.Repeats {
		in.Repeats = append(in.Repeats, campaign.QCRepeat{Annotator: l.Annotator, Item: l.SampleID, Values: l.Values})
	}
	return campaign.QC(in, o), nil
}
