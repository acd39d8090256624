package estimate

import (
	"context"

	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

// Store is what m3eval estimate reads of storage (Run), declared here so that a storage
// backend has the list to implement. *store.Store implements it (asserted in cmd/m3eval).
type Store interface {
	// JudgeLister checks the judge's name, with the message m3eval score gives.
	scoring.JudgeLister
	// SampleInclusion returns, by sample id, the inclusion probability of every turn of
	// the stored active sample name.
	SampleInclusion(ctx context.Context, name string) (map[string]float64, error)
	// StreamEstimate calls score for every stored score of the judge on the chosen fields,
	// then label for every done, current value of those fields, both in queue order and in
	// one read transaction; the row is reused.
	StreamEstimate(ctx context.Context, f store.EstimateFilter, score, label func(*store.EstimateRow) error) error
}
