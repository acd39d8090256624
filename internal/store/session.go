package store

import "github.com/m3bench/m3eval/internal/session"

// The store implements what the annotator's and the adjudicator's screens need of storage
// (declared in internal/session, in the session's types). The engines take *Store itself
// (docs/architecture.md says why), so these are the only interfaces the store implements.
var (
	_ session.Queue             = (*Queue)(nil)
	_ session.AdjudicationStore = (*Store)(nil)
)
