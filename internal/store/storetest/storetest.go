// Package storetest is the one home of the test fixtures that need a database: a store on a
// real SQLite file in the test's temporary directory (never :memory:, where each pooled
// connection would get its own empty database), closed when the test ends, and the same
// store with the demo episodes imported. Only tests import it.
//
// With $M3EVAL_TEST_BACKEND=postgres (and the server's DSN, postgres://…, in
// $M3EVAL_TEST_POSTGRES), every store these helpers open is on PostgreSQL instead, in a schema
// of its own dropped when the test ends: the same tests are then the conformance suite of the
// PostgreSQL backend. make test runs them both ways. $M3EVAL_TEST_POSTGRES alone only lets the
// tests that compare the backends side by side (RequirePostgres) run; the rest stay on SQLite,
// the default backend, which must be tested too.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for creating and dropping test schemas

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// PostgresEnv is the environment variable that holds the DSN of a PostgreSQL server the tests
// may use (scripts/with-postgres starts one and sets it).
const PostgresEnv = "M3EVAL_TEST_POSTGRES"

// BackendEnv is the environment variable that chooses the backend of every store these
// helpers open: "postgres" for PostgreSQL (on the server of PostgresEnv), else SQLite.
const BackendEnv = "M3EVAL_TEST_BACKEND"

// PostgresDSN is the DSN of the PostgreSQL server the tests may use, "" if none.
func PostgresDSN() string { return os.Getenv(PostgresEnv) }

// Postgres tells whether the stores these helpers open are on PostgreSQL.
func Postgres() bool { return os.Getenv(BackendEnv) == "postgres" }

// SQLiteOnly skips a test that is about SQLite itself (its files, locks, PRAGMAs) when the
// tests run on PostgreSQL; reason says why it has no PostgreSQL counterpart.
func SQLiteOnly(tb testing.TB, reason string) {
	tb.Helper()
	if Postgres() {
		tb.Skip("SQLite only: " + reason)
	}
}

// Path is where a test's database lives: a new file m3eval.db in the test's temporary
// directory, or, on PostgreSQL, a DSN naming a fresh schema (search_path), dropped with all
// its tables when the test ends. Opening the same Path twice opens the same database.
func Path(tb testing.TB) string {
	tb.Helper()
	if !Postgres() {
		return filepath.Join(tb.TempDir(), "m3eval.db")
	}
	dsn := PostgresDSN()
	if dsn == "" {
		tb.Fatalf("$%s=postgres but $%s is empty: give the server's postgres://… DSN", BackendEnv, PostgresEnv)
	}
	return PostgresPath(tb, dsn)
}

// PostgresPath is a DSN naming a fresh schema on the server of dsn, dropped with all its
// tables when the test ends.
func PostgresPath(tb testing.TB, dsn string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("$%s must be a postgres://… URL, not %q", PostgresEnv, dsn)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "m3eval_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		tb.Fatalf("create test schema on $%s: %v", PostgresEnv, err)
	}
	tb.Cleanup(func() {
		defer admin.Close()
		// Stores opened by the test are closed by now (cleanups run last first); a lock
		// timeout keeps a connection a test leaked from hanging the run.
		admin.ExecContext(ctx, `SET lock_timeout = '10s'`)
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Logf("drop test schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// RequirePostgres returns the PostgreSQL DSN for a test that compares the backends. Without
// one the test is skipped on a developer's machine, and fails in CI (CI=true), where a
// PostgreSQL server is always started: there a missing server must not pass as a skip.
func RequirePostgres(tb testing.TB) string {
	tb.Helper()
	dsn := PostgresDSN()
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true but $%s is empty: .ci/run starts a PostgreSQL server and must export its DSN", PostgresEnv)
		}
		tb.Skipf("no PostgreSQL server: set $%s to a postgres://… DSN to run this test", PostgresEnv)
	}
	return dsn
}

// Open opens a store on path, or on a fresh database (Path) when path is "", and closes it
// when the test ends. Its clock starts at 2026-03-01 09:00 UTC and
// advances a second on every reading (see Clock), so stored times are deterministic.
func Open(tb testing.TB, path string, opts store.Options) *store.Store {
	tb.Helper()
	if path == "" {
		path = Path(tb)
	}
	s, err := store.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	s.Now = Clock()
	tb.Cleanup(func() { s.Close() })
	return s
}

// Clock returns a clock that starts at 2026-03-01 09:00 UTC and advances a second on every
// reading. It is safe for concurrent use: the screens save from their own goroutines.
func Clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// Rubric is the annotation guide's rubric, which m3eval uses when --rubric is not given.
func Rubric(tb testing.TB) *rubric.Rubric {
	tb.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Demo opens a store as Open does (path "": in the test's temporary directory) and imports
// the demo episodes (annotations/demo/episodes.jsonl) into it, as m3eval import --demo does.
func Demo(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s := Open(tb, path, store.Options{})
	ImportDemo(tb, s)
	return s
}

// ImportDemo imports the demo episodes into s in one transaction.
func ImportDemo(tb testing.TB, s *store.Store) {
	tb.Helper()
	f, err := annotations.Demo.Open("demo/episodes.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	src := ingest.NewReader("episodes.jsonl", f)
	if _, err := Import(s, "episodes.jsonl", src, ingest.LabelOptions{Rubric: Rubric(tb)}); err != nil {
		tb.Fatal(err)
	}
}

// Import imports the records of src into s in one transaction, as m3eval import does: on
// an error nothing is written.
func Import(s *store.Store, name string, src ingest.Source, lo ingest.LabelOptions) (ingest.Counts, error) {
	ctx := context.Background()
	tx, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		return ingest.Counts{}, err
	}
	defer tx.Rollback()
	c, err := ingest.ImportFrom(ctx, tx, name, src, lo)
	if err != nil {
		return c, err
	}
	return c, tx.Commit()
}

// RawDB opens the database at path (a Path) beneath the store, for a test that looks at rows
// the store hides (an unfinished import's): the SQLite file read-only, or the PostgreSQL
// schema. Placeholders are the backend's own: write queries without them. Closed when the test
// ends.
func RawDB(tb testing.TB, path string, writable bool) *sql.DB {
	tb.Helper()
	var db *sql.DB
	var err error
	switch {
	case store.IsPostgres(path):
		db, err = sql.Open("pgx", path)
	case writable:
		db, err = sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	default:
		db, err = sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
