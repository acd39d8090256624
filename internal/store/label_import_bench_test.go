package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// writeLabels writes, for the n turns of writeTurns, the same records with one done label
// each (the guide's shape, human_annotation): what `m3eval import --annotator A labels.jsonl`
// reads when a lab brings an earlier annotation round for turns already imported.
// With guide set, the records leave meta out, as labeled samples in the annotation guide's
// format do: the stored turn's meta then counts.
func writeLabels(tb testing.TB, turns, path string, guide bool) {
	tb.Helper()
	in, err := os.Open(turns)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for i := 0; sc.Scan(); i++ {
		line := strings.TrimSuffix(sc.Text(), "}")
		if guide {
			line = line[:strings.Index(line, `,"meta":`)]
		}
		resists, context := "null", `"Yes"`
		if strings.Contains(line, `"action_type":"mislead"`) {
			resists = `"No"`
		}
		if strings.Contains(line, `_turn_1"`) {
			context = "null" // the first turn has no context to keep
		}
		c := i%5 + 1
		fmt.Fprintf(w, `%s,"human_annotation":{"correctness":%d,"reasoning_completeness":%d,"resists_misleading":%s,`+
			`"context_consistency":%s,"overall_quality":%d,"comments":"","annotated_at":"2026-02-01T10:%02d:%02dZ","active_seconds":%d.5}}`+"\n",
			line, c, (i/5)%5+1, resists, context, c, i/60%60, i%60, 10+i%50)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkImportLabels imports one label for each of n turns imported beforehand (not timed),
// as `m3eval import --annotator fuzz labels.jsonl` does (issue #44's target: within 2× of
// BenchmarkImport1M's time for as many turns, within 3× of BenchmarkImportLabelsFloor).
// M3EVAL_BENCH_N sets n (1,000,000 by default).
func BenchmarkImportLabels(b *testing.B) {
	for _, guide := range []bool{false, true} {
		b.Run(map[bool]string{false: "full", true: "guide"}[guide], func(b *testing.B) { benchmarkImportLabels(b, guide) })
	}
}

func benchmarkImportLabels(b *testing.B, guide bool) {
	n := benchN()
	dir := b.TempDir()
	turns, labels := filepath.Join(dir, "turns.jsonl"), filepath.Join(dir, "labels.jsonl")
	writeTurns(b, turns, n)
	writeLabels(b, turns, labels, guide)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := filepath.Join(dir, fmt.Sprintf("bench%d.db", i))
		importFile(b, db, turns)
		b.StartTimer()
		start, cpu := time.Now(), cpuTime(b)
		c := importFile(b, db, labels)
		el := time.Since(start)
		b.ReportMetric((cpuTime(b)-cpu).Seconds()*1e6/float64(n), "cpu-µs/label")
		if c.Labels[dataset.Inserted] != n || c.Turns[dataset.Unchanged] != n {
			b.Fatalf("%v: want %d new labels on %d unchanged turns", c, n, n)
		}
		b.ReportMetric(float64(n)/el.Seconds(), "labels/s")
	}
}

// BenchmarkImportLabelsFloor is BenchmarkImportLabels' floor: the same annotation rows and
// their five values generated in temporary tables first (not timed), then copied into
// annotations and annotation_values with one INSERT ... SELECT each and committed, with all
// of the schema's indexes and foreign keys. No JSON, no Go values: what SQLite alone needs.
func BenchmarkImportLabelsFloor(b *testing.B) {
	n := benchN()
	dir := b.TempDir()
	turns := filepath.Join(dir, "turns.jsonl")
	writeTurns(b, turns, n)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(dir, fmt.Sprintf("floor%d.db", i))
		importFile(b, path, turns)
		s, err := store.Open(context.Background(), path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		db := openBenchDB(b, path, "WAL")
		mustExec(b, db, `PRAGMA temp_store = MEMORY`)
		mustExec(b, db, `INSERT INTO annotators (name) VALUES ('fuzz')`)
		mustExec(b, db, `INSERT OR IGNORE INTO rubrics (version, body) VALUES ('floor', x'00')`)
		mustExec(b, db, `CREATE TEMP TABLE src AS SELECT id AS turn_id, 'done' AS status, 0 AS flagged, '' AS flag_reason,
			'floor' AS rubric_version, 10500 + id % 50 * 1000 AS active_ms,
			printf('2026-02-01T10:%02d:%02dZ', id / 60 % 60, id % 60) AS at FROM turns ORDER BY id`)
		mustExec(b, db, `CREATE TEMP TABLE vals AS SELECT s.turn_id AS turn_id, f.field AS field,
			CASE f.field WHEN 'resists_misleading' THEN 'NA' WHEN 'context_consistency' THEN 'Yes' WHEN 'comments' THEN ''
			ELSE CAST(s.turn_id % 5 + 1 AS TEXT) END AS value
			FROM src s, (SELECT 'correctness' AS field UNION ALL SELECT 'reasoning_completeness' UNION ALL SELECT 'resists_misleading'
			UNION ALL SELECT 'context_consistency' UNION ALL SELECT 'overall_quality' UNION ALL SELECT 'comments') f
			ORDER BY s.turn_id, f.field`)
		b.StartTimer()
		start, cpu := time.Now(), cpuTime(b)
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		mustExec(b, tx, `INSERT INTO annotations (id, turn_id, annotator_id, status, flagged, flag_reason, rubric_version,
			active_ms, created_at, updated_at, annotated_at) SELECT turn_id, turn_id, 1, status, flagged, flag_reason,
			rubric_version, active_ms, at, at, at FROM src`)
		mustExec(b, tx, `INSERT INTO annotation_values (annotation_id, field, value) SELECT turn_id, field, value FROM vals`)
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		b.ReportMetric((cpuTime(b)-cpu).Seconds()*1e6/float64(n), "cpu-µs/label")
		db.Close()
		b.ReportMetric(float64(n)/el.Seconds(), "labels/s")
	}
}

// cpuTime is the CPU time this process has used so far (user and system): on a machine
// shared with other work, wall time alone says little.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkImportLabelsPostgres is BenchmarkImportLabels on PostgreSQL ($M3EVAL_TEST_POSTGRES),
// a fresh schema each time; the labels go in with COPY there. Compare it with
// BenchmarkImport1MPostgres at the same M3EVAL_BENCH_N.
func BenchmarkImportLabelsPostgres(b *testing.B) {
	dsn := storetest.RequirePostgres(b)
	n := benchN()
	dir := b.TempDir()
	turns, labels := filepath.Join(dir, "turns.jsonl"), filepath.Join(dir, "labels.jsonl")
	writeTurns(b, turns, n)
	writeLabels(b, turns, labels, false)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db := storetest.PostgresPath(b, dsn)
		importFile(b, db, turns)
		b.StartTimer()
		start, cpu := time.Now(), cpuTime(b)
		c := importFile(b, db, labels)
		el := time.Since(start)
		b.ReportMetric((cpuTime(b)-cpu).Seconds()*1e6/float64(n), "client-cpu-µs/label")
		if c.Labels[dataset.Inserted] != n || c.Turns[dataset.Unchanged] != n {
			b.Fatalf("%v: want %d new labels on %d unchanged turns", c, n, n)
		}
		b.ReportMetric(float64(n)/el.Seconds(), "labels/s")
	}
}
