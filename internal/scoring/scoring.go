// Package scoring reads the annotators' labels and the judges' scores of chosen fields from
// the annotation store into agree's builders (one for all turns and one per group of turns)
// and analyses them: what m3eval score reports and what m3eval report draws, computed once.
//
// It is also where the statistics flags of m3eval score and agree become options: StatFlags
// and Request hold the flags as given, Check turns them into agree's and report's options,
// and the exported lists (Formats, CIMethods, Adjustments, RaterModes, Clusters) name every
// valid value of the enumerated ones.
package scoring

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Options chooses what Run reads and how it analyses it.
type Options struct {
	// Filter chooses annotators, judges, drafts and the grouping; Run sets its Fields to the
	// rubric's scale and choice fields.
	Filter store.ScoreFilter
	// NACategory keeps the rubric's NA choice as a category of choice fields.
	NACategory bool
	// Database names the input in the results (the file's base name).
	Database string
	Agree    agree.Options
	// ClusterName names the bootstrap unit when Filter.Cluster makes whole clusters of turns
	// the unit (episode, model); with no Filter.Cluster, turns are resampled.
	ClusterName string
	// Adjust adjusts every p-value of the result as one family.
	Adjust agree.Adjustment
	// KeepData keeps every block's ratings and scores in Result.Data, for callers that draw
	// them (m3eval report).
	KeepData bool
	// Progress, when set, is told the bootstrap replicates done of all fields and groups and
	// their total (Agree.Bootstrap per field and block), from several goroutines at once.
	Progress func(done, total int64)
	// Cache, when set, keeps the bootstrap's intervals and tests keyed by a fingerprint of
	// the rows read and of the options: a run whose fingerprint is in it takes them from
	// there instead of resampling, and a run that resamples stores them (nil: no cache).
	Cache *intervalcache.Cache
}

// Result holds the overall section, then one per group in the order of the group values.
type Result struct {
	Sections []render.Section
	// Data holds each section's input per field, in rubric order, aligned with Sections
	// (only with KeepData).
	Data [][]agree.FieldData
}

// Run streams the chosen labels and scores out of the store and analyses every scale and
// choice field of the rubric, over all turns and per group.
func Run(ctx context.Context, s *store.Store, r *rubric.Rubric, o Options) (*Result, error) {
	sc, err := newScorer(r, o.NACategory, o.Filter.By != "", o.Filter.Judges)
	if err != nil {
		return nil, err
	}
	o.Filter.Fields = sc.names()
	sc.clustered = o.Filter.Cluster != ""
	rating, score := sc.rating, sc.score
	var key *intervalcache.Key
	if o.Cache != nil && o.Agree.Bootstrap > 0 {
		key = newRunKey(sc, &o)
		rating = func(row *store.ScoreRow) error { addRow(key, "r", row); return sc.rating(row) }
		score = func(row *store.ScoreRow) error { addRow(key, "s", row); return sc.score(row) }
	}
	if err := s.StreamScoring(ctx, o.Filter, rating, score); err != nil {
		return nil, err
	}
	if sc.clustered {
		o.Agree.Clusters, o.Agree.ClusterName = sc.clusterMap(), o.ClusterName
	}
	var cached *storedRun
	if key != nil {
		sc.key = key.String()
		var sr storedRun
		if o.Cache.Load(sc.key, &sr) {
			cached = &sr
		}
	}
	res, stored, err := sc.analyze(ctx, o.Database, o.Agree, o.KeepData, o.Progress, cached)
	if err != nil {
		return nil, err
	}
	if key != nil && stored != nil {
		// A cache that cannot be written costs only time: the next run resamples.
		_ = o.Cache.Store(sc.key, stored)
	}
	all := make([][]agree.FieldResult, len(res.Sections))
	for i, sec := range res.Sections {
		all[i] = sec.Results
	}
	// One rule with m3eval estimate: no interval from fewer than agree.MinClusters units.
	agree.RefuseFewClusters(all...)
	agree.Adjust(o.Adjust, all...)
	return res, nil
}

// scorer routes the streamed ratings and scores into one agree.Builder for all turns and one
// per group, and knows how the rubric's fields become agree's.
type scorer struct {
	fields     []agree.Field     // the scale and choice fields, in rubric order
	naValue    map[string]string // choice field → its NA choice, when it has one
	naCategory bool              // keep the NA choice as a category
	judges     []string          // every judge reported, in order
	overall    *agree.Builder    // all turns
	groups     map[string]*agree.Builder
	order      []string // the group values seen (sorted before the analysis)
	// clustered: whole clusters of turns are the bootstrap unit (else turns are). Each rated
	// sample's cluster is listed once, in samples and clusters, while the rows stream; the
	// map agree takes is made at the end, at its final size (growing it row by row rehashed
	// a million-entry map several times: a second of a million-turn score).
	clustered bool
	samples   []string
	clusters  []string
	key       string // the run's fingerprint in Options.Cache ("": not cached)
}

// newScorer prepares the builders; grouped asks for one builder per group besides the
// overall one.
func newScorer(r *rubric.Rubric, naCategory, grouped bool, judges []string) (*scorer, error) {
	sc := &scorer{naValue: map[string]string{}, naCategory: naCategory, judges: judges}
	if grouped {
		sc.groups = map[string]*agree.Builder{}
	}
	for i := range r.Fields {
		f := &r.Fields[i]
		switch f.Kind {
		case rubric.KindScale:
			vals := make([]int64, 0, f.Max-f.Min+1)
			for v := f.Min; v <= f.Max; v++ {
				vals = append(vals, int64(v))
			}
			sc.fields = append(sc.fields, agree.NewOrdinal(f.Name, vals...))
		case rubric.KindChoice:
			var labels []string
			for _, c := range f.Choices {
				if c.NA {
					sc.naValue[f.Name] = c.Value
					if !naCategory {
						continue
					}
				}
				labels = append(labels, c.Value)
			}
			sc.fields = append(sc.fields, agree.NewNominal(f.Name, labels...))
		}
	}
	var err error
	sc.overall, err = sc.newBuilder()
	return sc, err
}

func (sc *scorer) newBuilder() (*agree.Builder, error) {
	b, err := agree.NewBuilder(sc.fields)
	if err != nil {
		return nil, fmt.Errorf("rubric: %w", err)
	}
	b.NACategory = sc.naCategory
	b.Grouped = true // the store passes a turn's ratings together (StreamScoring's order)
	for _, j := range sc.judges {
		b.AddJudge(j)
	}
	return b, nil
}

// names lists the fields the report covers, in rubric order.
func (sc *scorer) names() []string {
	out := make([]string, len(sc.fields))
	for i, f := range sc.fields {
		out[i] = f.Name
	}
	return out
}

// value turns a stored value into what the builder reads: the NA choice becomes missing
// unless it is a category. A rater whose values are all missing is still listed, as
// m3eval agree lists them.
func (sc *scorer) value(field, v string, human bool) string {
	if na, ok := sc.naValue[field]; ok && v == na && (!sc.naCategory || !human) {
		// Automatic scores never have NA as a category: the oracle reads NA in its auto file
		// as missing even with --na-category.
		return ""
	}
	return v
}

// rating adds an annotator's value; the store passes only the fields of names().
func (sc *scorer) rating(row *store.ScoreRow) error {
	v := sc.value(row.Field, row.Value, true)
	if sc.clustered && (len(sc.samples) == 0 || row.Sample != sc.samples[len(sc.samples)-1]) {
		// The store passes a turn's ratings together: one entry per turn, not per value.
		sc.samples = append(sc.samples, row.Sample)
		sc.clusters = append(sc.clusters, row.Cluster)
	}
	if err := sc.overall.Add(row.Sample, row.Who, row.Field, v, agree.Location{}); err != nil {
		return fmt.Errorf("sample %s, annotator %s: %w", row.Sample, row.Who, err)
	}
	b, err := sc.group(row.Group, true)
	if b == nil || err != nil {
		return err
	}
	return b.Add(row.Sample, row.Who, row.Field, v, agree.Location{})
}

// score adds a judge's score; the store passes only the fields of names().
func (sc *scorer) score(row *store.ScoreRow) error {
	v := sc.value(row.Field, row.Value, false)
	if err := sc.overall.AddScore(row.Who, row.Sample, row.Field, v, agree.Location{}); err != nil {
		return fmt.Errorf("sample %s, judge %s: %w", row.Sample, row.Who, err)
	}
	b, err := sc.group(row.Group, false)
	if b == nil || err != nil {
		return err
	}
	return b.AddScore(row.Who, row.Sample, row.Field, v, agree.Location{})
}

// clusterMap maps each rated sample to its cluster.
func (sc *scorer) clusterMap() map[string]string {
	m := make(map[string]string, len(sc.samples))
	for i, smp := range sc.samples {
		m[smp] = sc.clusters[i]
	}
	sc.samples, sc.clusters = nil, nil
	return m
}

// group returns the builder of a group, making it for a rating; nil without grouping, and for
// a score of a group without ratings, whose scores have nothing to be compared with.
func (sc *scorer) group(value string, create bool) (*agree.Builder, error) {
	if sc.groups == nil {
		return nil, nil // not grouped
	}
	b := sc.groups[value]
	if b == nil && create {
		var err error
		if b, err = sc.newBuilder(); err != nil {
			return nil, err
		}
		sc.groups[value] = b
		sc.order = append(sc.order, value)
	}
	return b, nil
}

// analyze builds and analyses the overall block, then every group's in the order of their
// values. With cached, each block's intervals and tests come from it (the block is analysed
// without the bootstrap); a block it does not fit is resampled. It returns, besides the
// result, what the cache should hold when anything was resampled (nil otherwise).
func (sc *scorer) analyze(ctx context.Context, dbName string, opt agree.Options, keep bool, tell func(done, total int64), cached *storedRun) (*Result, *storedRun, error) {
	var toStore storedRun
	resampled := false
	var kept [][]agree.FieldData
	// Each block bootstraps every field; a field without data draws no replicates, so the
	// count is set to the block's end when the block is done.
	perBlock := int64(opt.Bootstrap) * int64(len(sc.fields))
	total := perBlock * int64(1+len(sc.order))
	var done atomic.Int64
	blocks := int64(0)
	if cached != nil {
		tell = nil // nothing to resample (unless an entry does not fit): no progress to show
	}
	if tell != nil && perBlock > 0 {
		tell(0, total)
		opt.Progress = func(n int) { tell(done.Add(int64(n)), total) }
	}
	run := func(b *agree.Builder) ([]agree.FieldResult, error) {
		defer func() {
			if blocks++; opt.Progress != nil {
				done.Store(blocks * perBlock)
				tell(blocks*perBlock, total)
			}
		}()
		data, err := b.Build(dbName)
		if err != nil {
			return nil, err
		}
		data = sc.inRubricOrder(data)
		if keep {
			kept = append(kept, data)
		}
		bi := len(toStore.Blocks)
		if cached != nil && bi < len(cached.Blocks) && opt.Bootstrap > 0 {
			noBoot := opt
			noBoot.Bootstrap = 0
			res, err := agree.Analyze(ctx, data, noBoot)
			if err != nil {
				return nil, err
			}
			if applyBlock(res, cached.Blocks[bi]) {
				toStore.Blocks = append(toStore.Blocks, cached.Blocks[bi])
				return res, nil
			}
		}
		if opt.Bootstrap > 0 {
			resampled = true
			replicates.Add(int64(opt.Bootstrap) * int64(len(data)))
		}
		res, err := agree.Analyze(ctx, data, opt)
		if err == nil {
			toStore.Blocks = append(toStore.Blocks, storeBlock(res))
		}
		return res, err
	}
	res, err := run(sc.overall)
	if err != nil {
		return nil, nil, err
	}
	secs := []render.Section{{Overall: true, Results: res}}
	sort.Strings(sc.order)
	for _, v := range sc.order {
		res, err := run(sc.groups[v])
		if err != nil {
			return nil, nil, fmt.Errorf("group %s: %w", v, err)
		}
		secs = append(secs, render.Section{Value: v, Results: res})
	}
	out := &Result{Sections: secs, Data: kept}
	if !resampled || sc.key == "" {
		return out, nil, nil
	}
	return out, &toStore, nil
}

// inRubricOrder puts the built fields in rubric order and adds the fields nobody rated, so
// that every report lists every scale and choice field, with its statistics undefined.
func (sc *scorer) inRubricOrder(data []agree.FieldData) []agree.FieldData {
	out := make([]agree.FieldData, 0, len(sc.fields))
	for _, f := range sc.fields {
		i := slices.IndexFunc(data, func(d agree.FieldData) bool { return d.Field.Name == f.Name })
		if i >= 0 {
			out = append(out, data[i])
			continue
		}
		d := agree.FieldData{Field: f, Items: []string{}, Raters: []string{}, Ratings: agree.NewMatrix(0, 0)}
		for _, j := range sc.judges {
			d.Judges = append(d.Judges, agree.NewJudge(j, 0))
		}
		out = append(out, d)
	}
	return out
}
