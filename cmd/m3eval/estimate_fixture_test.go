package main

import (
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/testkit"
)

// estimateFixture (internal/testkit's estimate fixture, which internal/estimate's tests
// import through the importer; here for TestReportModelScores) imports the fixture through
// the command line and returns the database.
func estimateFixture(t *testing.T) string {
	t.Helper()
	fx := testkit.WriteEstimateFixture(t)
	db := filepath.Join(fx.Dir, "m3eval.db")
	mustRun(t, "--db", db, "import", fx.TurnsFile)
	for _, a := range fx.Annotators {
		mustRun(t, "--db", db, "import", "--annotator", a, fx.LabelFiles[a])
	}
	mustRun(t, "--db", db, "import-scores", "--judge", "j", fx.JudgeFile)
	return db
}
