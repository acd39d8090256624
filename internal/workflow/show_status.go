package workflow

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/m3bench/m3eval/internal/plural"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// WriteStatus shows what m3eval status shows: the items of the database named db, and each
// annotator's progress, one aligned line each.
func WriteStatus(out io.Writer, db string, st *store.Status) error {
	fmt.Fprintf(out, "%s: %s in %s\n", textsafe.Line(db), plural.N(st.Turns, "item"), plural.N(st.Episodes, "episode"))
	if len(st.Annotators) == 0 {
		fmt.Fprintln(out, "no annotations yet")
		return nil
	}
	rows := [][]string{{"annotator", "done", "draft", "flagged", "skipped", "median active"}}
	for _, a := range st.Annotators {
		median := "—"
		if a.HasMedian {
			median = a.MedianActive.Round(time.Second).String()
		}
		rows = append(rows, []string{a.Name, strconv.Itoa(a.Done), strconv.Itoa(a.Draft), strconv.Itoa(a.Flagged), strconv.Itoa(a.Skipped), median})
	}
	if err := render.Aligned(out, "  ", rows, allRight); err != nil {
		return err
	}
	for _, a := range st.Annotators {
		if a.Stale > 0 {
			fmt.Fprintf(out, "%s: %d drafts were made on earlier content of replaced turns: re-confirm them in m3eval annotate\n", textsafe.Line(a.Name), a.Stale)
		}
	}
	return nil
}

// allRight aligns every column of the status tables right, the names included, as they
// have always been shown.
func allRight(int) bool { return true }
