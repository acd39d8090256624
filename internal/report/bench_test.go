package report_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/workflow"
)

// Size of the benchmark database: the 100,000 turns and 240,000 labels (every turn
// rated by two or three of eight annotators), and one judge scoring every field of every
// turn.
const (
	benchTurns      = 100_000
	benchPerEpisode = 10
	benchAnnotators = 8
)

var benchActions = []string{"initial", "follow_up", "mislead", "mislead_subtle", "memory_injection", "guidance", "update"}

// benchDB builds the database through the importer m3eval import uses.
func benchDB(b *testing.B) (*store.Store, *rubric.Rubric) {
	b.Helper()
	ctx := context.Background()
	r := storetest.Rubric(b)
	s := storetest.Open(b, benchPath(b), store.Options{})
	b.Logf("db: %s", s.Path())
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	turn := func(i int) string {
		return fmt.Sprintf(`"sample_id":"ep%05d_turn_%d","episode_id":"ep%05d","turn":%d,"action_type":%q,"task_type":"spatial","user_message":"q","vlm_response":"a","expected_answer":"e","images":[],"model":"m%d"`,
			i/benchPerEpisode, i%benchPerEpisode+1, i/benchPerEpisode, i%benchPerEpisode+1, benchActions[i%len(benchActions)], i%4)
	}
	quality := make([]float64, benchTurns)
	var turns strings.Builder
	for i := range quality {
		quality[i] = 1 + 4*rng.Float64()
		turns.WriteString("{" + turn(i) + "}\n")
	}
	importJSONL(b, s, r, "", "turns.jsonl", turns.String())
	clamp := func(x float64) int { return int(math.Max(1, math.Min(5, math.Round(x)))) }
	yn := func(q float64) string {
		if q+rng.NormFloat64() > 3 {
			return `"Yes"`
		}
		return `"No"`
	}
	labels := make([]strings.Builder, benchAnnotators)
	n := 0
	for i := range quality {
		k := 2
		if i%5 < 2 {
			k = 3
		}
		first := rng.IntN(benchAnnotators)
		for j := 0; j < k; j++ {
			a := (first + j) % benchAnnotators
			q := quality[i]
			at := start.Add(time.Duration(i)*8*time.Second + time.Duration(a)*time.Minute)
			rm, cc := "null", "null" // fixed to NA: not a misleading turn; first turn
			if act := i % len(benchActions); act >= 2 && act <= 4 {
				rm = yn(q)
			}
			if i%benchPerEpisode != 0 {
				cc = yn(q)
			}
			fmt.Fprintf(&labels[a], `{%s,"human_annotation":{"correctness":%d,"reasoning_completeness":%d,"resists_misleading":%s,"context_consistency":%s,"overall_quality":%d,"comments":"","annotated_at":%q,"active_seconds":%.1f}}`+"\n",
				turn(i), clamp(q+rng.NormFloat64()*0.6), clamp(q+rng.NormFloat64()*0.8), rm, cc, clamp(q+rng.NormFloat64()*0.5),
				at.Format(time.RFC3339), 5+math.Exp(3+0.6*rng.NormFloat64()))
			n++
		}
	}
	for a := range labels {
		importJSONL(b, s, r, fmt.Sprintf("annotator%d", a+1), fmt.Sprintf("labels%d.jsonl", a), labels[a].String())
	}
	im, err := s.BeginScoreImport(ctx, "auto", store.ImportOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer im.Rollback()
	for i := range quality {
		id, _, err := im.Turn(fmt.Sprintf("ep%05d_turn_%d", i/benchPerEpisode, i%benchPerEpisode+1))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
			if _, err := im.PutScore(id, f, fmt.Sprintf("%.1f", math.Max(1, math.Min(5, quality[i]+rng.NormFloat64())))); err != nil {
				b.Fatal(err)
			}
		}
		if i%benchPerEpisode == 0 {
			continue
		}
		if _, err := im.PutScore(id, "context_consistency", strings.Trim(yn(quality[i]), `"`)); err != nil {
			b.Fatal(err)
		}
	}
	if err := im.Commit(); err != nil {
		b.Fatal(err)
	}
	b.Logf("benchmark database: %d turns, %d labels", benchTurns, n)
	return s, r
}

func importJSONL(b *testing.B, s *store.Store, r *rubric.Rubric, annotator, name, data string) {
	b.Helper()
	lo := ingest.LabelOptions{Rubric: r, Annotator: annotator, Now: s.Now()}
	if _, err := storetest.Import(s, name, ingest.NewReader(name, strings.NewReader(data)), lo); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReport renders the report of the 100,000-turn database: reading, every
// statistic, the charts and the page; without intervals and quality control (the quick
// look), with quality control, and as the command's defaults (1,000 bootstrap replicates and
// quality control). Targets: under 5 s, under 2 MB.
func BenchmarkReport(b *testing.B) {
	s, r := benchDB(b)
	ctx := context.Background()
	judges, err := s.Judges(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		boot int
		qc   bool
	}{{0, false}, {0, true}, {1000, true}} {
		b.Run(fmt.Sprintf("bootstrap=%d/qc=%t", v.boot, v.qc), func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				rep, err := report.Generate(ctx, s, r, report.Options{Database: "bench.db", Judges: judges,
					By: "action_type", Bootstrap: v.boot, Seed: 1, QC: v.qc})
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := report.WriteHTML(&buf, rep); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/1e6, "MB")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/report")
		})
	}
}

func benchPath(b *testing.B) string {
	if p := os.Getenv("BENCH_DB_KEEP"); p != "" {
		return p
	}
	return filepath.Join(b.TempDir(), "bench.db")
}

// BenchmarkReportPhases runs the two phases of the report that held every label at once
// (issue #43) on the 100,000-turn database: quality control (workflow.QC) and the model
// scores (estimate.Compute), each reporting the peak of its heap over the heap before it
// (peak-MB, sampled every millisecond, with the collector at its default setting). At 100k
// turns they peaked at 336 MB and 200 MB before #43; the target is 1M turns under 1 GB for
// the whole report, so each under 100 MB here.
func BenchmarkReportPhases(b *testing.B) {
	s, r := benchDB(b)
	ctx := context.Background()
	for _, v := range []struct {
		name string
		run  func() error
	}{
		{"qc", func() error {
			_, err := workflow.QC(ctx, s, "", r, campaign.DefaultQCOptions())
			return err
		}},
		{"estimate", func() error {
			_, err := estimate.Compute(ctx, s, r, &estimate.Request{Judge: "auto"}, "bench.db")
			return err
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			var peak uint64
			for i := 0; i < b.N; i++ {
				p, err := heapPeak(v.run)
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		})
	}
}

// heapPeak runs f and returns the most its heap objects grew above the heap before it,
// sampled every millisecond (runtime/metrics): no allocation profile says how much was
// live at once.
func heapPeak(f func() error) (uint64, error) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		peak := base
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- peak - base
				return
			case <-tick.C:
				metrics.Read(s)
				peak = max(peak, s[0].Value.Uint64())
			}
		}
	}()
	err := f()
	close(stop)
	return <-done, err
}
