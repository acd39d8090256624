package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// writeChats writes convs OpenAI-format conversations of 10 turns (a system prompt, an
// image on the first user message) and, to native, the same turns as m3eval turn records,
// meta included, so the two imports store identical rows.
func writeChats(tb testing.TB, openai, native string, convs int) {
	tb.Helper()
	fo, err := os.Create(openai)
	if err != nil {
		tb.Fatal(err)
	}
	fn, err := os.Create(native)
	if err != nil {
		tb.Fatal(err)
	}
	wo, wn := bufio.NewWriterSize(fo, 1<<20), bufio.NewWriterSize(fn, 1<<20)
	const sys = "You are a careful visual assistant."
	for c := 0; c < convs; c++ {
		id := fmt.Sprintf("conv%07d", c)
		img := fmt.Sprintf("img/%d.png", c%1000)
		fmt.Fprintf(wo, `{"id":%q,"model":"qwen2-vl-7b","messages":[{"role":"system","content":%q}`, id, sys)
		for t := 1; t <= 10; t++ {
			user := fmt.Sprintf("Why is the person in image %d holding an umbrella? Look at the ground, turn %d.", c%3, t)
			resp := fmt.Sprintf("The person is holding an umbrella because it is raining: the ground is wet and the sky is dark grey, turn %d.", t)
			if t == 1 {
				fmt.Fprintf(wo, `,{"role":"user","content":[{"type":"text","text":%q},{"type":"image_url","image_url":{"url":%q}}]}`, user, img)
			} else {
				fmt.Fprintf(wo, `,{"role":"user","content":%q}`, user)
			}
			fmt.Fprintf(wo, `,{"role":"assistant","content":%q}`, resp)
			fmt.Fprintf(wn, `{"sample_id":"%s_turn_%d","episode_id":%q,"turn":%d,"action_type":"unknown","task_type":"",`+
				`"user_message":%q,"vlm_response":%q,"expected_answer":"","images":[%q],"model":"qwen2-vl-7b",`+
				`"meta":{"source":{"format":"openai","id":%q,"system":%q}}}`+"\n", id, t, id, t, user, resp, img, id, sys)
		}
		wo.WriteString("]}\n")
	}
	if err := wo.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := wn.Flush(); err != nil {
		tb.Fatal(err)
	}
	fo.Close()
	fn.Close()
}

// peakHeap samples the in-use heap until stop is called and returns its peak.
func peakHeap() (stop func() uint64) {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkImportOpenAI compares importing OpenAI-format conversations of 10 turns
// (M3EVAL_BENCH_CONVS, default 100,000: 1,000,000 turns) with importing the same turns as
// native JSON Lines (target: the openai import within 2x the native one's time) and reports
// the peak in-use heap, which must not grow with the file (compare -convs sizes).
func BenchmarkImportOpenAI(b *testing.B) {
	convs := 100_000
	if v := os.Getenv("M3EVAL_BENCH_CONVS"); v != "" {
		fmt.Sscan(v, &convs)
	}
	dir := b.TempDir()
	openai, native := filepath.Join(dir, "chats.jsonl"), filepath.Join(dir, "turns.jsonl")
	writeChats(b, openai, native, convs)
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as m3eval import runs
	for _, format := range []ingest.Format{ingest.FormatM3eval, ingest.FormatOpenAI} {
		src := native
		if format == ingest.FormatOpenAI {
			src = openai
		}
		b.Run(string(format), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				db := filepath.Join(dir, fmt.Sprintf("%s%d.db", format, i))
				runtime.GC()
				stop := peakHeap()
				start := time.Now()
				c := importAs(b, db, src, format)
				el := time.Since(start)
				peak := stop()
				if c.Turns[dataset.Inserted] != 10*convs {
					b.Fatalf("%v: want %d new turns", c, 10*convs)
				}
				b.ReportMetric(float64(10*convs)/el.Seconds(), "turns/s")
				b.ReportMetric(el.Seconds(), "s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			}
		})
	}
}

// TestOpenAIImportEqualsNative pins the benchmark's fairness: the conversations, imported
// over the native import of writeChats' turn records, change nothing.
func TestOpenAIImportEqualsNative(t *testing.T) {
	dir := t.TempDir()
	openai, native := filepath.Join(dir, "chats.jsonl"), filepath.Join(dir, "turns.jsonl")
	writeChats(t, openai, native, 30)
	db := filepath.Join(dir, "t.db")
	if c := importAs(t, db, native, ingest.FormatM3eval); c.Turns[dataset.Inserted] != 300 {
		t.Fatalf("native: %v", c)
	}
	if c := importAs(t, db, openai, ingest.FormatOpenAI); c.Turns[dataset.Unchanged] != 300 {
		t.Fatalf("openai over native: %v", c)
	}
}

// importAs imports the file at path, read in format, into db in one transaction.
func importAs(tb testing.TB, db, path string, format ingest.Format) ingest.Counts {
	tb.Helper()
	rd, closer, err := ingest.Open(path, ingest.Options{Format: format})
	if err != nil {
		tb.Fatal(err)
	}
	defer closer.Close()
	r, _ := rubric.Parse(annotations.DefaultRubric)
	c, err := importSource(tb, db, r, path, rd, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// importSource imports the records of src, as m3eval import does, into the database at db.
func importSource(tb testing.TB, db string, r *rubric.Rubric, name string, src ingest.Source, now time.Time) (ingest.Counts, error) {
	tb.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	return storetest.Import(s, name, src, ingest.LabelOptions{Rubric: r, Annotator: "fuzz", Now: now})
}
