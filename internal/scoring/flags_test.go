package scoring

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

func validRequest() Request {
	return Request{StatFlags: StatFlags{Format: "table", CI: "percentile", Adjust: "none", Raters: "distinct"}, Cluster: "episode"}
}

// parse parses args with score's flags (AddFlags).
func parse(t *testing.T, args ...string) (*Request, error) {
	t.Helper()
	q := &Request{}
	fs := pflag.NewFlagSet("score", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	return q, fs.Parse(args)
}

// TestFlagsAcceptEveryListedValue: the exported lists are what the flags accept, and Check
// passes each of them.
func TestFlagsAcceptEveryListedValue(t *testing.T) {
	lists := map[string][]string{
		"format": strs(Formats), "ci": strs(CIMethods), "adjust": strs(Adjustments),
		"raters": strs(RaterModes), "cluster": strs(Clusters), "by": store.GroupKeys(),
	}
	for flag, vals := range lists {
		for _, v := range vals {
			q, err := parse(t, "--"+flag, v)
			if err != nil {
				t.Errorf("--%s %s: %v", flag, v, err)
				continue
			}
			if _, err := q.Check(); err != nil {
				t.Errorf("--%s %s: %v", flag, v, err)
			}
		}
	}
}

// TestFlagMessages: an unknown value is refused when parsed, naming the flag and listing the
// valid values, and a negative --bootstrap.
func TestFlagMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, `--format "xml": use one of table, json, md, csv, latex`},
		{[]string{"--ci", "basic"}, `--ci "basic": use one of percentile, bca`},
		{[]string{"--adjust", "bonferroni"}, `--adjust "bonferroni": use one of holm, bh, none`},
		{[]string{"--raters", ""}, `--raters "": use one of distinct, exchangeable`},
		{[]string{"--by", "colour"}, `--by "colour": use one of action_type, task_type, model, episode`},
		{[]string{"--cluster", "item"}, `--cluster "item": use one of episode, turn, model`},
	} {
		_, err := parse(t, tc.args...)
		var ve *cmdutil.ValueError
		if !errors.As(err, &ve) || ve.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.args, err, tc.want)
		}
	}
	_, err := parse(t, "--bootstrap", "-1")
	want := `--bootstrap -1: the number of replicates cannot be negative`
	if err == nil || !strings.HasSuffix(err.Error(), want) || !errors.Is(err, usage.Err) {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestCheckOptions: the checked values reach the analysis and the report.
func TestCheckOptions(t *testing.T) {
	q := validRequest()
	q.Format, q.CI, q.Adjust, q.Raters, q.Bootstrap, q.Seed, q.Matrix = "json", "bca", "holm", "exchangeable", 200, 7, "kendall_tau_b"
	st, err := q.Check()
	if err != nil {
		t.Fatal(err)
	}
	a := st.Analysis
	if a.Bootstrap != 200 || a.Seed != 7 || a.CI != agree.CIBCa || !a.Exchangeable || st.Adjust != agree.AdjustHolm {
		t.Errorf("analysis %+v, adjust %s", a, st.Adjust)
	}
	r := st.Report
	if r.Format != render.JSON || r.Bootstrap != 200 || r.CI != agree.CIBCa || r.Adjust != agree.AdjustHolm || r.Matrix != "kendall_tau_b" {
		t.Errorf("report %+v", r)
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
