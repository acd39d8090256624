package workflow

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
)

// Team is what the admin's status screen of m3eval serve shows: every annotator's
// progress, what they submitted today and since when, and the quality-control flags of
// their labels (m3eval qc over every label).
type Team struct {
	Status *store.Status
	Now    time.Time
	// Today counts each annotator's labels submitted since local midnight in a session of
	// theirs (imported labels left out); First is the earliest of them.
	Today map[string]int
	First map[string]time.Time
	QC    []campaign.AnnotatorQC
}

// WriteTeam writes the admin's status screen of m3eval serve: one line per annotator with
// their counts, today's labels and pace, and median active time, then the QC table.
func WriteTeam(w io.Writer, t *Team) error {
	var b strings.Builder
	st := t.Status
	fmt.Fprintf(&b, "%s in %s\n\n", plural.N(st.Turns, "item"), plural.N(st.Episodes, "episode"))
	rows := [][]string{{"annotator", "done", "draft", "flagged", "skipped", "today", "today /h", "median active"}}
	for _, a := range st.Annotators {
		median, rate := "—", "—"
		if a.HasMedian {
			median = a.MedianActive.Round(time.Second).String()
		}
		if n := t.Today[a.Name]; n > 0 {
			if h := t.Now.Sub(t.First[a.Name]).Hours(); h > 0 {
				rate = fmt.Sprintf("%.1f", float64(n)/max(h, 1.0/60))
			}
		}
		rows = append(rows, []string{a.Name, strconv.Itoa(a.Done), strconv.Itoa(a.Draft), strconv.Itoa(a.Flagged), strconv.Itoa(a.Skipped), strconv.Itoa(t.Today[a.Name]), rate, median})
	}
	if err := render.Aligned(&b, "  ", rows, allRight); err != nil {
		return err
	}
	if len(st.Annotators) == 0 {
		b.WriteString("no annotations yet\n")
	}
	b.WriteString("\n")
	if err := WriteQC(&b, "all labels", t.QC, render.Table); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
