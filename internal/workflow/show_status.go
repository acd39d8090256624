package workflow

import (
	"fmt"
	"github.com/m3bench/m3eval/internal/plural"
	"io"
	"text/tabwriter"
	"time"

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
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "annotator\tdone\tdraft\tflagged\tskipped\tmedian active\t")
	for _, a := range st.Annotators {
		median := "—"
		if a.HasMedian {
			median = a.MedianActive.Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", textsafe.Line(a.Name), a.Done, a.Draft, a.Flagged, a.Skipped, median)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range st.Annotators {
		if a.Stale > 0 {
			fmt.Fprintf(out, "%s: %d drafts were made on earlier content of replaced turns: re-confirm them in m3eval annotate\n", textsafe.Line(a.Name), a.Stale)
		}
	}
	return nil
}
