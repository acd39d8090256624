package scoring

import (
	"context"

	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/store"
)

// The storage scoring needs, declared by the functions that call it (as wtf and litestream
// declare theirs): a backend implements these methods. *store.Store implements all of them
// (asserted in cmd/m3eval).

// ScoreReader streams the labels and judge scores that agreement is computed from (Run).
type ScoreReader interface {
	// StreamScoring calls rating for every value of the chosen fields in the chosen
	// annotations, then score for every stored score of the chosen judges, in one read
	// transaction and in a fixed order (queue order, then annotator or judge name).
	StreamScoring(ctx context.Context, f store.ScoreFilter, rating, score func(*store.ScoreRow) error) error
}

// JudgeLister checks judge names against the database (ChooseJudges).
type JudgeLister interface {
	// Judges lists the automatic judges in the database, by name.
	Judges(ctx context.Context) ([]string, error)
	// Path names the database in messages.
	Path() string
}

// Store is everything m3eval score calls (Score): the list a storage backend implements
// for it. The rule judge's action-space metrics (--metrics) read episodes through
// judgerun.
type Store interface {
	ScoreReader
	JudgeLister
	judgerun.EpisodeReader
	// ExportAnnotators lists the annotators whose labels an export with these options
	// contains: here, who has a label that counts.
	ExportAnnotators(ctx context.Context, o store.ExportOptions) ([]string, error)
	// Status counts the turns and each annotator's labels (Run: is there anything to score).
	Status(ctx context.Context) (*store.Status, error)
}
