package illusion

import (
	"context"
	"errors"
	"testing"

	"github.com/m3bench/m3eval/internal/usage"
)

// TestFlagChecks: every bad flag value is a usage error, checked before any file is read.
// (--format is checked by the flag itself: m3eval illusion score --format csv is refused
// before ScoreReport runs, see cmd/m3eval TestIllusionUsageErrors.)
func TestFlagChecks(t *testing.T) {
	good := ScoreFlags{Format: "table", Rule: "m3eval"}
	for _, f := range []ScoreFlags{
		{Kind: "both", Format: "table", Rule: "m3eval"},
		{By: "colour", Format: "table", Rule: "m3eval"},
		{Format: "md", Top: -1, Rule: "m3eval"},
		{Format: "json", Rule: "strict"},
		{Format: "json", Rule: "m3eval", Pool: true, Latest: true},
		{Format: "json", Rule: "m3eval", Testsets: []string{"nofile"}},
	} {
		if _, err := ScoreReport(context.Background(), f, []string{"missing.jsonl"}); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", f, err)
		}
	}
	if _, err := ScoreReport(context.Background(), good, []string{"missing.jsonl"}); err == nil || errors.Is(err, usage.Err) {
		t.Errorf("a missing log: %v", err)
	}
	for _, f := range []SampleFlags{{Out: "x"}, {Splits: []string{"A=a.jsonl"}}, {Splits: []string{"A=a.jsonl"}, Out: "x", N: -1}, {Splits: []string{"A"}, Out: "x"}, {Splits: []string{"A=a,,b"}, Out: "x"}} {
		if _, err := Sample(context.Background(), f); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", f, err)
		}
	}
}
