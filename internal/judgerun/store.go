package judgerun

import (
	"context"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
)

// The storage judgerun needs, declared by the functions that call it (wtf's DialService,
// litestream's ReplicaClient): a backend implements these methods, and each function asks
// for no more than it calls. *store.Store implements all of them (asserted in cmd/m3eval).

// EpisodeReader reads the imported turns an episode at a time: what a rule judge reads
// (Explain, Metrics, RubricMetrics).
type EpisodeReader interface {
	// StreamEpisodes calls fn once per episode holding a turn the filter chooses, with
	// all of the episode's turns in turn order, each turn's id and whether the filter
	// chose it; episodes in queue order, in one read transaction.
	StreamEpisodes(ctx context.Context, f store.TurnFilter, fn func(turns []dataset.Turn, ids []int64, chosen []bool) error) error
}

// RuleJudgeStore is what a rule-based judge run reads and writes (Judge, Request.Run).
type RuleJudgeStore interface {
	EpisodeReader
	// BeginJudgeRun starts storing the scores of a rule judge made with the rule set of
	// version (body: the rule file); scores made with other rules are a conflict unless
	// replace.
	BeginJudgeRun(ctx context.Context, judge, version string, body []byte, replace bool) (*store.ScoreImporter, error)
}

// ModelJudgeStore is what a model judge run reads and writes (JudgeModel,
// Request.RunModel).
type ModelJudgeStore interface {
	// StartModelJudge records the version of a run and returns the turns already scored
	// with it, which a rerun skips; another version's scores are a conflict unless replace.
	StartModelJudge(ctx context.Context, judge string, v store.ModelJudgeVersion, replace bool) (map[int64]bool, error)
	// StreamJudgeTurns is StreamEpisodes with the turns' images, which the model is sent.
	StreamJudgeTurns(ctx context.Context, f store.TurnFilter, fn func(turns []dataset.Turn, ids []int64, chosen []bool) error) error
	// PutModelJudgeTurns stores judged turns: their scores, then the rows that mark them
	// scored, so a run killed between the two asks for them again.
	PutModelJudgeTurns(ctx context.Context, judge, version string, turns []store.ModelJudgeTurn) error
}

// Store is everything judgerun calls: the list a storage backend implements for m3eval
// judge.
type Store interface {
	RuleJudgeStore
	ModelJudgeStore
}
