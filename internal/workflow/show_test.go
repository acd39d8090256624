package workflow

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/store"
)

// TestSampleTableAlignsAndEscapes: Chinese stratum values keep the columns aligned (two
// cells per character), and an escape sequence in the data is printed as text.
func TestSampleTableAlignsAndEscapes(t *testing.T) {
	info := &store.SampleInfo{Name: "试点", Size: 3, Seed: 1, Params: store.SampleParams{By: []string{"meta.phase"}},
		Strata: []sample.Stratum{
			{Key: []string{"记忆构建"}, Available: 10, Allocated: 2, Drawn: 2},
			{Key: []string{"red\x1b[31m"}, Available: 5, Allocated: 1, Drawn: 1},
			{Key: []string{""}, Available: 1, Allocated: 0, Drawn: 0},
		}}
	var b bytes.Buffer
	if err := WriteSample(&b, info, render.Table); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b") || !strings.Contains(out, "red␛[31m") || !strings.Contains(out, "(none)") {
		t.Fatalf("escaping:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:] // the table, after the title line
	for _, l := range lines {
		if lipgloss.Width(l) != lipgloss.Width(lines[0]) {
			t.Errorf("line %q is %d cells wide, the first %d", l, lipgloss.Width(l), lipgloss.Width(lines[0]))
		}
	}
}
