package scoring

import (
	"errors"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/usage"
)

func validRequest() Request {
	return Request{StatFlags: StatFlags{Format: "table", CI: "percentile", Adjust: "none", Raters: "distinct"}, Cluster: "episode"}
}

// TestCheckAcceptsEveryListedValue: the exported lists are what Check accepts, so a flag
// registry that completes them offers nothing Check refuses.
func TestCheckAcceptsEveryListedValue(t *testing.T) {
	set := map[string]func(*Request, string){
		"format":  func(q *Request, v string) { q.Format = v },
		"ci":      func(q *Request, v string) { q.CI = v },
		"adjust":  func(q *Request, v string) { q.Adjust = v },
		"raters":  func(q *Request, v string) { q.Raters = v },
		"cluster": func(q *Request, v string) { q.Cluster = v },
	}
	lists := map[string][]string{
		"format": strs(Formats), "ci": strs(CIMethods), "adjust": strs(Adjustments),
		"raters": strs(RaterModes), "cluster": strs(Clusters),
	}
	for flag, vals := range lists {
		for _, v := range vals {
			q := validRequest()
			set[flag](&q, v)
			if _, err := q.Check(); err != nil {
				t.Errorf("--%s %s: %v", flag, v, err)
			}
		}
	}
}

// TestCheckMessages: an unknown value is refused with the message the commands have always
// given, listing the valid values.
func TestCheckMessages(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Request)
		want string
	}{
		{func(q *Request) { q.Format = "xml" }, `--format "xml": use table, json, md, csv or latex`},
		{func(q *Request) { q.Bootstrap = -1 }, `--bootstrap -1: the number of replicates cannot be negative`},
		{func(q *Request) { q.CI = "basic" }, `--ci "basic": use percentile or bca`},
		{func(q *Request) { q.Adjust = "bonferroni" }, `--adjust "bonferroni": use holm, bh or none`},
		{func(q *Request) { q.Raters = "" }, `--raters "": use distinct or exchangeable`},
		{func(q *Request) { q.By = "colour" }, `--by "colour": use one of action_type, task_type, model, episode`},
		{func(q *Request) { q.Cluster = "item" }, `--cluster "item": use episode, turn or model`},
	} {
		q := validRequest()
		tc.set(&q)
		_, err := q.Check()
		if err == nil || err.Error() != tc.want || !errors.Is(err, usage.Err) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
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

func TestOrList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := orList(tc.in); got != tc.want {
			t.Errorf("orList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
