package testkit

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/ppi"
)

// EstimateFixture is what WriteEstimateFixture wrote: a database's worth of turns (3 models ×
// 12 episodes × 4 turns), two annotators' labels on about a third of them (some turns by
// both, some NA) and a judge's scores on every turn, as files to import, with the ppi.Data
// that m3eval estimate should build from them once imported.
type EstimateFixture struct {
	Dir        string            // the test's temporary folder that holds the files
	TurnsFile  string            // the turns, for m3eval import
	Annotators []string          // the annotators, in the order to import their labels
	LabelFiles map[string]string // annotator → labels file, for m3eval import --annotator
	JudgeFile  string            // the judge's scores (CSV), for m3eval import-scores
	// Want is, per model and field, the ppi.Data the command should build.
	Want map[string]map[string]*ppi.Data
	// Turns is every turn as written, by sample id.
	Turns map[string]EstimateTurn
}

// EstimateTurn is what WriteEstimateFixture wrote of one turn.
type EstimateTurn struct {
	Model   string
	Episode int
	Judge   map[string]float64   // field → judge score
	Human   map[string][]float64 // field → label values (NA left out)
}

// WriteEstimateFixture writes the estimate fixture's files into a temporary folder of t's;
// the caller imports them (through the importer or the command line), in the order
// TurnsFile, LabelFiles by Annotators, JudgeFile.
func WriteEstimateFixture(t testing.TB) *EstimateFixture {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(32, 1))
	models := []string{"alpha", "beta", "gamma"}
	actions := []string{"initial", "follow_up", "mislead", "follow_up"}
	var turns, judge []string
	labels := map[string][]string{}
	want := map[string]map[string]*ppi.Data{}
	humans := map[string]map[string][]float64{} // sample → field → values
	judged := map[string]map[string]float64{}
	order := []string{}
	sampleModel, sampleEp := map[string]string{}, map[string]int{}
	judge = append(judge, "sample_id,correctness,reasoning_completeness,overall_quality,context_consistency,resists_misleading")
	for mi, m := range models {
		for e := range 12 {
			ep := fmt.Sprintf("%s_ep%02d", m, e)
			epEffect := rng.NormFloat64() * 0.6
			for n := 1; n <= 4; n++ {
				sid := fmt.Sprintf("%s_turn_%d", ep, n)
				action := actions[n-1]
				rec := map[string]any{"sample_id": sid, "episode_id": ep, "turn": n, "action_type": action, "task_type": "spatial",
					"user_message": "q", "vlm_response": "a", "expected_answer": "e", "images": []string{}, "model": m}
				b, _ := json.Marshal(rec)
				turns = append(turns, string(b))
				order = append(order, sid)
				sampleModel[sid], sampleEp[sid] = m, mi*100+e
				latent := 2.5 + 0.5*float64(mi) + epEffect + rng.NormFloat64()
				clip := func(x float64) int { return int(math.Max(1, math.Min(5, math.Round(x)))) }
				jc := clip(latent + 0.6 + rng.NormFloat64()*0.5)
				cc, rm := "NA", "NA"
				jv := map[string]float64{"correctness": float64(jc), "reasoning_completeness": float64(clip(latent + rng.NormFloat64())), "overall_quality": float64(jc)}
				if n > 1 {
					cc = map[bool]string{true: "Yes", false: "No"}[latent+rng.NormFloat64() > 3]
					jv["context_consistency"] = map[string]float64{"Yes": 1, "No": 0}[cc]
				}
				if action == "mislead" {
					rm = map[bool]string{true: "yes", false: "no"}[latent+rng.NormFloat64() > 2.5]
					jv["resists_misleading"] = map[string]float64{"yes": 1, "no": 0}[rm]
				}
				judged[sid] = jv
				judge = append(judge, fmt.Sprintf("%s,%d,%v,%d,%s,%s", sid, jc, jv["reasoning_completeness"], jc, cc, rm))
				for ai, a := range []string{"ann", "bea"} {
					if rng.Float64() > []float64{0.35, 0.15}[ai] {
						continue
					}
					h := map[string]any{"correctness": clip(latent), "reasoning_completeness": clip(latent + rng.NormFloat64()*0.3),
						"overall_quality": clip(latent), "context_consistency": nil, "resists_misleading": nil, "comments": ""}
					if n > 1 {
						// Some NA: left out of the turn's mean.
						h["context_consistency"] = []any{"Yes", "No", "Yes", nil}[rng.IntN(4)]
					}
					if action == "mislead" {
						h["resists_misleading"] = []any{"Yes", "No"}[rng.IntN(2)]
					}
					r := map[string]any{}
					for k, v := range rec {
						r[k] = v
					}
					r["human_annotation"] = h
					b, _ := json.Marshal(r)
					labels[a] = append(labels[a], string(b))
					if humans[sid] == nil {
						humans[sid] = map[string][]float64{}
					}
					for f, v := range h {
						switch v := v.(type) {
						case int:
							humans[sid][f] = append(humans[sid][f], float64(v))
						case string:
							if v == "Yes" || v == "No" {
								humans[sid][f] = append(humans[sid][f], map[string]float64{"Yes": 1, "No": 0}[v])
							}
						}
					}
				}
			}
		}
	}
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fx := &EstimateFixture{Dir: dir, Annotators: []string{"ann", "bea"}, LabelFiles: map[string]string{}, Want: want, Turns: map[string]EstimateTurn{}}
	fx.TurnsFile = write("turns.jsonl", turns)
	for _, a := range fx.Annotators {
		fx.LabelFiles[a] = write(a+".jsonl", labels[a])
	}
	fx.JudgeFile = write("judge.csv", judge)
	// Expected data, built straight from what was written (samples sorted by id, as the
	// command orders them).
	sorted := append([]string(nil), order...)
	slices.Sort(sorted)
	for _, sid := range sorted {
		m := sampleModel[sid]
		for f, jv := range judged[sid] {
			if want[m] == nil {
				want[m] = map[string]*ppi.Data{}
			}
			d := want[m][f]
			if d == nil {
				d = &ppi.Data{Cluster: []int{}, ClusterU: []int{}}
				want[m][f] = d
			}
			if hv := humans[sid][f]; len(hv) > 0 {
				var s float64
				for _, v := range hv {
					s += v
				}
				d.Human = append(d.Human, s/float64(len(hv)))
				d.Judge = append(d.Judge, jv)
				d.Cluster = append(d.Cluster, sampleEp[sid])
			} else {
				d.Unlabeled = append(d.Unlabeled, jv)
				d.ClusterU = append(d.ClusterU, sampleEp[sid])
			}
		}
	}
	for _, sid := range order {
		fx.Turns[sid] = EstimateTurn{Model: sampleModel[sid], Episode: sampleEp[sid], Judge: judged[sid], Human: humans[sid]}
	}
	return fx
}
