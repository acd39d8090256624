package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The interval benchmarks of issue #30: m3eval report and m3eval score with their bootstrap
// intervals, run through the command line in-process on databases built through the command
// line. Targets: the report with its default 1,000 replicates on 100,000 turns at most 1.5×
// the same report with --bootstrap 0; the 160-turn two-annotator report under 0.5 s;
// score --bootstrap 1000 with episode clusters on 1,000,000 turns under 10 s; under 1 GB.
//
// The databases take a while to build (the million-turn one minutes): with
// $M3EVAL_BENCH_DIR set they are kept there and reused by later runs.

// intervalDB describes a synthetic database: turns in episodes of 10, each turn rated by
// perTurn of the annotators (perTurn3 of every 5 turns by one more), judge "gpt" scoring the
// three scale fields with `digits` decimals and context_consistency. The 100,000-turn one
// has the shape of BenchmarkReport's database (internal/report: eight annotators, two
// or three a turn, scores with one decimal); the million-turn one has continuous scores
// (every point distinct: the slow case for the rank correlations).
type intervalDB struct {
	name       string
	turns      int
	annotators int
	perTurn    int
	perTurn3   int // of every 5 turns, this many get one more annotator
	digits     int // decimals of the judge's scores
}

var (
	smallDB = intervalDB{name: "tour160-1d", turns: 160, annotators: 2, perTurn: 2, digits: 1}
	benchDB = intervalDB{name: "report100k-1d", turns: 100_000, annotators: 8, perTurn: 2, perTurn3: 2, digits: 1}
	millDB  = intervalDB{name: "score1m", turns: 1_000_000, annotators: 8, perTurn: 2, perTurn3: 2, digits: 4}
)

var intervalActions = []string{"initial", "follow_up", "mislead", "mislead_subtle", "memory_injection", "guidance", "update"}

// path returns the database, building it when it is not there yet.
func (spec intervalDB) path(b testing.TB) string {
	b.Helper()
	dir := os.Getenv("M3EVAL_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	db := filepath.Join(dir, spec.name+".db")
	if _, err := os.Stat(db); err == nil {
		return db
	}
	tmp := db + ".building"
	os.Remove(tmp)
	work := b.TempDir()
	spec.write(b, work)
	benchRun(b, "--db", tmp, "import", filepath.Join(work, "turns.jsonl"))
	for a := 0; a < spec.annotators; a++ {
		benchRun(b, "--db", tmp, "import", "--annotator", fmt.Sprintf("annotator%d", a+1), filepath.Join(work, fmt.Sprintf("labels%d.jsonl", a)))
	}
	benchRun(b, "--db", tmp, "import-scores", "--judge", "gpt", filepath.Join(work, "gpt.csv"))
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	if err := os.Rename(tmp, db); err != nil {
		b.Fatal(err)
	}
	return db
}

// write writes turns.jsonl, labels<a>.jsonl and gpt.csv into dir.
func (spec intervalDB) write(b testing.TB, dir string) {
	rng := rand.New(rand.NewPCG(30, uint64(spec.turns)))
	create := func(name string) (*bufio.Writer, func()) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		return w, func() {
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
	turn := func(i int) string {
		return fmt.Sprintf(`"sample_id":"ep%06d_turn_%d","episode_id":"ep%06d","turn":%d,"action_type":%q,"task_type":"spatial","user_message":"q","vlm_response":"a","expected_answer":"e","images":[],"model":"m%d"`,
			i/10, i%10+1, i/10, i%10+1, intervalActions[i%len(intervalActions)], i%4)
	}
	turns, closeTurns := create("turns.jsonl")
	gpt, closeGPT := create("gpt.csv")
	gpt.WriteString("sample_id,correctness,reasoning_completeness,overall_quality,context_consistency\n")
	labels := make([]*bufio.Writer, spec.annotators)
	closers := []func(){closeTurns, closeGPT}
	for a := range labels {
		var c func()
		labels[a], c = create(fmt.Sprintf("labels%d.jsonl", a))
		closers = append(closers, c)
	}
	clamp := func(x float64) int { return int(math.Max(1, math.Min(5, math.Round(x)))) }
	yn := func(q float64) string {
		if q+rng.NormFloat64() > 3 {
			return "Yes"
		}
		return "No"
	}
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < spec.turns; i++ {
		fmt.Fprintf(turns, "{%s}\n", turn(i))
		q := 1 + 4*rng.Float64()
		k := spec.perTurn
		if i%5 < spec.perTurn3 {
			k++
		}
		first := rng.IntN(spec.annotators)
		for j := 0; j < k; j++ {
			a := (first + j) % spec.annotators
			at := start.Add(time.Duration(i)*8*time.Second + time.Duration(a)*time.Minute)
			rm, cc := "null", "null"
			if act := i % len(intervalActions); act >= 2 && act <= 4 {
				rm = `"` + yn(q) + `"`
			}
			if i%10 != 0 {
				cc = `"` + yn(q) + `"`
			}
			fmt.Fprintf(labels[a], `{%s,"human_annotation":{"correctness":%d,"reasoning_completeness":%d,"resists_misleading":%s,"context_consistency":%s,"overall_quality":%d,"comments":"","annotated_at":%q,"active_seconds":%.1f}}`+"\n",
				turn(i), clamp(q+rng.NormFloat64()*0.6), clamp(q+rng.NormFloat64()*0.8), rm, cc, clamp(q+rng.NormFloat64()*0.5),
				at.Format(time.RFC3339), 5+math.Exp(3+0.6*rng.NormFloat64()))
		}
		score := func() string {
			return strconv.FormatFloat(math.Max(1, math.Min(5, q+rng.NormFloat64())), 'f', spec.digits, 64)
		}
		cc := ""
		if i%10 != 0 {
			cc = yn(q)
		}
		fmt.Fprintf(gpt, "ep%06d_turn_%d,%s,%s,%s,%s\n", i/10, i%10+1, score(), score(), score(), cc)
	}
	for _, c := range closers {
		c()
	}
}

// benchRun runs the m3eval command line in-process.
func benchRun(b testing.TB, args ...string) {
	b.Helper()
	cmd := newRootCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		b.Fatalf("m3eval %s: %v", strings.Join(args, " "), err)
	}
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's maximum resident set so far, in MB (Linux reports KB).
func peakRSS() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// timeCommand runs args b.N times and reports wall and CPU seconds per run.
func timeCommand(b *testing.B, args ...string) {
	b.Helper()
	b.ResetTimer()
	cpu := benchCPU()
	for i := 0; i < b.N; i++ {
		benchRun(b, args...)
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric((benchCPU()-cpu).Seconds()/float64(b.N), "cpu-s/run")
	b.ReportMetric(peakRSS(), "MB-peak-rss")
}

// BenchmarkReportIntervals runs m3eval report (HTML, its defaults: --by action_type, quality
// control, the rule judge's metrics) with --bootstrap 0 and with the default 1,000
// replicates, alternately, on the 160-turn two-annotator database and on the 100,000-turn
// one (target: the second at most 1.5× the first on 100,000 turns; under 0.5 s on 160).
// The peak resident set is the whole test process's. Both resample (--no-cache); the last
// case, "cached", is the default report once the interval cache holds its intervals (one
// report before the timer fills it).
func BenchmarkReportIntervals(b *testing.B) {
	for _, spec := range []intervalDB{smallDB, benchDB} {
		db := spec.path(b)
		out := filepath.Join(b.TempDir(), "report.html")
		for round := 1; round <= 2; round++ {
			for _, boot := range []string{"0", "1000"} {
				b.Run(fmt.Sprintf("%s/round=%d/bootstrap=%s", spec.name, round, boot), func(b *testing.B) {
					timeCommand(b, "--db", db, "report", "--no-cache", "--bootstrap", boot, "-o", out)
				})
			}
		}
		b.Run(spec.name+"/cached", func(b *testing.B) {
			b.Setenv("M3EVAL_CACHE_DIR", b.TempDir())
			benchRun(b, "--db", db, "report", "-o", out)
			timeCommand(b, "--db", db, "report", "-o", out)
		})
	}
}

// BenchmarkScoreIntervals1M runs m3eval score --bootstrap 1000 (episode clusters, the
// default) on 1,000,000 turns and 2,400,000 labels (target: under 10 s, under 1 GB). Building
// the database takes minutes: it runs only with $M3EVAL_BENCH_DIR set, where the database is
// kept.
func BenchmarkScoreIntervals1M(b *testing.B) {
	if os.Getenv("M3EVAL_BENCH_DIR") == "" {
		b.Skip("set M3EVAL_BENCH_DIR to a directory that keeps the 1,000,000-turn database")
	}
	db := millDB.path(b)
	out := filepath.Join(b.TempDir(), "score.json")
	for _, boot := range []string{"0", "1000"} {
		b.Run("bootstrap="+boot, func(b *testing.B) {
			timeCommand(b, "--db", db, "score", "--format", "json", "--no-cache", "--bootstrap", boot, "-o", out)
		})
	}
}
