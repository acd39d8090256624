package simulate_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/vlm"
)

// stopAfter passes n requests to the VLM, then cancels the run, as Ctrl-C would.
type stopAfter struct {
	c      simulate.Chatter
	n      atomic.Int64
	limit  int64
	cancel context.CancelFunc
}

func (s *stopAfter) Chat(ctx context.Context, tag vlm.Tag, msgs []vlm.Message) (string, error) {
	if s.n.Add(1) > s.limit {
		s.cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}
	return s.c.Chat(ctx, tag, msgs)
}

// An interrupted run, resumed, writes exactly what an uninterrupted run writes: finished
// episodes kept, the others rerun, no turn twice, and a torn last write cut away.
func TestInterruptedRunResumes(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	c := client(t, srv.URL, "faithful", nil)
	clean, sum, err := run(t, scenes, c, "faithful", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := testkit.SortedLines(t, clean)

	out := clean + ".2"
	ctx, cancel := context.WithCancel(context.Background())
	stop := &stopAfter{c: c, limit: 25, cancel: cancel}
	opts := simulate.Options{Scenes: scenes, Strategies: []simulate.Strategy{simulate.StrategyRules, simulate.StrategyCrossImage},
		Turns: 10, Difficulty: 2, Seed: 42, Model: "faithful", Concurrency: 1, Chat: stop, Out: out, ScenesDigest: "demo"}
	// One at a time, the first two 10-turn episodes finish within 25 requests.
	first, err := simulate.Run(ctx, opts)
	opts.Concurrency = 3
	if err == nil || first.Done == 0 || first.Done == sum.Episodes {
		t.Fatalf("interrupted run: %v, %+v (want some but not all episodes done)", err, first)
	}
	// A write the kill cut short: half an episode after the journaled ones.
	f, _ := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"sample_id":"park_zh_rules_faithful_turn_1","episode_id":"park_zh_rules_faithful","turn":1,"action`)
	f.Close()

	// Without --resume the file is not touched.
	opts.Chat = c
	if _, err := simulate.Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "pass --resume") {
		t.Fatalf("a second run over the file: %v", err)
	}
	// Other settings cannot resume it.
	other := opts
	other.Resume, other.Seed = true, 7
	if _, err := simulate.Run(context.Background(), other); err == nil || !strings.Contains(err.Error(), "--seed 42") {
		t.Fatalf("resume with another seed: %v", err)
	}
	opts.Resume = true
	second, err := simulate.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Resumed != first.Done || second.Resumed+second.Done != sum.Episodes {
		t.Errorf("resume kept %d (first run finished %d), ran %d of %d", second.Resumed, first.Done, second.Done, sum.Episodes)
	}
	got := testkit.SortedLines(t, out)
	if !slices.Equal(got, want) {
		t.Fatalf("resumed output differs from a clean run: %d lines vs %d", len(got), len(want))
	}
	// Resuming a finished run does nothing.
	third, err := simulate.Run(context.Background(), opts)
	if err != nil || third.Done != 0 || third.Resumed != sum.Episodes {
		t.Fatalf("resume of a finished run: %v %+v", err, third)
	}
	if !slices.Equal(testkit.SortedLines(t, out), want) {
		t.Error("resuming the finished run changed it")
	}
}
