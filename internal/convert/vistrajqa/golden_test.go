package vistrajqa

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/convert/domainav2"
	"github.com/m3bench/m3eval/internal/golden"
)

// goldenInputs are hand-made trajectories that between them exercise every mapping rule:
// vab-0001 has 30 steps with probes after 6/12/18/24 (S00..S04), an empty caption at step 9,
// a null feedback, a missing thought, updates with original_memories, evidence on images and
// all nine QA types; vab-0002 has no probes (one session, memory points all in S00); the
// Arena file has empty observations, a probe at the last step, a null post_trajectory_qa and
// a trajectory with neither QA nor memory points (its stage4 and QA lines are still written),
// and a blank line.
var goldenInputs = []string{"testdata/in/sessions-vab.jsonl", "testdata/in/sessions-arena.jsonl"}

var goldenFiles = []string{domainav2.MainFile, domainav2.MemoryFile, domainav2.QAFile, domainav2.ManifestFile}

func TestGolden(t *testing.T) {
	for _, mode := range []struct {
		name       string
		multimodal bool
	}{{"text-only", false}, {"multimodal", true}} {
		t.Run(mode.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res, err := ConvertFiles(context.Background(), Request{Inputs: goldenInputs, Output: out, Options: Options{Multimodal: mode.multimodal}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Converted != 4 || len(res.Skipped) != 0 {
				t.Fatalf("converted %d, skipped %v; want 4 and none", res.Converted, res.Skipped)
			}
			var report bytes.Buffer
			if err := res.Report.WriteText(&report); err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{"report.txt": bytes.ReplaceAll(report.Bytes(), []byte(out), []byte("OUT"))}
			for _, name := range goldenFiles {
				b, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				got[name] = b
			}
			for name, b := range got {
				golden.Assert(t, filepath.Join("testdata", "golden", mode.name, name), b)
			}
		})
	}
}
