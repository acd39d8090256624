package workflow

import (
	"context"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
)

// The storage the team's workflow needs, declared by the functions that call it (wtf's
// DialService, litestream's ReplicaClient): each function takes the smallest of these, and
// Store, which the commands take, is the whole list a storage backend implements.
// *store.Store implements all of them (asserted in cmd/m3eval).

// SampleStore draws, stores and reads samples (Sample; m3eval sample --list and --show).
type SampleStore interface {
	// Sample reads the stored sample of that name; store.ErrNotFound if there is none.
	Sample(ctx context.Context, name string) (*store.SampleInfo, error)
	// Samples lists the stored samples, oldest first, with their strata.
	Samples(ctx context.Context) ([]store.SampleInfo, error)
	// SampleInclusion returns, by sample id, the inclusion probability of every turn of
	// the stored active sample name.
	SampleInclusion(ctx context.Context, name string) (map[string]float64, error)
	// SampleStrata counts the visible turns that match p.Where, grouped by p.By.
	SampleStrata(ctx context.Context, p store.SampleParams) ([]sample.Count, error)
	// SampleTurnIDs returns the turns at the given 0-based positions (ascending) of a
	// stratum in queue order.
	SampleTurnIDs(ctx context.Context, p store.SampleParams, key []string, positions []int) ([]int64, error)
	// SaveSample stores a drawn sample under its name, in one transaction; a name in use
	// is store.ErrConflict.
	SaveSample(ctx context.Context, info store.SampleInfo, strata []sample.Stratum) error
}

// ActiveSampleStore is what m3eval sample --active reads and writes (ActiveSample): the
// judges' scores, which it draws by, and the sample it saves.
type ActiveSampleStore interface {
	scoring.JudgeLister
	judgerun.EpisodeReader
	Sample(ctx context.Context, name string) (*store.SampleInfo, error)
	SaveSample(ctx context.Context, info store.SampleInfo, strata []sample.Stratum) error
	// JudgeIsRuleJudge tells whether the named judge's scores come from the rule judge.
	JudgeIsRuleJudge(ctx context.Context, name string) (bool, error)
	// StreamTurnScores calls fn for every stored score of the fields by any judge, turn by
	// turn in queue order.
	StreamTurnScores(ctx context.Context, fields []string, fn func(*store.TurnScore) error) error
}

// AssignStore is what m3eval assign reads and writes (Assign).
type AssignStore interface {
	// Campaign reads the assignment of the named sample.
	Campaign(ctx context.Context, name string) (*store.Campaign, error)
	// SampleTurns lists the sample's turns in queue order.
	SampleTurns(ctx context.Context, name string) ([]store.SampleTurn, error)
	// Started lists, for the given turns, which annotators have an annotation of them:
	// work that must not move.
	Started(ctx context.Context, turnIDs []int64) (map[int64][]string, error)
	// GoldTurns lists the turns with a known label, in queue order.
	GoldTurns(ctx context.Context) ([]store.SampleTurn, error)
	// SaveAssignment replaces the sample's assignment with rows in one transaction; it
	// refuses (store.ErrConflict) to drop a started turn.
	SaveAssignment(ctx context.Context, name string, set store.CampaignSettings, rows []store.Assigned) error
	// PutGoldLabels stores known labels in one transaction and returns the turns' ids in
	// the order given.
	PutGoldLabels(ctx context.Context, source string, labels []store.GoldLabel) ([]int64, error)
}

// Reviewer reads the submitted labels of a campaign, or of everybody with campaign ""
// (QC).
type Reviewer interface {
	Review(ctx context.Context, campaign string) (*store.ReviewData, error)
}

// CaseStore is what adjudication reads and writes (Cases, Decide).
type CaseStore interface {
	Reviewer
	// Finals reads every adjudicated value, by sample_id and field.
	Finals(ctx context.Context) (map[string]map[string]campaign.Decision, error)
	// SetFinal records final values in one transaction, all or none.
	SetFinal(ctx context.Context, edits ...session.FinalEdit) error
}

// ExportStore is what m3eval export reads (Export, ExportFinal).
type ExportStore interface {
	Campaign(ctx context.Context, name string) (*store.Campaign, error)
	Finals(ctx context.Context) (map[string]map[string]campaign.Decision, error)
	// Export streams the labeled turns in queue order, each once with all its labels.
	Export(ctx context.Context, o store.ExportOptions, fn func(*dataset.Labeled) error) error
	// ExportAnnotators lists the annotators whose labels an export with o contains.
	ExportAnnotators(ctx context.Context, o store.ExportOptions) ([]string, error)
}

// TeamStore is what the team's status reads (TeamStatus, TeamScreen).
type TeamStore interface {
	Reviewer
	// Status reads the summary of m3eval status.
	Status(ctx context.Context) (*store.Status, error)
}

// QueueStore opens an annotator's queue (AnnotatorQueue, CampaignQueue).
type QueueStore interface {
	// IsRepeatRow tells whether name is the hidden row of someone's repeated labels.
	IsRepeatRow(ctx context.Context, name string) (bool, error)
	// CampaignOf names the latest campaign that gives the annotator turns, "" if none.
	CampaignOf(ctx context.Context, annotator string) (string, error)
	// OpenQueue returns the annotator's queue over every turn the filter keeps.
	OpenQueue(ctx context.Context, annotator string, f store.Filter) (*store.Queue, error)
	// OpenCampaignQueue returns the annotator's queue of the campaign's turns.
	OpenCampaignQueue(ctx context.Context, annotator, campaign string, f store.Filter) (*store.Queue, error)
	// OpenRepeatQueue returns the annotator's queue of the campaign's repeated turns.
	OpenRepeatQueue(ctx context.Context, annotator, campaign string, f store.Filter) (*store.Queue, error)
	// Path names the database in messages.
	Path() string
}

// Store is everything the workflow's commands call (Command.Run): the list a storage
// backend implements for m3eval sample, assign, qc, adjudicate, export, status and
// annotate.
type Store interface {
	SampleStore
	ActiveSampleStore
	AssignStore
	CaseStore
	ExportStore
	TeamStore
	QueueStore
}
