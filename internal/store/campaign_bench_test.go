package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

// BenchmarkSampleAssign1M draws a stratified sample of 300 turns from 1,000,000 (by action
// type, at least 5 per stratum) and gives it to four annotators with overlap 2, as
// `m3eval sample` and `m3eval assign` do (target: under 2 s together). It then opens an
// annotator's campaign queue the way `m3eval annotate` does.
func BenchmarkSampleAssign1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.db")
	fillTurns(b, path, 1_000_000)
	ctx := context.Background()
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench%d", i)
		start := time.Now()
		if _, err := workflow.Sample(ctx, s, workflow.SampleOptions{Name: name, N: 300, Seed: int64(i),
			Params: store.SampleParams{By: []string{"action_type"}, MinPerStratum: 5}}); err != nil {
			b.Fatal(err)
		}
		sampled := time.Since(start)
		res, err := workflow.Assign(ctx, s, workflow.AssignOptions{Sample: name, Annotators: []string{"alice", "bob", "carol", "dave"}, Overlap: 2, Seed: 1})
		if err != nil || len(res.Campaign.Rows) != 600 {
			b.Fatal(err)
		}
		total := time.Since(start)
		b.ReportMetric(float64(sampled.Milliseconds()), "ms-sample")
		b.ReportMetric(float64(total.Milliseconds()), "ms-sample+assign")

		start = time.Now()
		q, err := s.OpenCampaignQueue(ctx, "alice", name, nil)
		if err != nil {
			b.Fatal(err)
		}
		n, ref := openFirst(b, q)
		if n != 150 {
			b.Fatal(n)
		}
		for j := 0; j < 10; j++ {
			var ok bool
			if ref, ok, err = q.Next(ctx, ref, false); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms-queue-first+10")
	}
}
