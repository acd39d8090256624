package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsFlags: score --metrics prints "—" for an interval undefined with one episode
// (and says why in JSON), honours --bootstrap 0, refuses --judge as a usage error, and says
// "no turns" in one line on an empty database.
func TestMetricsFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	mustRun(t, "--db", db, "import", "--demo")

	out := mustRun(t, "--db", db, "score", "--metrics")
	if !strings.Contains(out, "bootstrap resampling episodes, 2000 replicates") || strings.Contains(out, "[0.000, 0.000]") {
		t.Errorf("default:\n%s", out)
	}
	var rep struct {
		Bootstrap int `json:"bootstrap_replicates"`
		Metrics   []struct {
			N          int      `json:"n"`
			Lo         *float64 `json:"ci_low"`
			Interval   string   `json:"interval"`
			NoInterval string   `json:"no_interval"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "--db", db, "score", "--metrics", "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	undefined := 0
	for _, m := range rep.Metrics {
		if m.Interval == "bootstrap" && m.N == 1 {
			if m.Lo != nil || !strings.Contains(m.NoInterval, "one episode") {
				t.Errorf("n=1 bootstrap row: %+v", m)
			}
			undefined++
		}
	}
	if undefined == 0 {
		t.Fatalf("the demo has no bootstrap metric over one turn: %+v", rep.Metrics)
	}

	out = mustRun(t, "--db", db, "score", "--metrics", "--bootstrap", "0")
	if !strings.Contains(out, "scores: no interval (--bootstrap 0)") || strings.Contains(out, "2000") {
		t.Errorf("--bootstrap 0:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), "bootstrap") && strings.Contains(line, "[") {
			t.Errorf("--bootstrap 0 yet an interval: %s", line)
		}
	}

	mustRun(t, "--db", db, "judge")
	if out, err := run(t, "--db", db, "score", "--metrics", "--judge", "rules"); exitCodeOf(err) != 2 || err == nil || !strings.Contains(err.Error(), "drop --judge") {
		t.Errorf("--metrics --judge: exit %d, %v\n%s", exitCodeOf(err), err, out)
	}

	empty := filepath.Join(dir, "e.db")
	run(t, "--db", empty, "import", "/dev/null")
	if out := mustRun(t, "--db", empty, "score", "--metrics"); out != "no turns yet: nothing to measure (import turns with m3eval import)\n" {
		t.Errorf("empty database: %q", out)
	}
}
