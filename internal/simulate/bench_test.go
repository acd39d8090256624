package simulate

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/m3bench/m3eval/internal/vlm"
)

// cannedVLM answers instantly from a fixed list: what remains is the simulator's own work.
type cannedVLM struct {
	answers []string
	n       int
}

func (c *cannedVLM) Chat(_ context.Context, _ vlm.Tag, _ []vlm.Message) (string, error) {
	c.n++
	return c.answers[c.n%len(c.answers)], nil
}

// BenchmarkTurnOverhead is the simulator's own work per turn of 40-turn rule episodes:
// evidence parsing, strategy, templating and encoding the turn record (target: under 1 ms).
func BenchmarkTurnOverhead(b *testing.B) {
	for _, id := range []string{"umbrella_zh", "apples_en"} {
		b.Run(id, func(b *testing.B) {
			sc := demoScene(b, id)
			opts := &Options{Turns: 40, Seed: 42, Model: "bench", Difficulty: 2,
				Chat: &cannedVLM{answers: []string{
					"图中有一个穿红色外套的人，撑着一把黑色的伞。右边有一棵树，天空是灰色的。地面是湿的，有几处积水。",
					"There is a white plate on the left, five red apples in the middle and a green cup on the right.",
					"不对，伞是黑色的，不是红色的。The cup is blue, not green.",
					"明白了。I see the table is brown and the sky is grey.",
				}}}
			ep := episode{id: sc.ID + "_rules_bench", scene: sc, strategy: StrategyRules}
			var buf bytes.Buffer
			var prog turnCount
			b.ReportAllocs()
			b.ResetTimer()
			turns := 0
			for range b.N {
				buf.Reset()
				n, _, err := opts.runEpisode(context.Background(), ep, &buf, &prog)
				if err != nil || n != 40*len(sc.Tasks()) {
					b.Fatalf("%d turns, %v", n, err)
				}
				turns += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(turns)/1e3, "µs/turn")
		})
	}
}

// BenchmarkDecisionNatural is the simulator's decision on one natural answer (#36): reading
// it into claims against the scene at that turn (the answer reader's vocabulary compiled
// once per scene state, as in an episode) and the errors and evidence it shows, over the
// held-out natural answers (target: under 1 ms a turn).
func BenchmarkDecisionNatural(b *testing.B) {
	scenes := naturalScenes(b)
	items := readNatural(b, "heldout.jsonl")
	ks := make([]*knowledge, len(items))
	for i, it := range items {
		ks[i] = naturalKnowledge(b, scenes, it)
		ks[i].reader()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		i := n % len(items)
		k := *ks[i]
		k.evidence = slices.Clone(ks[i].evidence)
		k.observe(items[i].Answer, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/answer")
}
