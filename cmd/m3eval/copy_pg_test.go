package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestFailedCopyLeavesNoEmptySchema (#38 item 9): a copy into a PostgreSQL schema that held
// no tables, which fails, removes the empty tables its open created, as a failed copy
// removes the SQLite file it created: a rerun does not find an empty campaign there.
func TestFailedCopyLeavesNoEmptySchema(t *testing.T) {
	pg := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	src := filepath.Join(t.TempDir(), "src.db")
	mustRun(t, "--db", src, "import", "--demo")
	// An import in progress in the source: copy refuses it, after opening the target.
	raw := storetest.RawDB(t, src, true)
	if _, err := raw.Exec(`INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
		VALUES ('big.jsonl', 'elsewhere', 1, '2026-03-01T09:00:00Z', '2026-03-01T09:00:00Z', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out, err := run(t, "copy", "--from", src, "--to", pg)
	if err == nil || !strings.Contains(err.Error(), "in progress or interrupted") {
		t.Fatalf("copy from a source with an import in progress: %v\n%s", err, out)
	}
	var n int
	if err := storetest.RawDB(t, pg, false).QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the failed copy left %d tables in the target schema", n)
	}
}
