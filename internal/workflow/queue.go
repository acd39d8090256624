package workflow

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/store"
)

// ParseFilter turns repeated KEY=VALUE specs (--filter) into a store filter: values of one
// key are alternatives, different keys must all hold.
func ParseFilter(specs []string) (store.Filter, error) {
	f := store.Filter{}
	for _, s := range specs {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" || v == "" {
			return nil, usagef("--filter %q: want KEY=VALUE, e.g. action_type=mislead", s)
		}
		if !slices.Contains(store.FilterKeys(), k) {
			return nil, usagef("--filter %q: cannot filter on %s (use %s)", s, k, strings.Join(store.FilterKeys(), ", "))
		}
		f[k] = append(f[k], v)
	}
	return f, nil
}

// DescribeFilter spells the filter specs as the command line gave them, for messages.
func DescribeFilter(specs []string) string {
	if len(specs) == 0 {
		return ""
	}
	return " --filter " + strings.Join(specs, " --filter ")
}

// AnnotatorQueue opens the annotator's queue: of the campaign (default: the latest that
// assigns them turns) when there is one, else every imported turn; m3eval annotate and each
// m3eval serve session open it the same way. filterText describes the filter for errors. A
// name that keeps another annotator's repeated labels is a usage error (usage.Err).
func AnnotatorQueue(ctx context.Context, s *store.Store, annotator, campaign string, filter store.Filter, filterText string) (*store.Queue, error) {
	if hidden, err := s.IsRepeatRow(ctx, annotator); err != nil || hidden {
		if err == nil {
			err = usagef("--annotator %q: the name keeps another annotator's repeated labels; choose another", annotator)
		}
		return nil, err
	}
	if campaign == "" {
		var err error
		if campaign, err = s.CampaignOf(ctx, annotator); err != nil {
			return nil, err
		}
	}
	var q *store.Queue
	var err error
	if campaign != "" {
		q, err = CampaignQueue(ctx, s, annotator, campaign, filter)
	} else {
		q, err = s.OpenQueue(ctx, annotator, filter)
	}
	if err != nil {
		return nil, err
	}
	n, err := q.Len(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 && campaign != "" {
		// A sample not assigned yet gives nobody turns: say that, and how to assign it.
		if err := assigned(ctx, s, campaign); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the queue is empty: campaign %s gives %s no turns%s", campaign, annotator, filterText)
	}
	if n == 0 {
		return nil, fmt.Errorf("the queue is empty: nothing imported in %s matches%s", s.Path(), filterText)
	}
	return q, nil
}

// CampaignQueue opens the annotator's queue of the campaign; once every turn of it is
// submitted, the turns assigned to be shown again (assign --repeat) follow, under the same
// name and header.
func CampaignQueue(ctx context.Context, s *store.Store, annotator, campaign string, f store.Filter) (*store.Queue, error) {
	q, err := s.OpenCampaignQueue(ctx, annotator, campaign, f)
	if err != nil {
		return nil, err
	}
	if _, open, err := q.First(ctx, true); err != nil || open {
		return q, err
	}
	rq, err := s.OpenRepeatQueue(ctx, annotator, campaign, f)
	if err != nil {
		return nil, err
	}
	if _, open, err := rq.First(ctx, true); err != nil || !open {
		return q, err
	}
	return rq, nil
}
