package main

import (
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/ppi"
	"github.com/m3bench/m3eval/internal/testkit"
)

// estimateFixture (internal/testkit's estimate fixture, which internal/estimate's tests
// import through the importer; here for TestReportModelScores) imports the fixture through
// the command line and returns the database and, per model and field, the ppi.Data the
// command should build from it.
func estimateFixture(t *testing.T) (string, map[string]map[string]*ppi.Data) {
	t.Helper()
	fx := testkit.WriteEstimateFixture(t)
	db := filepath.Join(fx.Dir, "m3eval.db")
	mustRun(t, "--db", db, "import", fx.TurnsFile)
	for _, a := range fx.Annotators {
		mustRun(t, "--db", db, "import", "--annotator", a, fx.LabelFiles[a])
	}
	mustRun(t, "--db", db, "import-scores", "--judge", "j", fx.JudgeFile)
	return db, fx.Want
}
