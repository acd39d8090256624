package scoring_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/ppi"
)

// TestFewClustersNoInterval (issue #41): score --bootstrap gives no interval (and no SE) from
// fewer than 5 resampled episodes, with the reason, in JSON, in the table and in the report; the table's
// field heading says how many episodes were resampled; from 5 or more the intervals stay;
// and --matrix with --bootstrap shows the intervals. The rule is estimate's: the two minima
// are one number.
func TestFewClustersNoInterval(t *testing.T) {
	if agree.MinClusters != ppi.MinEpisodes {
		t.Fatalf("score's minimum (%d) and estimate's (%d) differ", agree.MinClusters, ppi.MinEpisodes)
	}
	db := scoreDB(t)
	doc := scoreJSON(t, db, "--by", "action_type", "--bootstrap", "200", "--seed", "7")
	refused, kept := 0, 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if units, ok := v["n_units"].(float64); ok {
				_, hasCI := v["ci95_percentile"]
				ci, _ := v["ci95_percentile"].([]any)
				reasons, _ := v["undefined_reason"].(map[string]any)
				why, _ := reasons["ci95_percentile"].(string)
				switch {
				case !hasCI:
				case units < 5:
					if ci != nil || v["se"] != nil || why == "" {
						t.Errorf("interval from %v episodes: ci %v se %v (%q), want none with the reason", units, ci, v["se"], why)
					}
					if strings.HasPrefix(why, "resampled only") {
						refused++
					}
				case ci != nil:
					kept++
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if refused == 0 || kept == 0 {
		t.Fatalf("%d intervals refused and %d kept: the fixture should have groups of both kinds", refused, kept)
	}
	table := mustScore(t, db, "--by", "action_type", "--bootstrap", "200", "--seed", "7")
	for _, want := range []string{"4 episodes resampled", "[no interval]", "resampled only 4 episodes (an interval needs 5 or more)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// The report's tables say it in their "undefined because" column.
	if rep := reportOut(t, db, "--bootstrap", "200", "--seed", "7", "--format", "json"); !strings.Contains(rep, "no interval: resampled only 4 episodes") {
		t.Errorf("the report does not say why a group has no interval")
	}
	matrix := mustScore(t, db, "--matrix", "pearson", "--bootstrap", "200", "--seed", "7")
	if !strings.Contains(matrix, " [") || !strings.Contains(matrix, "bootstrap interval") {
		t.Errorf("--matrix with --bootstrap shows no interval:\n%s", matrix)
	}
	// ... and, as the table's headings, how many episodes they rest on.
	if !regexp.MustCompile(`Resampled: \d+ episodes\.`).MatchString(matrix) {
		t.Errorf("--matrix with --bootstrap does not say how many episodes it resampled:\n%s", matrix)
	}
}
