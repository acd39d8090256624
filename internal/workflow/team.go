package workflow

import (
	"context"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// TeamStatus reads the team's status as of now: the admin's screen of m3eval serve.
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
		// Imported labels were not submitted here, whatever their time says: counting them
		// would show a pace nobody worked at ("bob 35 today" for a bob who never annotated).
		if l.At.Before(midnight) || l.Imported {
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

// TeamScreen is the text of the admin's status screen of m3eval serve as of now.
func TeamScreen(ctx context.Context, st *store.Store, r *rubric.Rubric, now time.Time) (string, error) {
	t, err := TeamStatus(ctx, st, r, now)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = WriteTeam(&b, t)
	return b.String(), err
}
