package illusion

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestFlagChecks: every bad flag value is a usage error, checked before any file is read (an
// enumerated flag's when it is parsed). --format is declared by the command with render's
// values: m3eval illusion score --format csv is refused before ScoreReport runs, see
// cmd/m3eval TestIllusionUsageErrors.
func TestFlagChecks(t *testing.T) {
	for _, args := range [][]string{{"--kind", "both"}, {"--by", "colour"}, {"--rule", "strict"}} {
		fs := pflag.NewFlagSet("illusion score", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		(&ScoreFlags{}).AddFlags(fs)
		var ve *cmdutil.ValueError
		if err := fs.Parse(args); !errors.As(err, &ve) || ve.Flag != args[0][2:] {
			t.Errorf("%q: %v", args, err)
		}
	}
	good := ScoreFlags{Format: "table", Rule: "m3eval"}
	for _, f := range []ScoreFlags{
		{Format: "md", Top: -1, Rule: "m3eval"},
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
