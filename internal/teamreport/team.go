package teamreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/m3bench/m3eval/internal/workflow"
)

// WriteTeam writes the admin's status screen of m3eval serve: one line per annotator with
// their counts, today's labels and pace, and median active time, then the QC table.
func WriteTeam(w io.Writer, t *workflow.Team) error {
	var b strings.Builder
	st := t.Status
	fmt.Fprintf(&b, "%d items in %d episodes\n\n", st.Turns, st.Episodes)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "annotator\tdone\tdraft\tflagged\tskipped\ttoday\ttoday /h\tmedian active\t")
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
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", clean(a.Name), a.Done, a.Draft, a.Flagged, a.Skipped, t.Today[a.Name], rate, median)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.Annotators) == 0 {
		b.WriteString("no annotations yet\n")
	}
	b.WriteString("\n")
	if err := WriteQC(&b, "all labels", t.QC, Table); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
