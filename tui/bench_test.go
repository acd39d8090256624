package tui

import (
	"context"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// run executes a command and everything it leads to, feeding the messages to the model:
// a synchronous stand-in for the Bubble Tea runtime.
func run(m *Model, cmd tea.Cmd) {
	for queue := []tea.Cmd{cmd}; len(queue) > 0; {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case nil:
		default:
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
}

// BenchmarkKeyPress200TurnContext measures Update+View for 1,000 presses of scoring keys on the last turn of
// a 201-turn episode at 120x40 (target: median under 1 ms). The database write the key
// starts runs in a command, outside what is measured, as in the real program.
func BenchmarkKeyPress200TurnContext(b *testing.B) {
	ctx := context.Background()
	s := storetest.Open(b, "", store.Options{})
	im, _ := s.BeginImport(ctx, store.ImportOptions{})
	long := strings.Repeat("The person holds an umbrella because the ground is wet and the sky is dark. 地面是湿的。", 4)
	for i := 1; i <= 201; i++ {
		t := dataset.Turn{SampleID: fmt.Sprintf("ep_turn_%d", i), EpisodeID: "ep", Turn: i, ActionType: "mislead",
			TaskType: "t", UserMessage: "Is the sky green? " + long, VLMResponse: long, ExpectedAnswer: "grey"}
		if _, _, err := im.PutTurn(&t); err != nil {
			b.Fatal(err)
		}
	}
	im.Commit()
	r, _ := rubric.Parse(annotations.DefaultRubric)
	actions, _ := rubric.ParseActions(annotations.Actions)
	q, _ := s.OpenQueue(ctx, "bench", nil)
	rend := lipgloss.NewRenderer(os.Stdout)
	rend.SetColorProfile(termenv.Ascii)
	m := New(Options{Context: ctx, Queue: q, Rubric: r, Actions: actions, Renderer: rend, StartSample: "ep_turn_201"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	run(m, m.Init())
	if a := m.annotate; a.item == nil || len(a.item.Earlier) != 200 {
		b.Fatal("the 201st turn did not load with 200 turns of context")
	}
	medianKeyPress(b, m)
}

// medianKeyPress times Update+View of scoring and focus keys and reports the median.
func medianKeyPress(b *testing.B, m *Model) {
	keys := []tea.KeyMsg{
		{Type: tea.KeyRunes, Runes: []rune("3")},
		{Type: tea.KeyUp},
		{Type: tea.KeyRunes, Runes: []rune("4")},
		{Type: tea.KeyUp},
	}
	// Each iteration is a run of presses, so that -benchtime 1x (make bench) still yields a
	// meaningful median.
	const presses = 1000
	times := make([]time.Duration, 0, b.N*presses)
	b.ResetTimer()
	for i := 0; i < b.N*presses; i++ {
		start := time.Now()
		m.Update(keys[i%len(keys)])
		_ = m.View()
		times = append(times, time.Since(start))
		// Drop the queued write: it is measured by the store's own tests, not here.
		m.annotate.save.discard()
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}

// benchImageModel is a model at 120x40 in true colour on an item whose image is a w×h JPEG.
func benchImageModel(b *testing.B, w, h int) (*Model, *store.Queue, string) {
	ctx := context.Background()
	dir := b.TempDir()
	img := filepath.Join(dir, "photo.jpg")
	f, err := os.Create(img)
	if err != nil {
		b.Fatal(err)
	}
	if err := jpeg.Encode(f, testImage(w, h), &jpeg.Options{Quality: 85}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	s := storetest.Open(b, filepath.Join(dir, "b.db"), store.Options{})
	im, _ := s.BeginImport(ctx, store.ImportOptions{})
	long := strings.Repeat("The person holds an umbrella because the ground is wet. 地面是湿的。", 30)
	for i := 1; i <= 3; i++ {
		t := dataset.Turn{SampleID: fmt.Sprintf("ep_turn_%d", i), EpisodeID: "ep", Turn: i, ActionType: "mislead",
			TaskType: "t", UserMessage: "Is the sky green?", VLMResponse: long, ExpectedAnswer: "grey", Images: []string{img}}
		if _, _, err := im.PutTurn(&t); err != nil {
			b.Fatal(err)
		}
	}
	if err := im.Commit(); err != nil {
		b.Fatal(err)
	}
	r, _ := rubric.Parse(annotations.DefaultRubric)
	actions, _ := rubric.ParseActions(annotations.Actions)
	q, _ := s.OpenQueue(ctx, "bench", nil)
	rend := lipgloss.NewRenderer(os.Stdout)
	rend.SetColorProfile(termenv.TrueColor)
	m := New(Options{Context: ctx, Queue: q, Rubric: r, Actions: actions, Renderer: rend, StartSample: "ep_turn_3"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m, q, img
}

// BenchmarkKeyPressWithPreview: Update+View of scoring keys while a true-colour preview
// is on screen (target: median under 1 ms).
func BenchmarkKeyPressWithPreview(b *testing.B) {
	m, _, _ := benchImageModel(b, 640, 480)
	run(m, m.Init())
	if !strings.Contains(m.View(), "▀") {
		b.Fatal("no preview on screen")
	}
	medianKeyPress(b, m)
}

// BenchmarkOpenItem4000x3000JPEG: opening an item whose image is a 12-megapixel JPEG. The
// UI goroutine's share (the item message handled and the first frame drawn, with the image
// still "loading…") is open-ms (target: under 100 ms); decoding and downscaling, which run
// in a command off the UI goroutine, are decode-ms; the first frame with the preview,
// ready-ms, is their sum plus the drawing.
func BenchmarkOpenItem4000x3000JPEG(b *testing.B) {
	m, q, img := benchImageModel(b, 4000, 3000)
	run(m, m.Init())
	ctx := context.Background()
	ref, _, _ := q.Find(ctx, "ep_turn_2")
	it, err := q.Load(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	var open, decode, ready time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := m.annotate
		a.image.cache, a.image.order = map[string]*decodedImage{}, nil
		start := time.Now()
		_, cmd := m.Update(a.save.returned(itemMsg{item: it}))
		v := m.View()
		open += time.Since(start)
		if !strings.Contains(v, "loading") {
			b.Fatal("the first frame does not say the image is loading")
		}
		t0 := time.Now()
		d := decodeImage(defaultImageSource{}, img)
		decode += time.Since(t0)
		if d.err != nil || d.width != 4000 {
			b.Fatalf("decode: %+v", d)
		}
		m.Update(imagesDecodedMsg{turnID: it.Ref.TurnID, images: []*decodedImage{d}})
		if !strings.Contains(m.View(), "▀") {
			b.Fatal("no preview after decoding")
		}
		ready += time.Since(start)
		_ = cmd
		a.save.discard()
		a.loading = false
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(open.Microseconds())/1000/n, "open-ms")
	b.ReportMetric(float64(decode.Microseconds())/1000/n, "decode-ms")
	b.ReportMetric(float64(ready.Microseconds())/1000/n, "ready-ms")
}
