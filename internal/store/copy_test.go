package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openCopyEnd opens a store on a new SQLite file in the test's directory.
func openCopyEnd(t *testing.T, name string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCopyKnowsEveryTable: copyTables lists exactly the tables the migrations create (apart
// from schema_migrations), so a new migration's table cannot be left behind by copy.
func TestCopyKnowsEveryTable(t *testing.T) {
	s := openCopyEnd(t, "m3eval.db", Options{})
	names, err := tableNames(context.Background(), s, s.db)
	if err != nil {
		t.Fatal(err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "schema_migrations" })
	want := slices.Sorted(slices.Values(copyTables))
	if !slices.Equal(names, want) {
		t.Errorf("the schema's tables %v, copyTables %v", names, want)
	}
}

// dumpTables is every row of every copied table, as text, in primary-key order.
func dumpTables(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	for _, table := range copyTables {
		rows, err := s.db.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
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

// seedCopySource fills a source with rows in a few tables, a deleted import batch's id mark
// (batch ids are never reused) and a repeat annotator that refers to another.
func seedCopySource(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO episodes (id, episode_key) VALUES (1, 'ep1'), (7, 'ep7')`,
		`INSERT INTO turns (id, sample_id, episode_id, turn, action_type, task_type, user_message, vlm_response, expected_answer, images, model, meta, content_hash, import_batch)
		 VALUES (1, 'ep1_turn_1', 1, 1, 'initial', 't', 'q', 'a', 'e', '[]', 'm', NULL, x'00ff', 3),
		        (9, 'ep7_turn_1', 7, 1, 'mislead', 't', 'q2', 'a2', 'e2', '["x.png"]', 'm', '{"k": 1}', x'0102', NULL)`,
		`INSERT INTO annotators (id, name, repeat_of) VALUES (1, 'ann', NULL), (2, 'ann#repeat', 1)`,
		`INSERT INTO rubrics (version, body) VALUES ('v1', x'7b7d')`,
		`INSERT INTO annotations (id, turn_id, annotator_id, status, flagged, flag_reason, skip_seq, rubric_version, active_ms, created_at, updated_at, annotated_at, stale)
		 VALUES (5, 9, 1, 'done', 1, 'odd image', 2, 'v1', 1234, '2026-03-01T09:00:01Z', '2026-03-01T09:00:02Z', '2026-03-01T09:00:02Z', 1)`,
		`INSERT INTO annotation_values (annotation_id, field, value) VALUES (5, 'correctness', '4'), (5, 'comments', 'ünïcode ✓')`,
		`INSERT INTO changes (id, annotation_id, batch, kind, field, old_value, new_value, at, undone) VALUES (3, 5, 1, 'value', 'correctness', NULL, '4', '2026-03-01T09:00:01Z', 1)`,
		`INSERT INTO samples (id, name, seed, size, params, created_at) VALUES (1, 'pilot', 3, 2, '{}', '2026-03-01T09:00:00Z')`,
		`INSERT INTO sample_turns (sample_id, turn_id, stratum, inclusion_probability) VALUES (1, 1, 0, 0.5), (1, 9, 0, NULL)`,
		// A batch that ran and completed: its row is gone, its number stays used.
		`INSERT INTO import_batches (id, source, host, pid, started_at, heartbeat, first_turn, first_annotation) VALUES (3, 's', 'h', 1, 'x', 'x', 1, 1)`,
		`DELETE FROM import_batches`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestCopyRowsAndIDMarks: every row arrives as it was (types included: blobs stay blobs,
// NULL stays NULL), and the target goes on numbering import batches after the source's
// highest, which old rows still name.
func TestCopyRowsAndIDMarks(t *testing.T) {
	ctx := context.Background()
	from := openCopyEnd(t, "from.db", Options{})
	seedCopySource(t, from)
	to := openCopyEnd(t, "to.db", Options{Durable: true})
	rep, err := Copy(ctx, from, to, CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count("turns") != 2 || rep.Count("annotation_values") != 2 || rep.Replaced != 0 {
		t.Errorf("report %+v", rep)
	}
	want, got := dumpTables(t, from), dumpTables(t, to)
	for _, table := range copyTables {
		if !slices.Equal(want[table], got[table]) {
			t.Errorf("%s: source\n%q\ncopy\n%q", table, want[table], got[table])
		}
	}
	if len(got["turns"]) != 2 || !strings.Contains(got["turns"][0], "content_hash=[]uint8:[0 255]") {
		t.Errorf("turns copied as %q", got["turns"])
	}
	var next int64
	if err := to.wdb.QueryRowContext(ctx, `INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
		VALUES ('s', 'h', 1, 'x', 'x', 1, 1) RETURNING id`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next != 4 {
		t.Errorf("the target's next import batch is %d, want 4 (batch 3 was used in the source)", next)
	}
}

// TestCopyRefusals: a target with a campaign is refused and left as it was; Replace replaces
// it in one transaction; a failed copy leaves the target as it was; a source with an import
// batch open, and one database at both ends, are refused.
func TestCopyRefusals(t *testing.T) {
	ctx := context.Background()
	from := openCopyEnd(t, "from.db", Options{})
	seedCopySource(t, from)
	to := openCopyEnd(t, "to.db", Options{})
	if _, err := to.wdb.ExecContext(ctx, `INSERT INTO annotators (id, name) VALUES (40, 'zoe')`); err != nil {
		t.Fatal(err)
	}
	before := dumpTables(t, to)
	_, err := Copy(ctx, from, to, CopyOptions{})
	if !errors.Is(err, ErrTargetNotEmpty) || !strings.Contains(err.Error(), "1 annotators") {
		t.Fatalf("copy onto a target with an annotator: %v", err)
	}
	if after := dumpTables(t, to); !mapsEqual(before, after) {
		t.Errorf("a refused copy changed the target")
	}

	// A rubric alone is no campaign (opening for annotating records it).
	empty := openCopyEnd(t, "rubric-only.db", Options{})
	if _, err := empty.wdb.ExecContext(ctx, `INSERT INTO rubrics (version, body) VALUES ('v0', x'00')`); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, from, empty, CopyOptions{}); err != nil {
		t.Errorf("copy onto a target holding only a rubric: %v", err)
	}
	if got := dumpTables(t, empty)["rubrics"]; len(got) != 1 || !strings.Contains(got[0], "version=string:v1") {
		t.Errorf("rubrics after the copy: %q", got)
	}

	// A copy that fails half way (a row the target's schema refuses) leaves the target whole.
	if _, err := to.wdb.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON changes BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, from, to, CopyOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "table changes") {
		t.Fatalf("copy into a failing table: %v", err)
	}
	if after := dumpTables(t, to); !mapsEqual(before, after) {
		t.Errorf("a failed copy --replace changed the target")
	}
	if _, err := to.wdb.ExecContext(ctx, `DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	rep, err := Copy(ctx, from, to, CopyOptions{Replace: true})
	if err != nil || rep.Replaced != 1 {
		t.Fatalf("copy --replace: %+v, %v", rep, err)
	}
	if want, got := dumpTables(t, from), dumpTables(t, to); !mapsEqual(want, got) {
		t.Errorf("after copy --replace the target is not the source")
	}

	// The same file, opened twice.
	again, err := Open(ctx, from.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := Copy(ctx, from, again, CopyOptions{Replace: true}); err == nil || !strings.Contains(err.Error(), "same database") {
		t.Errorf("copy onto itself: %v", err)
	}

	// An import batch open in the source.
	if _, err := from.wdb.ExecContext(ctx, `INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
		VALUES ('big.jsonl', 'hostA', 77, '2026-03-01T09:00:00Z', 'x', 100, 100)`); err != nil {
		t.Fatal(err)
	}
	fresh := openCopyEnd(t, "fresh.db", Options{})
	if _, err := Copy(ctx, from, fresh, CopyOptions{}); err == nil || !strings.Contains(err.Error(), "import of big.jsonl in progress or interrupted") {
		t.Errorf("copy of a source with an open import batch: %v", err)
	}
	var n int
	if err := fresh.db.QueryRowContext(ctx, `SELECT count(*) FROM turns`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the refused copy wrote %d turns (%v)", n, err)
	}
}

func mapsEqual(a, b map[string][]string) bool {
	for _, table := range copyTables {
		if !slices.Equal(a[table], b[table]) {
			return false
		}
	}
	return true
}
