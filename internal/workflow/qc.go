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
	// The labels go straight from the store's rows into the checks' input, sharing their
	// strings and answers (StreamReview): at a million labels a second copy of each, or a
	// map per label, is what took the memory.
	var labels []campaign.QCLabel
	d, err := st.StreamReview(ctx, name, func(l *store.ReviewLabel) error {
		labels = append(labels, campaign.QCLabel{Annotator: l.Annotator, Item: l.SampleID,
			Turn: rubric.Item{ActionType: l.ActionType, Turn: l.Turn}, Values: l.Values, Active: l.Active, At: l.At})
		return nil
	})
	if err != nil {
		return nil, err
	}
	in := campaign.QCInput{Rubric: r, Gold: d.Gold, Labels: labels}
	for _, l := range d.Repeats {
		in.Repeats = append(in.Repeats, campaign.QCRepeat{Annotator: l.Annotator, Item: l.SampleID, Values: l.Values})
	}
	return campaign.QC(in, o), nil
}
