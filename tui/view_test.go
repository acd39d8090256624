package tui

import (
	"strconv"
	"testing"
)

// TestWidthCacheLaysOutOncePerWidth: the help screen's reference is laid out again only when
// the width changes (it was wrapped on every call while ? was open).
func TestWidthCacheLaysOutOncePerWidth(t *testing.T) {
	var c widthCache
	calls := 0
	render := func(w int) string { calls++; return "text at " + strconv.Itoa(w) }
	for _, w := range []int{80, 80, 80, 120, 120, 80} {
		if got, want := c.get(w, render), "text at "+strconv.Itoa(w); got != want {
			t.Fatalf("get(%d) = %q, want %q", w, got, want)
		}
	}
	if calls != 3 {
		t.Fatalf("laid out %d times for widths 80, 80, 80, 120, 120, 80; want 3", calls)
	}
}
