package vistrajqa

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeBenchInput writes n trajectories of 30 steps (probes after 6/12/18/24, 17 questions,
// 12 memory points of which 2 updates, with realistic text lengths: about 20 KB a line).
func writeBenchInput(tb testing.TB, path string, n int) int64 {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	// The memory points below sit at steps 1+m*29/11; these are the first ids of each session.
	firstMP := []int{1, 4, 6, 8, 11}
	obs := strings.Repeat("You see a countertop, a cabinet, a drawer and a sink; the room is lit. ", 4)
	for i := range n {
		fmt.Fprintf(w, `{"session_id":"bench-%06d","step_plan":[`, i)
		for s := 1; s <= 30; s++ {
			if s > 1 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"step_num":%d,"observation":"Step %d. %s","feedback":"You arrive at location %d. Nothing happens.","image_caption":"A first-person view of a kitchen counter with a red mug, a knife and a blue box next to the sink, step %d.","thought":"The mug is probably in the cabinet; I should open it and check, then go back to the counter %d.","action":"go to cabinet %d"}`, s, s, obs, s, s, s, s)
		}
		w.WriteString(`],"probes":[`)
		for p := 1; p <= 4; p++ {
			if p > 1 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"after_step":%d,"questions":[{"question":"Where was the mug at step %d?","answer":"In cabinet %d.","type":"FR","evidence":["mp_S%02d_%d"],"difficulty":"easy"},{"question":"What colour was the box?","answer":"Blue.","type":"VFR","evidence":["S%02d_img_3"],"difficulty":"medium"}]}`, 6*p, 6*p, p, p-1, firstMP[p-1], p-1)
		}
		w.WriteString(`],"post_trajectory_qa":[`)
		for q, typ := range []string{"FR", "DU", "MB", "TR", "KR", "VFR", "VS", "VU", "CMR"} {
			if q > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"question":"Question %d about the whole trajectory?","answer":"Answer %d.","type":"%s","evidence":["mp_S04_11","S04_img_2"],"difficulty":"hard"}`, q, q, typ)
		}
		w.WriteString(`],"memory_points":[`)
		for m := range 12 {
			if m > 0 {
				w.WriteByte(',')
			}
			step := 1 + m*29/11
			sess := min((step-1)/6, 4)
			upd := `"is_update":false`
			if m == 5 || m == 11 {
				upd = `"is_update":true,"original_memories":["The mug was on the counter."],"update_type":"location_change"`
			}
			fmt.Fprintf(w, `{"mp_id":"mp_S%02d_%d","content":"The red mug is in cabinet %d.","type":"state_memory","source":"primary","step_num":%d,%s,"importance":0.8}`, sess, m+1, m, step, upd)
		}
		w.WriteString("]}\n")
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return fi.Size()
}

// peakHeap samples the live heap while running f; the peak shows whether memory follows the
// number of trajectories (it should not: one record at a time plus the ids).
func peakHeap(f func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// BenchmarkConvert converts n trajectories of 30 steps per iteration, validation included
// (Run validates its output before the rename). The target: 10,000 in under 10 s.
// peak-heap-MB for n=1000 and n=10000 should be about the same.
func BenchmarkConvert(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("trajectories=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			in := filepath.Join(dir, "sessions-bench.jsonl")
			size := writeBenchInput(b, in, n)
			b.SetBytes(size)
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			for i := range b.N {
				out := filepath.Join(dir, fmt.Sprintf("out-%d", i))
				p := peakHeap(func() {
					res, err := ConvertFiles(context.Background(), Request{Inputs: []string{in}, Output: out})
					if err != nil {
						b.Fatal(err)
					}
					if res.Converted != n {
						b.Fatalf("converted %d of %d", res.Converted, n)
					}
				})
				peak = max(peak, p)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
