package scoring_test

import (
	"encoding/json"
	"fmt"

	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/testkit"
)

// intervalsFixture holds the output of m3eval score, agree and report with bootstrap
// intervals as the engine before issue #30 computed them (testdata/intervals/README.md says
// how they were made): the faster engine must give the same intervals, bit for bit.
const intervalsFixture = "testdata/intervals"

// TestIntervalsUnchanged (moved from cmd/m3eval/intervals_golden_test.go) runs the engines of
// the commands of testdata/intervals/README.md and compares every
// bootstrap interval, standard error, undefined count and bootstrap test with the stored
// output of the engine before the rewrite: the same seed gives the same intervals.
// Only the interval parts are compared, so that a change elsewhere in the reports (tests,
// p-value adjustment, new sections) does not fail this test.
func TestIntervalsUnchanged(t *testing.T) {
	// The engine's intervals, before issue #41's rule hides those from fewer than 5 clusters
	// (TestFewClustersNoInterval checks the rule).
	saved := agree.MinClusters
	agree.MinClusters = 0
	t.Cleanup(func() { agree.MinClusters = saved })
	dir := t.TempDir()
	db := filepath.Join(dir, "g.db") // the fixture's database was named g.db
	fx := func(name string) string { return filepath.Join(scoreFixture, name) }
	iv := func(name string) string { return filepath.Join(intervalsFixture, name) }
	importScoreFixture(t, db)
	cases := []struct {
		golden string
		run    func(t *testing.T) any
	}{
		{"score_by.json", func(t *testing.T) any {
			return scoreJSON(t, db, "--by", "action_type", "--bootstrap", "300", "--seed", "7")
		}},
		{"score_bca.json", func(t *testing.T) any {
			return scoreJSON(t, db, "--cluster", "turn", "--ci", "bca", "--bootstrap", "200", "--seed", "3")
		}},
		{"score_exch.json", func(t *testing.T) any {
			return scoreJSON(t, db, "--raters", "exchangeable", "--bootstrap", "200", "--seed", "4")
		}},
		{"agree_levels.json", func(t *testing.T) any {
			return agreeJSON(t, fx("ratings.csv"), "--auto", fx("auto_gpt.csv"), "--schema", fx("schema.json"),
				"--levels", iv("levels.csv"), "--cluster", "system", "--bootstrap", "200", "--seed", "5")
		}},
		{"agree_bca.json", func(t *testing.T) any {
			return agreeJSON(t, fx("ratings.csv"), "--auto", fx("auto_gpt.csv"), "--schema", fx("schema.json"),
				"--clusters", iv("clusters.csv"), "--ci", "bca", "--bootstrap", "200", "--seed", "6")
		}},
		{"report.json", func(t *testing.T) any { return reportJSON(t, db, "--bootstrap", "200", "--seed", "8") }},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.golden, ".json"), func(t *testing.T) {
			var want any
			got := c.run(t)
			testkit.ReadJSON(t, iv(c.golden), &want)
			wantParts, gotParts := map[string]any{}, map[string]any{}
			intervalParts("", want, wantParts)
			intervalParts("", got, gotParts)
			if len(wantParts) < 3 {
				t.Fatalf("%s: only %d interval parts in the fixture", c.golden, len(wantParts))
			}
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range wantParts {
					if !yield(k) {
						return
					}
				}
			})
			bad := 0
			for _, k := range keys {
				g, ok := gotParts[k]
				if !ok {
					t.Errorf("%s: %s is missing", c.golden, k)
				} else if !reflect.DeepEqual(g, wantParts[k]) {
					t.Errorf("%s: %s = %v, before %v", c.golden, k, g, wantParts[k])
				} else {
					continue
				}
				if bad++; bad > 20 {
					t.Fatal("too many differences")
				}
			}
		})
	}
}

// intervalParts collects the parts of a JSON report that come from the bootstrap: every
// object under a "bootstrap" key (intervals, standard errors, undefined counts), every test
// whose method is "bootstrap", and the interval columns of the report's tables.
func intervalParts(path string, v any, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if m, _ := v["method"].(string); m == "bootstrap" {
			// The bootstrap's own numbers; p_adjusted and its reason follow the one
			// p_adjusted rule of issue #32, not the resampling.
			out[path] = map[string]any{"p": v["p"], "statistic": v["statistic"]}
			return
		}
		if id, _ := v["id"].(string); id == "metrics" {
			// The action-space metrics changed by definition (issue #26: graded bands,
			// new metrics) and with the rule judge (issue #27); their intervals are
			// pinned by internal/judge's hand-computed tests instead.
			return
		}
		if cols, ok := v["columns"].([]any); ok {
			if rows, ok := v["rows"].([]any); ok {
				tableIntervals(path, cols, rows, out)
			}
		}
		for k, x := range v {
			if k == "bootstrap" {
				if bm, isObj := x.(map[string]any); isObj {
					// Statistic by statistic: one added since (the pairs' Pearson r,
					// issue #39) leaves the others' intervals to compare as before.
					for stat, iv := range bm {
						out[path+"."+k+"."+stat] = iv
					}
					continue
				}
			}
			intervalParts(path+"."+k, x, out)
		}
	case []any:
		for i, x := range v {
			// Report sections are named by id, so that a new section (issue #32's model
			// scores) does not shift the others.
			if m, ok := x.(map[string]any); ok {
				if id, ok := m["id"].(string); ok {
					intervalParts(fmt.Sprintf("%s[%s]", path, id), x, out)
					continue
				}
			}
			intervalParts(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	}
}

// tableIntervals adds the cells of the columns named "ci95 …" (with the row's first cells,
// which name it).
func tableIntervals(path string, cols, rows []any, out map[string]any) {
	for ci, c := range cols {
		name, _ := c.(string)
		if !strings.HasPrefix(name, "ci95") {
			continue
		}
		for ri, r := range rows {
			row, _ := r.([]any)
			if ci < len(row) {
				out[fmt.Sprintf("%s.rows[%d](%v).%s", path, ri, row[:min(3, len(row))], name)] = row[ci]
			}
		}
	}
}

// reportJSON parses args as m3eval report's flags and returns the report's JSON, built by
// internal/report on the database.
func reportJSON(t *testing.T, db string, args ...string) any {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(reportOut(t, db, append(args, "--format", "json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// reportOut is m3eval report with args on the database, through its Request's Run: what it
// writes.
func reportOut(t *testing.T, db string, args ...string) string {
	t.Helper()
	out, _, err := testkit.RunCommand(t, &report.Request{}, db, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
