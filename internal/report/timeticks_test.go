package report

import (
	"testing"
	"time"
)

// TestTimeTicksDistinct: a time axis has distinct labels, inside the range, as fine as the
// step: a campaign of a few minutes or seconds no longer repeats "11-25 12:52" (issue #29
// item 9); a long one is labelled by day.
func TestTimeTicksDistinct(t *testing.T) {
	t0 := float64(time.Date(2026, 11, 25, 12, 52, 4, 0, time.UTC).Unix())
	for _, tc := range []struct {
		span  float64
		first string
	}{
		{20, "11-25\n12:52:05"},
		{3 * 60, "11-25\n12:52:30"},
		{5 * 3600, "11-25\n13:00"},
		{40 * 86400, ""}, // weeks from the epoch: labelled by date
	} {
		ts := timeTicks(t0, t0+tc.span)
		if len(ts) < 2 || len(ts) > 7 {
			t.Errorf("span %vs: %d ticks", tc.span, len(ts))
			continue
		}
		seen := map[string]bool{}
		for _, x := range ts {
			if seen[x.Label] || x.Value < t0 || x.Value > t0+tc.span {
				t.Errorf("span %vs: tick %q at %v repeats or lies outside the range", tc.span, x.Label, x.Value)
			}
			seen[x.Label] = true
		}
		if tc.first != "" && ts[0].Label != tc.first {
			t.Errorf("span %vs: first tick %q, want %q", tc.span, ts[0].Label, tc.first)
		}
	}
}
