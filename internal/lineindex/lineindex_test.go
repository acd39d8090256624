package lineindex_test

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/lineindex"
)

func TestLineAt(t *testing.T) {
	text := "a\nbb\n\nccc\nd"
	li := lineindex.New(strings.NewReader(text), 0)
	br := bufio.NewReaderSize(li, 16)
	if _, err := io.ReadAll(br); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		off  int64
		line int
	}{{0, 1}, {1, 1}, {2, 2}, {5, 3}, {6, 4}, {10, 5}, {3, 5}} { // the last one goes backwards
		if got := li.LineAt(tc.off); got != tc.line {
			t.Errorf("LineAt(%d) = %d, want %d", tc.off, got, tc.line)
		}
	}
	if got := lineindex.New(strings.NewReader(""), 41).LineAt(0); got != 42 {
		t.Errorf("lines before: %d", got)
	}
}

func TestLastLine(t *testing.T) {
	for text, want := range map[string]int{"a\nb\n": 2, "a\nb": 2, "": 1, "\n\n": 2} {
		li := lineindex.New(strings.NewReader(text), 0)
		io.ReadAll(li)
		if got := li.LastLine(); got != want {
			t.Errorf("LastLine(%q) = %d, want %d", text, got, want)
		}
	}
}
