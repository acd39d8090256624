package report

import (
	"context"
	"github.com/m3bench/m3eval/internal/sample"

	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

// Store is what m3eval report reads of storage (Request.Run, Collect, Generate), declared
// here so that a storage backend has the list to implement: what the engines the report
// runs read (scoring, estimate, workflow's QC, the rule judge's metrics), and the campaign's
// counts and activity that only the report draws. *store.Store implements it (asserted in
// cmd/m3eval).
type Store interface {
	scoring.ScoreReader
	estimate.Store // also scoring.JudgeLister, which checks --judge
	workflow.Reviewer
	judgerun.EpisodeReader
	// ExportAnnotators lists the annotators whose labels an export with o contains.
	ExportAnnotators(ctx context.Context, o store.ExportOptions) ([]string, error)
	// Status reads the summary of m3eval status: turns, episodes, each annotator's counts.
	Status(ctx context.Context) (*store.Status, error)
	// LabelCounts counts the done labels of the fields by turn position, number of
	// confusable objects and value (the trend charts).
	LabelCounts(ctx context.Context, fields []string) ([]store.LabelCount, error)
	// StreamActivity calls fn for every annotation, by annotator then submission time, in
	// one read transaction; the record passed is reused.
	StreamActivity(ctx context.Context, fn func(*store.Activity) error) error
	// SampleStrata counts the turns by the values of attributes (the grouping chosen from
	// the data).
	SampleStrata(ctx context.Context, p store.SampleParams) ([]sample.Count, error)
}
