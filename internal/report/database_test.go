package report_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestReportNamesTheDatabase: the report's inputs (and title) name the database readably — a
// file by its base name, a PostgreSQL address by its database and schema, not the address's
// last path element with its host and query (before: "postgres?host=…&search_path=…").
func TestReportNamesTheDatabase(t *testing.T) {
	run := func(t *testing.T, db, want string) {
		s := storetest.Demo(t, db)
		rep, err := (&report.Request{Options: report.Options{QC: true}}).Build(context.Background(), s, storetest.Rubric(t))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, kv := range rep.Inputs {
			if kv.Key == "database" {
				got = kv.Value
			}
		}
		if got != want || !strings.HasSuffix(rep.Title, "· "+want) {
			t.Errorf("database %q, title %q; want %q", got, rep.Title, want)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, filepath.Join(t.TempDir(), "pilot.db"), "pilot.db")
	})
	t.Run("postgres", func(t *testing.T) {
		db := storetest.PostgresPath(t, storetest.RequirePostgres(t))
		u, err := url.Parse(db)
		if err != nil {
			t.Fatal(err)
		}
		run(t, db, strings.Trim(u.Path, "/")+"-"+u.Query().Get("search_path"))
	})
}
