package vistrajqa

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestRunUsage: a request without inputs or without an output is a usage error (exit 2).
func TestRunUsage(t *testing.T) {
	for _, q := range []Request{{Output: "x"}, {Inputs: []string{"a.jsonl"}}} {
		err := q.Run(context.Background(), &cmdio.IO{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
		if !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", q, err)
		}
	}
}

// The skipped records are listed up to 100, then counted.
func TestWriteSkipped(t *testing.T) {
	var skipped []*RecordError
	for i := 1; i <= 103; i++ {
		skipped = append(skipped, &RecordError{File: "s.jsonl", Line: i, Path: "trajectory_id", Msg: "missing"})
	}
	var b bytes.Buffer
	writeSkipped(&b, skipped)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 102 || lines[0] != "skipped 103 bad records:" || lines[100] != "  s.jsonl:100: trajectory_id: missing" || lines[101] != "  ... and 3 more" {
		t.Fatalf("%d lines: %q ... %q", len(lines), lines[0], lines[len(lines)-2:])
	}
}
