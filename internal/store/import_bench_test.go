package store_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// writeTurns writes n turn records of realistic size as JSONL: 10-turn episodes.
func writeTurns(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	actions := []string{"follow_up", "mislead", "guidance", "update", "logic_skip"}
	for i := 0; i < n; i++ {
		ep, turn := i/10, i%10+1
		fmt.Fprintf(w, `{"sample_id":"ep%07d_turn_%d","action_type":%q,"task_type":"causal_reasoning",`+
			`"user_message":"Why is the person in image %d holding an umbrella? Look at the ground.",`+
			`"vlm_response":"The person is holding an umbrella because it is raining: the ground is wet and the sky is dark grey, turn %d.",`+
			`"expected_answer":"It is raining","images":["img/%d.png"],"model":"qwen2-vl-7b","meta":{"seed":%d}}`+"\n",
			ep, turn, actions[i%len(actions)], ep%3, turn, ep, i)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

func importFile(tb testing.TB, db, path string) ingest.Counts {
	tb.Helper()
	return importAs(tb, db, path, ingest.FormatM3eval)
}

// BenchmarkImport1M imports 1,000,000 turn records from JSONL into a fresh database (target:
// 200,000 records/s or more on 2 cores).
func BenchmarkImport1M(b *testing.B) {
	n := benchN()
	dir := b.TempDir()
	src := filepath.Join(dir, "turns.jsonl")
	writeTurns(b, src, n)
	// m3eval import runs with GOGC=400 (cmd/m3eval/import.go); measure what it does.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		timedImport(b, filepath.Join(dir, fmt.Sprintf("bench%d.db", i)), src, n, store.Inserted)
	}
}

// BenchmarkImport1MPostgres is BenchmarkImport1M on PostgreSQL ($M3EVAL_TEST_POSTGRES), a
// fresh schema each time: the same file through the same importer, whose turns go in with
// COPY there (target: 200,000 records/s or more). Run the two in one go to compare them:
// go test -run '^$' -bench 'Import1M(Postgres)?$' ./internal/store/
func BenchmarkImport1MPostgres(b *testing.B) {
	dsn := storetest.RequirePostgres(b)
	n := benchN()
	dir := b.TempDir()
	src := filepath.Join(dir, "turns.jsonl")
	writeTurns(b, src, n)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := storetest.PostgresPath(b, dsn)
		b.StartTimer()
		timedImport(b, db, src, n, store.Inserted)
	}
}

// BenchmarkReimport1M imports the file of BenchmarkImport1M a second time, unchanged: every
// record is found identical and nothing is written.
func BenchmarkReimport1M(b *testing.B) {
	n := benchN()
	dir := b.TempDir()
	src := filepath.Join(dir, "turns.jsonl")
	writeTurns(b, src, n)
	db := filepath.Join(dir, "bench.db")
	importFile(b, db, src)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		timedImport(b, db, src, n, store.Unchanged)
	}
}

// timedImport imports src into db, checks that all n records had the outcome wanted and
// reports the rate.
func timedImport(b *testing.B, db, src string, n int, want store.Outcome) {
	start := time.Now()
	c := importFile(b, db, src)
	el := time.Since(start)
	if c.Turns[want] != n {
		b.Fatalf("%v: %d of %d turns had outcome %d", c, c.Turns[want], n, want)
	}
	b.ReportMetric(float64(n)/el.Seconds(), "records/s")
}

// benchN is the benchmark's size: 1,000,000 unless M3EVAL_BENCH_N says otherwise (for profiling).
func benchN() int {
	if v := os.Getenv("M3EVAL_BENCH_N"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// BenchmarkImportFloor measures what SQLite alone needs to store the rows of BenchmarkImport1M
// in the m3eval schema: the rows are generated in a temporary table first (not timed), then
// copied into turns with one INSERT ... SELECT and committed. No JSON, no Go values, no
// binding: no importer can beat this figure with the same schema and settings. The variants
// show what the page size and a rollback journal (which needs the database to itself) change.
func BenchmarkImportFloor(b *testing.B) {
	for _, v := range []struct {
		name     string
		pageSize int
		journal  string
	}{
		{"wal-4k", 4096, "WAL"},   // SQLite's default
		{"wal-16k", 16384, "WAL"}, // what m3eval creates
		{"wal-64k", 65536, "WAL"},
		{"delete-64k", 65536, "DELETE"},
	} {
		b.Run(v.name, func(b *testing.B) {
			n := benchN()
			for i := 0; i < b.N; i++ {
				path := filepath.Join(b.TempDir(), "floor.db")
				initDB(b, path, fmt.Sprintf("PRAGMA page_size = %d; CREATE TABLE t (x); DROP TABLE t", v.pageSize))
				storetest.Open(b, path, store.Options{}).Close() // the m3eval schema, in WAL mode
				db := openBenchDB(b, path, v.journal)
				ctx := context.Background()
				mustExec(b, db, `PRAGMA temp_store = MEMORY`)
				mustExec(b, db, fmt.Sprintf(`CREATE TEMP TABLE src AS WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
					SELECT printf('ep%%07d_turn_%%d', i / 10, i %% 10 + 1) AS sample_id, i / 10 + 1 AS episode_id, i %% 10 + 1 AS turn,
					(CASE i %% 5 WHEN 0 THEN 'follow_up' WHEN 1 THEN 'mislead' WHEN 2 THEN 'guidance' WHEN 3 THEN 'update' ELSE 'logic_skip' END) AS action_type,
					'causal_reasoning' AS task_type,
					printf('Why is the person in image %%d holding an umbrella? Look at the ground.', i / 10 %% 3) AS user_message,
					printf('The person is holding an umbrella because it is raining: the ground is wet and the sky is dark grey, turn %%d.', i %% 10 + 1) AS vlm_response,
					'It is raining' AS expected_answer, printf('["img/%%d.png"]', i / 10) AS images, 'qwen2-vl-7b' AS model,
					printf('{"seed":%%d}', i) AS meta, randomblob(16) AS content_hash FROM c`, n-1))
				start := time.Now()
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				createEpisodes(b, tx, n)
				mustExec(b, tx, `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type, user_message,
					vlm_response, expected_answer, images, model, meta, content_hash) SELECT * FROM src`)
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				el := time.Since(start)
				db.Close()
				b.ReportMetric(float64(n)/el.Seconds(), "records/s")
			}
		})
	}
}

// BenchmarkImportWriter measures the importer's writing half alone, on the rows of
// BenchmarkImport1M built in memory beforehand (no file, no JSON): "putturns" is the writer
// goroutine of m3eval import (PutTurns, 256 turns a call); "bind" is the least any writer using
// go-sqlite3 does, a prepared 128-row INSERT given 12 ready values a row with the episodes
// already stored. Between BenchmarkImportFloor (no Go at all) and "bind" lies the cost of
// handing values to SQLite through database/sql, which parsing on the other core cannot hide.
func BenchmarkImportWriter(b *testing.B) {
	n := benchN()
	turns := benchTurns(n)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.Run("putturns", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s := storetest.Open(b, "", store.Options{})
			start := time.Now()
			im, err := s.BeginImport(context.Background(), store.ImportOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for j := 0; j < n; j += 256 {
				if _, _, err := im.PutTurns(turns[j:min(j+256, n)]); err != nil {
					b.Fatal(err)
				}
			}
			if err := im.Commit(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "records/s")
		}
	})
	b.Run("bind", func(b *testing.B) {
		const rows = 128
		q := `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type, user_message,
			vlm_response, expected_answer, images, model, meta, content_hash) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", rows), ", ")
		args := make([]any, 0, 12*rows)
		images := make([]string, n) // the JSON arrays the importer stores
		for k := range turns {
			j, _ := json.Marshal(turns[k].Images)
			images[k] = string(j)
		}
		for i := 0; i < b.N; i++ {
			path := filepath.Join(b.TempDir(), "bind.db")
			storetest.Open(b, path, store.Options{}).Close() // the m3eval schema, in WAL mode
			db := openBenchDB(b, path, "WAL")
			start := time.Now()
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			createEpisodes(b, tx, n)
			stmt, err := tx.Prepare(q)
			if err != nil {
				b.Fatal(err)
			}
			for j := 0; j+rows <= n; j += rows {
				args = args[:0]
				for k := j; k < j+rows; k++ {
					t := &turns[k]
					args = append(args, t.SampleID, k/10+1, t.Turn, t.ActionType, t.TaskType, t.UserMessage,
						t.VLMResponse, t.ExpectedAnswer, images[k], t.Model, string(t.Meta), t.Sum)
				}
				if _, err := stmt.Exec(args...); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n-n%rows)/time.Since(start).Seconds(), "records/s")
			db.Close()
		}
	})
}

// benchTurns builds the turns of writeTurns in memory, hashed as the reader hashes them.
// Strings that repeat are shared, so the heap the benchmark scans stays small.
func benchTurns(n int) []dataset.Turn {
	actions := []string{"follow_up", "mislead", "guidance", "update", "logic_skip"}
	var questions [3]string
	for i := range questions {
		questions[i] = fmt.Sprintf("Why is the person in image %d holding an umbrella? Look at the ground.", i)
	}
	var answers [10]string
	for i := range answers {
		answers[i] = fmt.Sprintf("The person is holding an umbrella because it is raining: the ground is wet and the sky is dark grey, turn %d.", i+1)
	}
	ts := make([]dataset.Turn, n)
	for i := range ts {
		ep, turn := i/10, i%10+1
		key := fmt.Sprintf("ep%07d", ep)
		t := dataset.Turn{SampleID: fmt.Sprintf("%s_turn_%d", key, turn), EpisodeID: key, Turn: turn,
			ActionType: actions[i%len(actions)], TaskType: "causal_reasoning", UserMessage: questions[ep%3],
			VLMResponse: answers[turn-1], ExpectedAnswer: "It is raining", Model: "qwen2-vl-7b",
			Images: []string{fmt.Sprintf("img/%d.png", ep)}, Meta: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, i))}
		if turn > 1 {
			t.EpisodeID, t.Images = ts[i-1].EpisodeID, ts[i-1].Images
		}
		t.Sum = t.Hash()
		ts[i] = t
	}
	return ts
}

// openBenchDB opens the database at path on one connection, as an import uses it: the given
// journal mode and the importer's 256 MB cache.
func openBenchDB(tb testing.TB, path, journal string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on&_synchronous=NORMAL&_journal_mode="+journal)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	mustExec(tb, db, `PRAGMA cache_size = -262144`)
	return db
}

// createEpisodes stores the episodes of n benchmark turns, ten turns each: ep0000000, ...
func createEpisodes(tb testing.TB, tx *sql.Tx, n int) {
	tb.Helper()
	mustExec(tb, tx, fmt.Sprintf(`WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
		INSERT INTO episodes (episode_key) SELECT printf('ep%%07d', i) FROM c`, (n+9)/10-1))
}

func initDB(tb testing.TB, path, init string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	mustExec(tb, db, init)
}

func mustExec(tb testing.TB, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string) {
	tb.Helper()
	if _, err := db.Exec(q); err != nil {
		tb.Fatalf("%v\n%s", err, q)
	}
}

// TestBenchTurnsMatchTheFile: the turns BenchmarkImportWriter writes are the ones
// BenchmarkImport1M reads from its file, so the two figures measure the same rows.
func TestBenchTurnsMatchTheFile(t *testing.T) {
	const n = 25
	src := filepath.Join(t.TempDir(), "turns.jsonl")
	writeTurns(t, src, n)
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := ingest.NewReader(src, f)
	want := benchTurns(n)
	for i := range want {
		rec, err := rd.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got := rec.Turn.Hash(); !bytes.Equal(got, want[i].Sum) {
			t.Fatalf("turn %d: the file has %+v, benchTurns %+v", i, rec.Turn, want[i])
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after %d records: %v", n, err)
	}
}
