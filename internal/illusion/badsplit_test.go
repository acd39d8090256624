package illusion_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIllusionSampleBadSplitWritesNothing: a split that cannot be read (a broken JSON line, a
// missing file) stops illusion sample before anything is written: no --out directory, and no
// test set of an earlier, good split without its summary.json. It used to create --out and
// write the good splits' files before reading the bad one.
func TestIllusionSampleBadSplitWritesNothing(t *testing.T) {
	dir := t.TempDir()
	var good strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&good, "{\"image_name\": %q}\n", e2eName(i))
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	icon := write("icon.jsonl", good.String())
	bad := write("bad.jsonl", good.String()[:len(good.String())/2]+"{\"image_name\":\n")
	for name, split := range map[string]string{"broken line": bad, "missing file": filepath.Join(dir, "none.jsonl")} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(name, " ", "-"))
		_, _, err := illusionRun(t, "illusion", "sample", "--split", "Illusion_ICON="+icon, "--split", "Illusion_LOGO="+split, "--n", "20", "--out", out)
		if err == nil || !strings.Contains(err.Error(), "Illusion_LOGO") {
			t.Errorf("%s: error %v, want one naming the split Illusion_LOGO", name, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			entries, _ := os.ReadDir(out)
			t.Errorf("%s: --out %s exists after the failure (%v), holding %d files", name, out, err, len(entries))
		}
	}
}
