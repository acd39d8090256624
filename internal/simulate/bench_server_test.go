package simulate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/vlm"
)

// BenchmarkRun10kTurns runs 10,000 turns and more (250 rule episodes of 40 turns a task: 12,520
// since the apples scene has a second task) with 8 episodes in
// parallel against the scripted VLM over HTTP on 127.0.0.1, writing the journaled turns
// file (target: under 30 s).
func BenchmarkRun10kTurns(b *testing.B) {
	demo := loadDemo(b)
	var scenes []simulate.Scene
	for i := 0; len(scenes) < 250; i++ {
		for _, sc := range demo {
			if sc.Task == nil || len(scenes) == 250 {
				continue
			}
			sc.ID = fmt.Sprintf("%s_%d", sc.ID, i)
			sc.ObjectsPerImage = cloneObjects(sc.ObjectsPerImage)
			scenes = append(scenes, sc)
		}
	}
	want := 0 // 40 turns per task: the apples scene has two
	for _, sc := range scenes {
		want += 40 * len(sc.Tasks())
	}
	srv, _ := demoServer(b, scenes)
	c := client(b, srv.URL, "faithful", func(o *vlm.Options) { o.Timeout = 30 * time.Second })
	for range b.N {
		out := filepath.Join(b.TempDir(), "turns.jsonl")
		start := time.Now()
		sum, err := simulate.Run(context.Background(), simulate.Options{Scenes: scenes, Strategies: []simulate.Strategy{simulate.StrategyRules},
			Turns: 40, Seed: 42, Model: "faithful", Concurrency: 8, Chat: c, Out: out, ScenesDigest: "bench"})
		if err != nil || sum.Turns != want {
			b.Fatalf("%v: %d turns", err, sum.Turns)
		}
		el := time.Since(start)
		b.ReportMetric(el.Seconds(), "s/10k-turns")
		b.ReportMetric(float64(sum.Turns)/el.Seconds(), "turns/s")
		os.Remove(out)
	}
}

func cloneObjects(in [][]simulate.Object) [][]simulate.Object {
	out := make([][]simulate.Object, len(in))
	for i := range in {
		out[i] = slices.Clone(in[i])
	}
	return out
}
