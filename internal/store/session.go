package store

import "github.com/m3bench/m3eval/internal/session"

// The store implements what the annotator's and the adjudicator's screens need of storage
// (declared in internal/session, in the session's types). The other consumers' interfaces
// (workflow.Store, scoring.Store, …) import this package for its filter and row types, so
// their assertions cannot live here without an import cycle: they are in
// cmd/m3eval/stores.go, where every consumer meets the concrete store.
var (
	_ session.Queue             = (*Queue)(nil)
	_ session.AdjudicationStore = (*Store)(nil)
)
