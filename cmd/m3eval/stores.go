package main

import (
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

// The store implements what the engines not yet moved to *store.Store declare they need of
// storage (a store.go in each; estimate, report, workflow and importer take *store.Store, docs/architecture.md
// says why). The assertions live here, where every engine meets the concrete store: in
// internal/store they would make an import cycle, since the engines import store for its
// filter and row types. The annotator's and adjudicator's interfaces (internal/session)
// are asserted in internal/store itself. Both backends (SQLite and PostgreSQL) are this one
// type, so these lines cover both.
//
// Beyond these lists the commands themselves call Close and RememberRubric (common.go). Of the
// store's writers, ingest fills *store.Importer through ingest.Sink; Importer.PutTurn is
// called only by tests.
var (
	_ scoring.Store  = (*store.Store)(nil)
	_ judgerun.Store = (*store.Store)(nil)
	// judge --explain SAMPLE_ID --name NAME (judgerun.Request.ExplainStored).
	_ judgerun.StoredJudgeReader = (*store.Store)(nil)
)
