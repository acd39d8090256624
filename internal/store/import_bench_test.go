package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
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
	ctx := context.Background()
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	r, _ := rubric.Parse(annotations.DefaultRubric)
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tx, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	c, err := ingest.Import(ctx, tx, path, f, ingest.LabelOptions{Rubric: r, Now: time.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return c
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
		db := filepath.Join(dir, fmt.Sprintf("bench%d.db", i))
		start := time.Now()
		c := importFile(b, db, src)
		el := time.Since(start)
		if c.Turns[0] != n {
			b.Fatalf("imported %d turns, want %d", c.Turns[0], n)
		}
		b.ReportMetric(float64(n)/el.Seconds(), "records/s")
	}
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
