package illusion

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkBuildTestSets samples the paper's three splits at full size (20,000, 5,600 and
// 6,900 rows with 2-10 KB PNG images, 128 rows per row group like datasets writes image
// data) and writes the three 1,000-row Parquet test sets; every iteration does the whole
// job. The inputs are generated once, outside the timer.
func BenchmarkBuildTestSets(b *testing.B) {
	dir := b.TempDir()
	var inputs []SplitInput
	var inBytes int64
	for _, s := range []struct {
		name string
		size int
		salt uint64
		w    []int
	}{
		{"Illusion_ICON", 20000, 1, []int{34, 67, 99}},
		{"Illusion_LOGO", 5600, 2, []int{30, 70, 100}},
		{"Illusion_IN", 6900, 3, []int{50, 80, 97}},
	} {
		p := filepath.Join(dir, s.name+".parquet")
		writeHFParquet(b, p, synthNames(s.size, s.salt, s.w, false), 128, 0)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		inBytes += st.Size()
		inputs = append(inputs, SplitInput{s.name, []string{p}})
	}
	b.SetBytes(inBytes)
	b.ReportAllocs()
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	go samplePeakHeap(&peak, stop)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := BuildTestSets(context.Background(), inputs, 1000, 42, filepath.Join(dir, "out"))
		if err != nil {
			b.Fatal(err)
		}
		if len(res) != 3 || len(res[0].Selection.Indices) != 1000 {
			b.Fatalf("unexpected result %+v", res[0].Selection.Groups)
		}
	}
	b.StopTimer()
	close(stop)
	// The streaming claim in numbers: the input is ~190 MB, the heap should stay near a
	// few row groups.
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(inBytes)/(1<<20), "input-MB")
}

// samplePeakHeap records the largest HeapInuse seen every few milliseconds until stop.
func samplePeakHeap(peak *atomic.Uint64, stop <-chan struct{}) {
	var ms runtime.MemStats
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}
}
