package e2e

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
)

// The end-to-end tests that prove a saving guarantee (kill -9, key bursts, serve) run on both
// store backends: the same test, with the database an SQLite file or a PostgreSQL schema.

// onBackends runs f as one subtest per backend, "sqlite" and "postgres"; newDB gives the
// subtest a new, empty database: a file named name in a temporary directory, or a fresh
// PostgreSQL schema (postgresPath: skipped without a server, failed in CI).
func onBackends(t *testing.T, f func(t *testing.T, newDB func(name string) string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(name string) string { return filepath.Join(t.TempDir(), name) })
	})
	t.Run("postgres", func(t *testing.T) {
		postgresPath(t) // before any work: the skip or failure comes first
		f(t, func(string) string { return postgresPath(t) })
	})
}

// openRaw opens a database for a test's own queries, read-only where the backend allows,
// with its placeholder style: "?" for SQLite, "$1" for PostgreSQL.
func openRaw(t *testing.T, db string) (conn *sql.DB, pg bool) {
	t.Helper()
	var err error
	if store.IsPostgres(db) {
		conn, err = sql.Open("pgx", db) // registered by storetest
		pg = true
	} else {
		conn, err = sql.Open("sqlite3", "file:"+db+"?mode=ro&_busy_timeout=5000")
	}
	if err != nil {
		t.Fatal(err)
	}
	return conn, pg
}

// quoteShell quotes a word for sh: a DSN holds ? and &.
func quoteShell(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
