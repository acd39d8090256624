package tui

import (
	"context"
	"fmt"
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
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "b.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
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
		a := m.annotate
		a.ops, a.busy, a.writes = nil, false, 0
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
}
