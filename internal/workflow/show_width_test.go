package workflow

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/m3bench/m3eval/internal/store"
)

// TestStatusTablesAlignChineseNames: m3eval status and the team screen of m3eval serve align
// their columns by display width, so a row with a Chinese name (each character two columns)
// is as wide as the others, and no line ends in blanks.
func TestStatusTablesAlignChineseNames(t *testing.T) {
	st := &store.Status{Turns: 10, Episodes: 2, Annotators: []store.AnnotatorStatus{
		{Name: "张伟伟", Done: 12, Draft: 1, MedianActive: 41 * time.Second, HasMedian: true},
		{Name: "bob", Done: 3, Flagged: 2},
	}}
	var status, team bytes.Buffer
	if err := WriteStatus(&status, "s.db", st); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := WriteTeam(&team, &Team{Status: st, Now: now}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"status": status.String(), "team": team.String()} {
		var widths []int
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "annotator") || strings.Contains(l, "张伟伟") || strings.Contains(l, "bob") {
				widths = append(widths, runewidth.StringWidth(l))
			}
			if strings.HasSuffix(l, " ") {
				t.Errorf("%s: line ends in blanks: %q", name, l)
			}
		}
		if len(widths) != 3 || widths[0] != widths[1] || widths[1] != widths[2] {
			t.Errorf("%s: the header and two rows have display widths %v, want three equal:\n%s", name, widths, out)
		}
	}
}
