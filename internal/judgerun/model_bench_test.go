package judgerun

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/modeljudge"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/vlm"
)

// instantJudge answers at once with the first allowed value of every field of the request's
// schema (one answer per distinct schema, computed once): a server that costs nothing, so a
// run measures the model judge's own work.
type instantJudge struct{ answers sync.Map }

func (f *instantJudge) Complete(_ context.Context, _ vlm.Tag, _ []vlm.Message, format json.RawMessage) (vlm.Reply, error) {
	if a, ok := f.answers.Load(string(format)); ok {
		return vlm.Reply{Text: a.(string), Attempts: 1, PromptTokens: 1000, CompletionTokens: 50}, nil
	}
	var rf struct {
		JSONSchema struct {
			Schema struct {
				Properties map[string]struct {
					Enum []json.RawMessage `json:"enum"`
				} `json:"properties"`
			} `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(format, &rf); err != nil {
		return vlm.Reply{}, err
	}
	out := map[string]json.RawMessage{"rationale": json.RawMessage(`"fine"`)}
	for k, p := range rf.JSONSchema.Schema.Properties {
		if len(p.Enum) > 0 {
			out[k] = p.Enum[0]
		}
	}
	b, _ := json.Marshal(out)
	f.answers.Store(string(format), string(b))
	return vlm.Reply{Text: string(b), Attempts: 1}, nil
}

func benchModelJudge(b *testing.B) (*modeljudge.Judge, store.ModelJudgeVersion) {
	rb, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		b.Fatal(err)
	}
	acts, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		b.Fatal(err)
	}
	p, err := modeljudge.ParsePrompt("(built-in)", modeljudge.DefaultPrompt)
	if err != nil {
		b.Fatal(err)
	}
	j, err := modeljudge.New(rb, acts, p)
	if err != nil {
		b.Fatal(err)
	}
	v, params := modeljudge.Version("bench", p, modeljudge.Params{Rubric: rb.Version})
	return j, store.ModelJudgeVersion{Version: v, Model: "bench", PromptHash: p.Hash, Params: params, Prompt: p.Text}
}

// BenchmarkModelJudgeOverhead is the model judge's own cost per turn, the server excluded:
// reading the turns, building each request (prompt, history, schema), reading the answer
// and storing the scores, rationale and cost, over 5,000 turns against an instant server.
// Target: under 1 ms per turn (ms/turn).
func BenchmarkModelJudgeOverhead(b *testing.B) {
	const n = 5000
	j, v := benchModelJudge(b)
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "o.db")
		fillBenchDB(b, path, n)
		s, err := store.Open(context.Background(), path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := JudgeModel(context.Background(), s, ModelOptions{Name: "m", Judge: j, Client: &instantJudge{}, Version: v, Concurrency: 1})
		took := time.Since(start)
		b.StopTimer()
		s.Close()
		if err != nil || sum.Scored != n {
			b.Fatalf("%v: %+v", err, sum)
		}
		b.ReportMetric(float64(took.Microseconds())/1000/n, "ms/turn")
		b.StartTimer()
	}
}

// BenchmarkModelJudge10kDemoVLM judges 10,000 turns against the demo VLM's careful judge
// over HTTP on 127.0.0.1 with 16 requests in flight, as m3eval judge --concurrency 16 does.
// Target: under 60 s (s/run).
func BenchmarkModelJudge10kDemoVLM(b *testing.B) {
	const n = 10000
	j, v := benchModelJudge(b)
	demo, err := demovlm.New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(demo)
	defer srv.Close()
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "d.db")
		fillBenchDB(b, path, n)
		s, err := store.Open(context.Background(), path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c, err := vlm.New(vlm.Options{Endpoint: srv.URL + "/v1", Model: "judge-careful", MaxRetries: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := JudgeModel(context.Background(), s, ModelOptions{Name: "demo", Judge: j, Client: c, Version: v, Concurrency: 16})
		took := time.Since(start)
		b.StopTimer()
		s.Close()
		if err != nil || sum.Scored != n {
			b.Fatalf("%v: %+v", err, sum)
		}
		b.ReportMetric(took.Seconds(), "s/run")
		b.StartTimer()
	}
}
