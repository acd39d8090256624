package illusion

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestFlagChecks: every bad flag value is a usage error, checked before any file is read (an
// enumerated flag's when it is parsed).
func TestFlagChecks(t *testing.T) {
	for _, args := range [][]string{{"--kind", "both"}, {"--by", "colour"}, {"--rule", "strict"}, {"--format", "csv"}} {
		fs := pflag.NewFlagSet("illusion score", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		(&ScoreRequest{}).AddFlags(fs)
		var ve *cmdutil.ValueError
		if err := fs.Parse(args); !errors.As(err, &ve) || ve.Flag != args[0][2:] {
			t.Errorf("%q: %v", args, err)
		}
	}
	missing := []string{"missing.jsonl"}
	good := ScoreRequest{Format: "table", Rule: "m3eval", Logs: missing}
	for _, q := range []ScoreRequest{
		{Format: "md", Top: -1, Rule: "m3eval", Logs: missing},
		{Format: "json", Rule: "m3eval", Pool: true, Latest: true, Logs: missing},
		{Format: "json", Rule: "m3eval", Testsets: []string{"nofile"}, Logs: missing},
	} {
		if err := q.Run(context.Background(), &cmdio.IO{}); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", q, err)
		}
	}
	if err := good.Run(context.Background(), &cmdio.IO{}); err == nil || errors.Is(err, usage.Err) {
		t.Errorf("a missing log: %v", err)
	}
	for _, q := range []SampleRequest{{Out: "x"}, {Splits: []string{"A=a.jsonl"}}, {Splits: []string{"A=a.jsonl"}, Out: "x", N: -1}, {Splits: []string{"A"}, Out: "x"}, {Splits: []string{"A=a,,b"}, Out: "x"}} {
		if err := q.Run(context.Background(), &cmdio.IO{}); !errors.Is(err, usage.Err) {
			t.Errorf("%+v: %v is not a usage error", q, err)
		}
	}
}
