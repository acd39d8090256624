package importer

import (
	"context"

	"github.com/m3bench/m3eval/internal/store"
)

// Store is what m3eval import and import-scores need of storage (New, Scores), declared
// here so that a storage backend has the list to implement. *store.Store implements it
// (asserted in cmd/m3eval). Both return the store's own writers, which ingest fills
// through ingest.Sink and the score reader through PutScore.
type Store interface {
	// BeginImport starts an import of turn records: its rows stay invisible until Commit,
	// and Rollback leaves nothing.
	BeginImport(ctx context.Context, opts store.ImportOptions) (*store.Importer, error)
	// BeginScoreImport starts importing scores of the named judge, creating the judge on
	// first use.
	BeginScoreImport(ctx context.Context, judge string, opts store.ImportOptions) (*store.ScoreImporter, error)
}
