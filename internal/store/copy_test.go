package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// copyEnd opens a store of one kind, "sqlite" (a new file in the test's directory) or
// "postgres" (a fresh schema on $M3EVAL_TEST_POSTGRES), whatever the other tests run on.
func copyEnd(t *testing.T, kind string, opts store.Options) *store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m3eval.db")
	if kind == "postgres" {
		path = storetest.PostgresPath(t, storetest.RequirePostgres(t))
	}
	return storetest.Open(t, path, opts)
}

// copyPairs runs f for every pair of backends a copy can go between: SQLite to SQLite always,
// and the pairs with PostgreSQL when there is a server (in CI always: RequirePostgres).
func copyPairs(t *testing.T, f func(t *testing.T, from, to string)) {
	for _, p := range [][2]string{{"sqlite", "sqlite"}, {"sqlite", "postgres"}, {"postgres", "sqlite"}, {"postgres", "postgres"}} {
		t.Run(p[0]+"→"+p[1], func(t *testing.T) { f(t, p[0], p[1]) })
	}
}

// TestCopyKnowsEveryTable: Copy's table list is exactly the tables the migrations create
// (schema_migrations apart), on both backends, so a new migration's table cannot be left
// behind by copy.
func TestCopyKnowsEveryTable(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			s := copyEnd(t, kind, store.Options{})
			q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`
			if store.IsPG(s) {
				q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
			}
			rows, err := store.RawDB(s).Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var names []string
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != "schema_migrations" {
					names = append(names, n)
				}
			}
			if want := slices.Sorted(slices.Values(store.CopyTables())); !slices.Equal(names, want) {
				t.Errorf("the schema's tables %v, Copy's %v", names, want)
			}
		})
	}
}

// dumpTables is every row of every copied table, as text, sorted; a PostgreSQL boolean reads
// as SQLite's 0/1, the one type the backends spell differently.
func dumpTables(t *testing.T, s *store.Store) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range store.CopyTables() {
		rows, err := store.RawDB(s).Query(`SELECT * FROM ` + store.QuoteIdent(table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		slices.Sort(cols) // the backends' column orders differ; names do not
		rows.Close()
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = store.QuoteIdent(c)
		}
		rows, err = store.RawDB(s).Query(`SELECT ` + strings.Join(quoted, ", ") + ` FROM ` + store.QuoteIdent(table))
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if x, ok := v.(bool); ok {
					v = int64(0)
					if x {
						v = int64(1)
					}
				}
				fmt.Fprintf(&b, "%s=%T:%v ", cols[i], v, v)
			}
			out[table] = append(out[table], b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		slices.Sort(out[table])
	}
	return out
}

func sameTables(a, b map[string][]string) bool {
	for _, table := range store.CopyTables() {
		if !slices.Equal(a[table], b[table]) {
			return false
		}
	}
	return true
}

// exec runs statements on s below the store's API, failing the test on an error.
func execRaw(t *testing.T, s *store.Store, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := store.RawDB(s).Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// seedCopySource fills a source with rows in many tables (a blob, a NULL, a boolean, text
// beyond ASCII, a repeat annotator that refers to another) and uses up import batch numbers
// 1-3 the way completed imports do: their rows are gone, their numbers stay used.
func seedCopySource(t *testing.T, s *store.Store) {
	t.Helper()
	db := store.RawDB(s)
	for i := 0; i < 3; i++ {
		if _, err := db.Exec(`INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
			VALUES ('s', 'h', 1, 'x', 'x', 1, 1)`); err != nil {
			t.Fatal(err)
		}
	}
	execRaw(t, s, `DELETE FROM import_batches`,
		`INSERT INTO episodes (id, episode_key) VALUES (1, 'ep1'), (7, 'ep7')`)
	if _, err := db.Exec(`INSERT INTO turns (id, sample_id, episode_id, turn, action_type, task_type, user_message, vlm_response, expected_answer, images, model, meta, content_hash, import_batch)
		VALUES (1, 'ep1_turn_1', 1, 1, 'initial', 't', 'q', 'a', 'e', '[]', 'm', NULL, ?, 3),
		       (9, 'ep7_turn_1', 7, 1, 'mislead', 't', 'q2', 'a2', 'e2', '["x.png"]', 'm', '{"k": 1}', ?, NULL)`,
		[]byte{0, 255}, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO rubrics (version, body) VALUES ('v1', ?)`, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	execRaw(t, s,
		`INSERT INTO annotators (id, name, repeat_of) VALUES (1, 'ann', NULL), (2, 'ann#repeat', 1)`,
		`INSERT INTO annotations (id, turn_id, annotator_id, status, flagged, flag_reason, skip_seq, rubric_version, active_ms, created_at, updated_at, annotated_at, stale)
		 VALUES (5, 9, 1, 'done', true, 'odd image', 2, 'v1', 1234, '2026-03-01T09:00:01Z', '2026-03-01T09:00:02Z', '2026-03-01T09:00:02Z', true)`,
		`INSERT INTO annotation_values (annotation_id, field, value) VALUES (5, 'correctness', '4'), (5, 'comments', 'ünïcode ✓ 中文')`,
		`INSERT INTO changes (id, annotation_id, batch, kind, field, old_value, new_value, at, undone) VALUES (3, 5, 1, 'value', 'correctness', NULL, '4', '2026-03-01T09:00:01Z', true)`,
		`INSERT INTO samples (id, name, seed, size, params, created_at) VALUES (1, 'pilot', 3, 2, '{}', '2026-03-01T09:00:00Z')`,
		`INSERT INTO sample_turns (sample_id, turn_id, stratum, inclusion_probability) VALUES (1, 1, 0, 0.5), (1, 9, 0, NULL)`,
	)
}

// TestCopyRowsAndIDMarks: every row arrives as it was (blobs stay blobs, NULL stays NULL,
// booleans stay true), and the target goes on numbering import batches after the source's
// highest number, which old rows still name — on every pair of backends.
func TestCopyRowsAndIDMarks(t *testing.T) {
	copyPairs(t, func(t *testing.T, fromKind, toKind string) {
		ctx := context.Background()
		from := copyEnd(t, fromKind, store.Options{})
		seedCopySource(t, from)
		to := copyEnd(t, toKind, store.Options{Durable: true})
		rep, err := store.Copy(ctx, from, to, store.CopyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Count("turns") != 2 || rep.Count("annotation_values") != 2 || rep.Replaced != 0 {
			t.Errorf("report %+v", rep)
		}
		want, got := dumpTables(t, from), dumpTables(t, to)
		for _, table := range store.CopyTables() {
			if !slices.Equal(want[table], got[table]) {
				t.Errorf("%s: source\n%q\ncopy\n%q", table, want[table], got[table])
			}
		}
		if len(got["turns"]) != 2 || !strings.Contains(got["turns"][0], "content_hash=[]uint8:[0 255]") {
			t.Errorf("turns copied as %q", got["turns"])
		}
		var next int64
		if err := store.RawDB(to).QueryRow(`INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
			VALUES ('s', 'h', 1, 'x', 'x', 1, 1) RETURNING id`).Scan(&next); err != nil {
			t.Fatal(err)
		}
		if next != 4 {
			t.Errorf("the target's next import batch is %d, want 4 (batch 3 was used in the source)", next)
		}
		// The ids of the other tables go on after the copied rows too (PostgreSQL's sequences
		// do not move when rows come with their ids).
		var ep int64
		if err := store.RawDB(to).QueryRow(`INSERT INTO episodes (episode_key) VALUES ('new') RETURNING id`).Scan(&ep); err != nil || ep != 8 {
			t.Errorf("the target's next episode is %d (%v), want 8", ep, err)
		}
	})
}

// TestCopyRefusals: a target with a campaign is refused and left as it was; Replace replaces
// it in one transaction; a copy that fails half way leaves the target as it was; a source
// with an import batch open, and one database at both ends, are refused.
func TestCopyRefusals(t *testing.T) {
	copyPairs(t, func(t *testing.T, fromKind, toKind string) {
		ctx := context.Background()
		from := copyEnd(t, fromKind, store.Options{})
		seedCopySource(t, from)
		to := copyEnd(t, toKind, store.Options{})
		execRaw(t, to, `INSERT INTO annotators (id, name) VALUES (40, 'zoe')`)
		before := dumpTables(t, to)
		_, err := store.Copy(ctx, from, to, store.CopyOptions{})
		if !errors.Is(err, store.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "holds 1 annotator;") {
			t.Fatalf("copy onto a target with an annotator: %v", err)
		}
		if !sameTables(before, dumpTables(t, to)) {
			t.Errorf("a refused copy changed the target")
		}

		// A rubric alone is no campaign (opening for annotating records it).
		empty := copyEnd(t, toKind, store.Options{})
		if _, err := store.RawDB(empty).Exec(`INSERT INTO rubrics (version, body) VALUES ('v0', ?)`, []byte{0}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Copy(ctx, from, empty, store.CopyOptions{}); err != nil {
			t.Errorf("copy onto a target holding only a rubric: %v", err)
		}
		if got := dumpTables(t, empty)["rubrics"]; len(got) != 1 || !strings.Contains(got[0], "version=string:v1") {
			t.Errorf("rubrics after the copy: %q", got)
		}

		// A copy that fails half way (rows the target refuses) leaves the target whole.
		refuse, allow := `CREATE TRIGGER refuse BEFORE INSERT ON changes BEGIN SELECT RAISE(ABORT, 'refused'); END`, `DROP TRIGGER refuse`
		if store.IsPG(to) {
			refuse, allow = `ALTER TABLE changes ADD CONSTRAINT refuse CHECK (batch < 0)`, `ALTER TABLE changes DROP CONSTRAINT refuse`
		}
		execRaw(t, to, refuse)
		if _, err := store.Copy(ctx, from, to, store.CopyOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "table changes") {
			t.Fatalf("copy into a failing table: %v", err)
		}
		if !sameTables(before, dumpTables(t, to)) {
			t.Errorf("a failed copy --replace changed the target")
		}
		execRaw(t, to, allow)
		rep, err := store.Copy(ctx, from, to, store.CopyOptions{Replace: true})
		if err != nil || rep.Replaced != 1 {
			t.Fatalf("copy --replace: %+v, %v", rep, err)
		}
		if !sameTables(dumpTables(t, from), dumpTables(t, to)) {
			t.Errorf("after copy --replace the target is not the source")
		}

		// The same database, opened twice.
		again := storetest.Open(t, from.Path(), store.Options{})
		if _, err := store.Copy(ctx, again, from, store.CopyOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "same database") {
			t.Errorf("copy onto itself: %v", err)
		}

		// An import batch open in the source.
		execRaw(t, from, `INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
			VALUES ('big.jsonl', 'hostA', 77, '2026-03-01T09:00:00Z', 'x', 100, 100)`)
		fresh := copyEnd(t, toKind, store.Options{})
		if _, err := store.Copy(ctx, from, fresh, store.CopyOptions{}); err == nil || !strings.Contains(err.Error(), "import of big.jsonl in progress or interrupted") {
			t.Errorf("copy of a source with an open import batch: %v", err)
		}
		var n int
		if err := store.RawDB(fresh).QueryRow(`SELECT count(*) FROM turns`).Scan(&n); err != nil || n != 0 {
			t.Errorf("the refused copy wrote %d turns (%v)", n, err)
		}
	})
}

// TestCopyTextPostgresCannotHold: text SQLite holds and PostgreSQL's text cannot (a NUL byte,
// bytes that are not UTF-8) stops a copy into PostgreSQL with a sentence naming the table,
// the row and the column, and the target stays empty.
func TestCopyTextPostgresCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{"NUL", "a\x00b", "NUL byte"},
		{"not UTF-8", "caf\xe9", "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := copyEnd(t, "sqlite", store.Options{})
			seedCopySource(t, from)
			if _, err := store.RawDB(from).Exec(`UPDATE annotation_values SET value = ? WHERE field = 'comments'`, tc.value); err != nil {
				t.Fatal(err)
			}
			to := copyEnd(t, "postgres", store.Options{})
			_, err := store.Copy(context.Background(), from, to, store.CopyOptions{})
			if err == nil || !strings.Contains(err.Error(), "table annotation_values: the row with annotation_id = 5: column value holds") ||
				!strings.Contains(err.Error(), tc.want) {
				t.Fatalf("copy of %q: %v", tc.value, err)
			}
			if got := dumpTables(t, to); got["turns"] != nil || got["episodes"] != nil {
				t.Errorf("the failed copy left rows: %v", got["turns"])
			}
		})
	}
}
