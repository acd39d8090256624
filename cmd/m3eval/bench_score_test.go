package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The score benchmarks of issues #43 and #44: m3eval score with --bootstrap 0 (reading and
// building, no resampling) and with 1,000 episode-cluster replicates at 10,000 and 100,000
// turns (and 1,000,000 with $M3EVAL_BENCH_DIR set, where the database is kept), for the growth
// check; beside them, the floor of the read: the sqlite3 command line writing the same rows
// (every value of every counted label, every score) to a file.

var (
	score10k  = intervalDB{name: "score10k", turns: 10_000, annotators: 8, perTurn: 2, perTurn3: 2, digits: 4}
	score100k = intervalDB{name: "score100k", turns: 100_000, annotators: 8, perTurn: 2, perTurn3: 2, digits: 4}
)

// scoreFloorSQL reads what score reads: the values of done, current labels in queue order,
// then the judges' scores.
const scoreFloorSQL = `SELECT t.action_type, e.episode_key, t.sample_id, an.name, v.field, v.value
FROM turns t JOIN annotations a ON a.turn_id = t.id JOIN episodes e ON e.id = t.episode_id
JOIN annotators an ON an.id = a.annotator_id JOIN annotation_values v ON v.annotation_id = a.id
WHERE a.status = 'done' AND NOT a.stale ORDER BY t.episode_id, t.turn, an.name;
SELECT t.sample_id, j.name, s.field, s.value FROM judge_scores s JOIN judges j ON j.id = s.judge_id
JOIN turns t ON t.id = s.turn_id ORDER BY j.name, t.episode_id, t.turn, s.field;`

func BenchmarkScoreGrowth(b *testing.B) {
	specs := []intervalDB{score10k, score100k}
	if os.Getenv("M3EVAL_BENCH_DIR") != "" {
		specs = append(specs, millDB)
	}
	for _, spec := range specs {
		db := spec.path(b)
		out := filepath.Join(b.TempDir(), "score.json")
		b.Run(spec.name+"/sqlite3-floor", func(b *testing.B) {
			sqlite3, err := exec.LookPath("sqlite3")
			if err != nil {
				b.Skip("no sqlite3 command line (apt-get install sqlite3)")
			}
			floor := filepath.Join(b.TempDir(), "rows.txt")
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(sqlite3, "-readonly", db, ".output "+floor, scoreFloorSQL)
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("sqlite3: %v: %s", err, msg)
				}
			}
			b.StopTimer()
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/run")
		})
		for _, boot := range []string{"0", "1000"} {
			b.Run(fmt.Sprintf("%s/bootstrap=%s", spec.name, boot), func(b *testing.B) {
				timeCommand(b, "--db", db, "score", "--format", "json", "--no-cache", "--bootstrap", boot, "-o", out)
			})
		}
	}
}
