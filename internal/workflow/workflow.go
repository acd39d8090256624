// Package workflow runs the operations the annotation and campaign commands ask for (sample,
// assign, adjudicate, qc, export, status, copy, the annotator's queue): it reads what the
// store holds, lets the domain packages (sample, campaign) decide, and stores the outcome.
// It holds no SQL and no statistics of its own. Each of these commands has one request type
// here (SampleCommand, …): its flags, the checks of their values, how to open the database,
// and a Run that does the work and returns the function that writes what to show;
// cmd/m3eval only parses the flags, opens the database and prints.
package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// SampleOptions are the options of `m3eval sample`.
type SampleOptions struct {
	Name   string
	N      int
	Seed   int64
	Params store.SampleParams
}

// Sample draws a stratified sample of the imported turns and stores it under its name.
func Sample(ctx context.Context, st *store.Store, o SampleOptions) (*store.SampleInfo, error) {
	if strings.TrimSpace(o.Name) == "" {
		return nil, usagef("--name is required")
	}
	if o.N <= 0 {
		return nil, usagef("--n %d: the sample needs at least one turn", o.N)
	}
	if o.Params.MinPerStratum < 0 {
		return nil, usagef("--min-per-stratum %d is negative", o.Params.MinPerStratum)
	}
	if _, err := st.Sample(ctx, o.Name); err == nil {
		return nil, fmt.Errorf("sample %q exists already (see m3eval sample --show %s); choose another --name", o.Name, o.Name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	counts, err := st.SampleStrata(ctx, o.Params)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	avail := 0
	for _, c := range counts {
		avail += c.N
	}
	if avail == 0 {
		return nil, fmt.Errorf("sample %s: no imported turn matches%s", o.Name, describeWhere(o.Params.Where))
	}
	if o.N > avail {
		// Not a usage error (exit 1, not 2): the command line is well formed, the data has
		// fewer turns (#39).
		return nil, fmt.Errorf("sample %s: --n %d, but only %d imported turns match%s", o.Name, o.N, avail, describeWhere(o.Params.Where))
	}
	drawn, err := sample.DrawPositions(counts, sample.Request{N: o.N, MinPerStratum: o.Params.MinPerStratum, Seed: o.Seed})
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", o.Name, err)
	}
	strata := make([]sample.Stratum, len(drawn))
	for i, d := range drawn {
		ids, err := st.SampleTurnIDs(ctx, o.Params, d.Key, d.Positions)
		if err != nil {
			return nil, err
		}
		strata[i] = sample.Stratum{Key: d.Key, Available: d.Available, Allocated: d.Allocated, Drawn: d.Drawn, Items: ids}
	}
	info := store.SampleInfo{Name: o.Name, Seed: o.Seed, Size: o.N, Params: o.Params}
	if err := st.SaveSample(ctx, info, strata); err != nil {
		return nil, err
	}
	return st.Sample(ctx, o.Name)
}

func describeWhere(w map[string][]string) string {
	if len(w) == 0 {
		return ""
	}
	var parts []string
	for k, vs := range w {
		for _, v := range vs {
			parts = append(parts, k+"="+v)
		}
	}
	slices.Sort(parts)
	return " --where " + strings.Join(parts, " --where ")
}

// AssignOptions are the options of `m3eval assign`.
type AssignOptions struct {
	Sample     string
	Annotators []string
	Overlap    int
	Seed       int64
	// GoldFile, when set, holds turns with known labels in the guide's format; GoldRate is
	// the share of every queue they make up. A negative GoldRate or RepeatRate keeps the
	// earlier assignment's (0 for a first one).
	GoldFile string
	GoldRate float64
	// RepeatRate is the share of each annotator's sampled turns shown to them a second time,
	// after their queue, for intra-annotator agreement.
	RepeatRate float64
	Rubric     *rubric.Rubric
}

// AssignResult is what an assignment did.
type AssignResult struct {
	Campaign *store.Campaign
	Warnings []string
}

// Assign gives the sample's turns to the annotators, extending an earlier assignment
// without moving started work.
func Assign(ctx context.Context, st *store.Store, o AssignOptions) (*AssignResult, error) {
	names, err := cleanNames(o.Annotators)
	if err != nil {
		return nil, err
	}
	prev, err := st.Campaign(ctx, o.Sample)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	for _, r := range prev.Rows {
		if _, ok := index[r.Annotator]; !ok {
			return nil, usagef("%s is part of the assignment of %s; list every earlier annotator in --annotators (add new ones after them)", r.Annotator, o.Sample)
		}
	}
	if o.GoldRate < 0 || o.RepeatRate < 0 {
		var g, r float64
		if prev.Settings != nil {
			g, r = prev.Settings.GoldRate, prev.Settings.RepeatRate
		}
		if o.GoldRate < 0 {
			o.GoldRate = g
		}
		if o.RepeatRate < 0 {
			o.RepeatRate = r
		}
	}
	if prev.Settings != nil && o.Overlap < prev.Settings.Overlap {
		return nil, usagef("--overlap %d is below the earlier %d; an assignment only grows", o.Overlap, prev.Settings.Overlap)
	}
	turns, err := st.SampleTurns(ctx, o.Sample)
	if err != nil {
		return nil, err
	}
	pos := map[int64]int{}
	ids := make([]int64, len(turns))
	for i, t := range turns {
		pos[t.TurnID] = i
		ids[i] = t.TurnID
	}
	started, err := st.Started(ctx, ids)
	if err != nil {
		return nil, err
	}
	req := campaign.AssignRequest{Items: len(turns), Annotators: len(names), Overlap: o.Overlap, Seed: uint64(o.Seed),
		Locked: make([][]int, len(turns)), Prev: make([][]int, len(turns))}
	for i, id := range ids {
		for _, who := range started[id] {
			if a, ok := index[who]; ok {
				req.Locked[i] = append(req.Locked[i], a)
			}
		}
	}
	keepGold := make([][]int64, len(names))
	keepRepeat := make([][]int64, len(names))
	for _, r := range prev.Rows {
		a := index[r.Annotator]
		switch r.Kind {
		case store.AssignMain:
			if i, ok := pos[r.TurnID]; ok {
				req.Prev[i] = append(req.Prev[i], a)
			}
		case store.AssignGold:
			keepGold[a] = append(keepGold[a], r.TurnID)
		case store.AssignRepeat:
			keepRepeat[a] = append(keepRepeat[a], r.TurnID)
		}
	}
	asg, err := campaign.Assign(req)
	var pair *campaign.NoSharedTurnError
	if errors.As(err, &pair) && pair.A < len(names) && pair.B < len(names) {
		return nil, fmt.Errorf("assign %s: %w: found no swap that gives %s and %s a shared turn; sample more turns", o.Sample, campaign.ErrAssign, names[pair.A], names[pair.B])
	}
	if err != nil {
		return nil, fmt.Errorf("assign %s: %w", o.Sample, err)
	}
	var rows []store.Assigned
	own := make([][]int64, len(names))
	for i, as := range asg.Items {
		for _, a := range as {
			rows = append(rows, store.Assigned{Annotator: names[a], TurnID: ids[i], Kind: store.AssignMain})
			own[a] = append(own[a], ids[i])
		}
	}
	if o.GoldFile != "" {
		if err := loadGold(ctx, st, o.GoldFile, o.Rubric); err != nil {
			return nil, err
		}
	}
	if o.GoldRate > 0 || o.GoldFile != "" {
		gold, err := st.GoldTurns(ctx)
		if err != nil {
			return nil, err
		}
		gids := make([]int64, len(gold))
		for i, g := range gold {
			gids[i] = g.TurnID
		}
		picks, err := campaign.PickGold(campaign.GoldRequest{Loads: asg.Loads(len(names)), Gold: gids, Rate: o.GoldRate,
			Own: own, Keep: keepGold, Seed: uint64(o.Seed)})
		if err != nil {
			return nil, fmt.Errorf("assign %s: %w", o.Sample, err)
		}
		for a, ps := range picks {
			for _, g := range ps {
				rows = append(rows, store.Assigned{Annotator: names[a], TurnID: g, Kind: store.AssignGold})
			}
		}
	}
	repeats, err := campaign.PickRepeats(campaign.RepeatRequest{Own: own, Rate: o.RepeatRate, Keep: keepRepeat, Seed: uint64(o.Seed)})
	if err != nil {
		return nil, fmt.Errorf("assign %s: %w", o.Sample, err)
	}
	for a, ps := range repeats {
		for _, p := range ps {
			rows = append(rows, store.Assigned{Annotator: names[a], TurnID: p, Kind: store.AssignRepeat})
		}
	}
	// Started gold work stays too.
	for _, r := range prev.Rows {
		if r.Kind == store.AssignGold && r.Status != "" && !slices.ContainsFunc(rows, func(x store.Assigned) bool {
			return x.Annotator == r.Annotator && x.TurnID == r.TurnID && x.Kind == r.Kind
		}) {
			rows = append(rows, store.Assigned{Annotator: r.Annotator, TurnID: r.TurnID, Kind: r.Kind})
		}
	}
	set := store.CampaignSettings{Overlap: o.Overlap, GoldRate: o.GoldRate, RepeatRate: o.RepeatRate, Seed: o.Seed}
	if err := st.SaveAssignment(ctx, o.Sample, set, rows); err != nil {
		return nil, err
	}
	c, err := st.Campaign(ctx, o.Sample)
	if err != nil {
		return nil, err
	}
	return &AssignResult{Campaign: c, Warnings: asg.Warnings}, nil
}

func cleanNames(in []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range in {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if seen[n] {
			return nil, usagef("--annotators names %s twice", n)
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("--annotators is required (e.g. alice,bob,carol)")
	}
	return out, nil
}

// loadGold reads a file of labeled turns in the guide's format (turn fields plus one
// human_annotation) and stores their labels as gold. The turns must be imported.
func loadGold(ctx context.Context, st *store.Store, path string, r *rubric.Rubric) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("gold: %w", err)
	}
	defer f.Close()
	rd := ingest.NewReader(path, f)
	var labels []store.GoldLabel
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(rec.Labels) != 1 {
			return &ingest.Error{File: path, Line: rec.Line, Field: "human_annotation",
				Err: fmt.Errorf("%w: a gold turn needs exactly one label, found %d", ingest.ErrBadRecord, len(rec.Labels))}
		}
		// No Now: a gold label keeps only its values (store.GoldLabel has no time).
		l, err := ingest.Label(path, rec, rec.Labels[0], ingest.LabelOptions{Rubric: r, Annotator: "gold"})
		if err != nil {
			return err
		}
		labels = append(labels, store.GoldLabel{SampleID: rec.Turn.SampleID, Values: l.Values, Where: fmt.Sprintf("%s:%d", path, rec.Line)})
	}
	if len(labels) == 0 {
		return fmt.Errorf("gold %s: no labeled turns", path)
	}
	_, err = st.PutGoldLabels(ctx, path, labels)
	return err
}
