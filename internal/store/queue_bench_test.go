package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// fillTurns writes n synthetic turns (10 per episode) straight into the database with one
// recursive INSERT, which is far faster than importing them, for benchmarks of large queues.
func fillTurns(tb testing.TB, path string, n int) {
	tb.Helper()
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, step := range []struct {
		query string
		arg   int
	}{
		{`WITH RECURSIVE e(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM e WHERE i < ?)
		 INSERT INTO episodes (id, episode_key) SELECT i, 'ep' || i FROM e`, n / 10},
		{`WITH RECURSIVE t(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM t WHERE i < ? - 1)
		 INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type, user_message, vlm_response,
		   expected_answer, images, model, meta, content_hash)
		 SELECT 'ep' || (i / 10 + 1) || '_turn_' || (i % 10 + 1), i / 10 + 1, i % 10 + 1,
		   CASE i % 5 WHEN 0 THEN 'initial' WHEN 1 THEN 'mislead' WHEN 2 THEN 'follow_up' WHEN 3 THEN 'update' ELSE 'guidance' END,
		   'causal_reasoning', 'Why is the person holding an umbrella?', 'Because it is raining: the ground is wet.',
		   'It is raining', '[]', 'm', NULL, randomblob(16) FROM t`, n},
	} {
		if _, err := db.Exec(step.query, step.arg); err != nil {
			tb.Fatal(err)
		}
	}
}

// fillTurnsPostgres is fillTurns on PostgreSQL (dsn names a fresh schema), with
// generate_series, and ANALYZE after it.
func fillTurnsPostgres(tb testing.TB, dsn string, n int) {
	tb.Helper()
	s, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s.Close()
	db := storetest.RawDB(tb, dsn, true)
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO episodes (id, episode_key) SELECT i, 'ep' || i FROM generate_series(1, %d) i`, n/10),
		fmt.Sprintf(`INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type, user_message, vlm_response,
		   expected_answer, images, model, meta, content_hash)
		 SELECT 'ep' || (i / 10 + 1) || '_turn_' || (i %% 10 + 1), i / 10 + 1, i %% 10 + 1,
		   CASE i %% 5 WHEN 0 THEN 'initial' WHEN 1 THEN 'mislead' WHEN 2 THEN 'follow_up' WHEN 3 THEN 'update' ELSE 'guidance' END,
		   'causal_reasoning', 'Why is the person holding an umbrella?', 'Because it is raining: the ground is wet.',
		   'It is raining', '[]', 'm', NULL, decode(md5(i::text), 'hex') FROM generate_series(0, %d - 1) i`, n),
		`SELECT setval(pg_get_serial_sequence('episodes', 'id'), (SELECT max(id) FROM episodes))`,
		`ANALYZE`,
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkOpenQueue1MPostgres is BenchmarkOpenQueue1M on PostgreSQL ($M3EVAL_TEST_POSTGRES):
// the same 1,000,000 turns, the same steps (target: under 300 ms).
func BenchmarkOpenQueue1MPostgres(b *testing.B) {
	dsn := storetest.PostgresPath(b, storetest.RequirePostgres(b))
	fillTurnsPostgres(b, dsn, 1_000_000)
	ctx := context.Background()
	// fresh: just imported; vacuumed: after autovacuum's pass, which a large insert triggers
	// soon after (counts then read an index alone, without the table).
	for _, state := range []string{"fresh", "vacuumed"} {
		if state == "vacuumed" {
			if _, err := storetest.RawDB(b, dsn, true).Exec(`VACUUM ANALYZE`); err != nil {
				b.Fatal(err)
			}
		}
		for _, filter := range []store.Filter{nil, {"action_type": {"mislead"}}} {
			name := state + "/all"
			if filter != nil {
				name = state + "/mislead"
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					start := time.Now()
					s, err := store.Open(ctx, dsn, store.Options{Durable: true})
					if err != nil {
						b.Fatal(err)
					}
					q, err := s.OpenQueue(ctx, "bench", filter)
					if err != nil {
						b.Fatal(err)
					}
					if n, _ := openFirst(b, q); n == 0 || (filter == nil && n != 1_000_000) {
						b.Fatal(n)
					}
					b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms-to-first-item")
					s.Close()
				}
			})
		}
	}
}

// BenchmarkOpenQueue1M is what the annotator does before it shows the first item of a
// 1,000,000-turn database: open it, count the queue, find the first unfinished item, load it
// with its context and place it (target: under 300 ms).
func BenchmarkOpenQueue1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	fillTurns(b, path, 1_000_000)
	ctx := context.Background()
	for _, filter := range []store.Filter{nil, {"action_type": {"mislead"}}} {
		name := "all"
		if filter != nil {
			name = "mislead"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				start := time.Now()
				s, err := store.Open(ctx, path, store.Options{Durable: true})
				if err != nil {
					b.Fatal(err)
				}
				q, err := s.OpenQueue(ctx, "bench", filter)
				if err != nil {
					b.Fatal(err)
				}
				if n, _ := openFirst(b, q); n == 0 || (filter == nil && n != 1_000_000) {
					b.Fatal(n)
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms-to-first-item")
				s.Close()
			}
		})
	}
}

// openFirst does what the annotator does before it shows the first item: count the queue,
// find the first unfinished item, load it with its context and place it. It returns the
// queue's length and the item.
func openFirst(tb testing.TB, q *store.Queue) (int, store.Ref) {
	tb.Helper()
	ctx := context.Background()
	n, err := q.Len(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	ref, ok, err := q.First(ctx, true)
	if err != nil || !ok {
		tb.Fatal(ok, err)
	}
	if _, err := q.Load(ctx, ref); err != nil {
		tb.Fatal(err)
	}
	if _, err := q.Position(ctx, ref); err != nil {
		tb.Fatal(err)
	}
	return n, ref
}

// BenchmarkSave is the annotator's write path: one durable save (synchronous=FULL) per key
// press, scoring fields of successive turns, on a database of 100,000 turns. The variants
// compare the page size m3eval creates databases with against SQLite's default, since every
// page a save touches goes to the WAL whole.
func BenchmarkSave(b *testing.B) {
	for _, v := range []struct {
		name     string
		pageSize int // 0: what store.Open creates
	}{{"page-default", 0}, {"page-4k", 4096}} {
		b.Run(v.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "save.db")
			if v.pageSize != 0 {
				initDB(b, path, fmt.Sprintf("PRAGMA page_size = %d; PRAGMA journal_mode = WAL", v.pageSize))
			}
			fillTurns(b, path, 100_000)
			ctx := context.Background()
			s, err := store.Open(ctx, path, store.Options{Durable: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			pageSize, _ := strconv.Atoi(readPragma(b, path, "page_size"))
			b.ReportMetric(float64(pageSize), "page-bytes")
			measureSaves(b, s)
		})
	}
}

// BenchmarkSavePostgres is BenchmarkSave on PostgreSQL ($M3EVAL_TEST_POSTGRES): one durable
// save (synchronous_commit=on, under the campaign's advisory lock) per key press.
func BenchmarkSavePostgres(b *testing.B) {
	dsn := storetest.PostgresPath(b, storetest.RequirePostgres(b))
	fillTurnsPostgres(b, dsn, 100_000)
	s, err := store.Open(context.Background(), dsn, store.Options{Durable: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	measureSaves(b, s)
}

// measureSaves saves fields of successive turns, one value per save, and reports the median
// and p99 time of a save.
func measureSaves(b *testing.B, s *store.Store) {
	const saves = 2000
	fields := []string{"correctness", "reasoning_completeness", "context_consistency", "overall_quality"}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		q, err := s.OpenQueue(ctx, fmt.Sprintf("annotator%d", i), nil)
		if err != nil {
			b.Fatal(err)
		}
		ref, _, err := q.First(ctx, true)
		if err != nil {
			b.Fatal(err)
		}
		took := make([]time.Duration, 0, saves)
		for j := 0; j < saves; j++ {
			if j > 0 && j%len(fields) == 0 {
				if ref, _, err = q.Next(ctx, ref, false); err != nil {
					b.Fatal(err)
				}
			}
			value := "3"
			if fields[j%len(fields)] == "context_consistency" {
				value = "Yes"
			}
			start := time.Now()
			if _, err := q.SetValue(ctx, store.Edit{TurnID: ref.TurnID, RubricVersion: "bench"}, fields[j%len(fields)], &value); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[saves/2].Microseconds()), "µs-median-save")
		b.ReportMetric(float64(took[saves*99/100].Microseconds()), "µs-p99-save")
	}
}

// readPragma reads a setting of the database at path, opened read-only.
func readPragma(tb testing.TB, path, name string) string {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`PRAGMA ` + name).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}
