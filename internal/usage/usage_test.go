package usage

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestMark(t *testing.T) {
	err := Errorf("--n %d: must be at least 0", -1)
	if !errors.Is(err, Err) || err.Error() != "--n -1: must be at least 0" {
		t.Fatalf("Errorf: %v", err)
	}
	w := fmt.Errorf("context: %w", Wrap(io.EOF))
	if !errors.Is(w, Err) || !errors.Is(w, io.EOF) || w.Error() != "context: EOF" {
		t.Fatalf("Wrap: %v", w)
	}
	if plain := fmt.Errorf("read: %w", io.EOF); Wrap(nil) != nil || errors.Is(plain, Err) {
		t.Fatal("an unmarked error is a usage error")
	}
}
