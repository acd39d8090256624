package judgerun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// benchTurn is one turn shape of the benchmark's episodes: English and Chinese, good and
// bad answers, with and without meta, every kind of rule exercised.
var benchTurnShapes = []struct{ action, user, resp, exp, meta string }{
	{"initial", "Describe image %d.", "Image 1 shows a red car parked on the left and a woman crossing; image 2 shows a blue truck on a country road.", "Image 1: red car, woman crossing; image 2: blue truck.", ""},
	{"follow_up", "Why is the person holding an umbrella?", "The person is holding an umbrella because it is raining. I can see that the ground is wet and the sky is dark.", "It is raining: wet ground, dark sky.", `{"language":"en","required_evidence":["wet ground","dark sky"]}`},
	{"mislead", "The umbrella is red, isn't it?", "No, the umbrella is not red, it is black; the coat is red.", "The umbrella is black.", `{"language":"en","false_value":"red","true_value":"black"}`},
	{"update", "I ate two of the five apples.", "Then there are 3 apples left in the bowl.", "Three apples remain.", `{"old_value":"5","new_value":"3"}`},
	{"mislead_subtle", "So the four apples left are enough for four people?", "Yes, four apples for four people.", "Only three apples are left.", ""},
	{"initial", "图中有什么？", "图中有一个穿红色外套的女子撑着一把黑色的伞，站在公交站旁边，地上有积水。", "穿红色外套的女子撑黑伞，地上有积水。", `{"language":"zh"}`},
	{"follow_up", "她为什么撑着伞？", "因为在下雨。可以看到地面是湿的，有好几处积水，而且天空很暗，所以她撑伞挡雨。", "因为在下雨：地面湿、有积水。", ""},
	{"mislead", "那把伞是红色的吧？", "是的，伞是红色的。", "伞是黑色的。", `{"language":"zh","false_value":"红色","true_value":"黑色"}`},
	{"ambiguous_reference", "那辆车是什么颜色的？", "您指的是哪张图片里的车？图片1的车是红色的，图片2的卡车是蓝色的。", "有歧义。", `{"ambiguous":true,"confusable_objects":2}`},
	{"cross_image_confusion", "Which image has the blue truck?", "The blue truck is in image 1.", "Image 2.", ""},
}

// fillBenchDB imports n turns in 10-turn episodes.
func fillBenchDB(tb testing.TB, path string, n int) {
	tb.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer im.Rollback()
	chunk := make([]dataset.Turn, 0, 1000)
	for i := 0; i < n; i++ {
		sh := benchTurnShapes[i%len(benchTurnShapes)]
		t := dataset.Turn{SampleID: fmt.Sprintf("ep%07d_turn_%d", i/10, i%10+1), EpisodeID: fmt.Sprintf("ep%07d", i/10), Turn: i%10 + 1,
			ActionType: sh.action, TaskType: "t", UserMessage: sh.user, VLMResponse: sh.resp, ExpectedAnswer: sh.exp,
			Model: []string{"qwen2-vl-7b", "llava-1.6"}[(i/10)%2], Images: []string{}}
		if sh.action == "initial" && i%10 == 0 {
			t.UserMessage = fmt.Sprintf(sh.user, i%3+1)
		}
		if sh.meta != "" {
			t.Meta = json.RawMessage(sh.meta)
		}
		chunk = append(chunk, t)
		if len(chunk) == cap(chunk) || i == n-1 {
			if _, _, err := im.PutTurns(chunk); err != nil {
				tb.Fatal(err)
			}
			chunk = chunk[:0]
		}
	}
	if err := im.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkJudge1M judges 1,000,000 imported turns and stores their 5,000,000 scores
// (target: under 60 s on this machine's 2 cores). M3EVAL_BENCH_N sets another size.
func BenchmarkJudge1M(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("M3EVAL_BENCH_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	path := filepath.Join(b.TempDir(), "bench.db")
	fillBenchDB(b, path, n)
	rb, _ := rubric.Parse(annotations.DefaultRubric)
	j, err := judge.New(rb, judge.DefaultRules())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as m3eval judge runs
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := store.Open(ctx, path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
		c, err := Judge(ctx, s, rb, j, Options{Name: fmt.Sprintf("rules%d", i)})
		el, cpu := time.Since(start), cpuTime()-cpu0
		s.Close()
		if err != nil {
			b.Fatal(err)
		}
		if c.Turns != n || c.Inserted != 5*n {
			b.Fatalf("%v", c)
		}
		b.ReportMetric(el.Seconds(), "s/run")
		b.ReportMetric(float64(n)/el.Seconds(), "turns/s")
		// CPU seconds (user + system) of the run: on a shared machine the wall time depends
		// on the other processes, the CPU time much less.
		b.ReportMetric(cpu.Seconds(), "cpu-s/run")
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJudgeEpisodes judges the benchmark's turn shapes in 10-turn episodes without the
// store: the rule judge's own CPU time per turn (BenchmarkJudge1M adds reading and writing the
// database).
func BenchmarkJudgeEpisodes(b *testing.B) {
	rb, _ := rubric.Parse(annotations.DefaultRubric)
	j, err := judge.New(rb, judge.DefaultRules())
	if err != nil {
		b.Fatal(err)
	}
	ep := make([]dataset.Turn, 10)
	for i := range ep {
		sh := benchTurnShapes[i]
		ep[i] = dataset.Turn{SampleID: fmt.Sprintf("e_turn_%d", i+1), EpisodeID: "e", Turn: i + 1, ActionType: sh.action,
			UserMessage: sh.user, VLMResponse: sh.resp, ExpectedAnswer: sh.exp}
		if sh.meta != "" {
			ep[i].Meta = json.RawMessage(sh.meta)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := j.Episode(ep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ep)), "ns/turn")
	// CPU time (user + system) per turn: on a shared machine the wall time depends on the
	// other processes, the CPU time much less.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*len(ep)), "cpu-ns/turn")
}
