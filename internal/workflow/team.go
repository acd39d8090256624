package workflow

import (
	"context"
	"time"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Team is what the admin's status screen of m3eval serve shows: every annotator's
// progress, what they submitted today and since when, and the quality-control flags of
// their labels (m3eval qc over every label).
type Team struct {
	Status *store.Status
	Now    time.Time
	// Today counts each annotator's labels submitted since local midnight; First is the
	// earliest of them.
	Today map[string]int
	First map[string]time.Time
	QC    []campaign.AnnotatorQC
}

// TeamStatus reads the team's status as of now.
func TeamStatus(ctx context.Context, st *store.Store, r *rubric.Rubric, now time.Time) (*Team, error) {
	s, err := st.Status(ctx)
	if err != nil {
		return nil, err
	}
	d, err := st.Review(ctx, "")
	if err != nil {
		return nil, err
	}
	t := &Team{Status: s, Now: now, Today: map[string]int{}, First: map[string]time.Time{}}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	for _, l := range d.Labels {
		if l.At.Before(midnight) {
			continue
		}
		t.Today[l.Annotator]++
		if f, ok := t.First[l.Annotator]; !ok || l.At.Before(f) {
			t.First[l.Annotator] = l.At
		}
	}
	if t.QC, err = QC(ctx, st, "", r, campaign.DefaultQCOptions()); err != nil {
		return nil, err
	}
	return t, nil
}
