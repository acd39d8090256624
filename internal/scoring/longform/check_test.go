package longform

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/usage"
)

// TestRunOptionsCheck: every listed --cluster and --mean value is accepted, others are
// refused when parsed, and the combinations m3eval agree refuses are refused with its
// messages.
func TestRunOptionsCheck(t *testing.T) {
	ok := RunOptions{Files: Options{Auto: "auto.csv"}, Levels: "levels.csv", Mean: MeanExact}
	for _, c := range ClusterColumns {
		for _, m := range Means {
			o := ok
			o.ClusterColumn, o.Mean = string(c), m
			if err := o.Check(); err != nil {
				t.Errorf("--cluster %s --mean %s: %v", c, m, err)
			}
		}
	}
	for _, tc := range []struct {
		set  func(*RunOptions)
		want string
	}{
		{func(o *RunOptions) { o.Files.Auto = "" }, "--levels needs --auto: it groups the correlations with automatic scores"},
		{func(o *RunOptions) { o.ClusterColumn, o.Levels, o.Files.Auto = "system", "", "" }, "--cluster system needs --levels, the file holding that column"},
		{func(o *RunOptions) { o.ClusterColumn, o.Clusters = "system", "c.csv" }, "--cluster and --clusters both name the clusters: use one"},
	} {
		o := ok
		tc.set(&o)
		if err := o.Check(); err == nil || err.Error() != tc.want || !errors.Is(err, usage.Err) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	// The values are checked when parsed.
	for _, tc := range [][]string{{"--cluster", "item", `--cluster "item": use one of system, segment`}, {"--mean", "", `--mean "": use one of exact, float`}} {
		fs := pflag.NewFlagSet("agree", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		(&RunOptions{}).AddFlags(fs)
		if err := fs.Parse(tc[:2]); err == nil || !strings.HasSuffix(err.Error(), tc[2]) {
			t.Errorf("%q: %v, want %s", tc[:2], err, tc[2])
		}
	}
	o := ok
	if o.ClusterName() != "" {
		t.Errorf("no clusters: %q", o.ClusterName())
	}
	o.ClusterColumn = "segment"
	if o.ClusterName() != "segment" {
		t.Errorf("--cluster segment: %q", o.ClusterName())
	}
	o.ClusterColumn, o.Clusters = "", "c.csv"
	if o.ClusterName() != "cluster" {
		t.Errorf("--clusters: %q", o.ClusterName())
	}
}
