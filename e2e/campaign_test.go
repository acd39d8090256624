package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnnotateCampaignQueue: after sample and assign, `annotate --annotator alice` in a real
// terminal opens alice's queue only — its first turn, its length, the campaign in the
// header — and what she labels is hers in the assignment.
func TestAnnotateCampaignQueue(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	db := filepath.Join(t.TempDir(), "campaign.db")
	m3 := cli(t, bin, db)
	m3("import", "--demo")
	m3("sample", "--name", "pilot", "--n", "12", "--by", "action_type", "--seed", "3")
	var a struct {
		Annotators []struct {
			Name      string   `json:"name"`
			SampleIDs []string `json:"sample_ids"`
			Done      int      `json:"done"`
		} `json:"annotators"`
	}
	if err := json.Unmarshal([]byte(m3("assign", "--sample", "pilot", "--annotators", "alice,bob,carol", "--overlap", "2", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	alice := a.Annotators[0].SampleIDs
	first := alice[0]
	ep, turn, _ := strings.Cut(first, "_turn_")
	term.start("c", fmt.Sprintf("%s --db %s annotate --annotator alice", bin, db))
	term.waitFor("c", "alice · campaign pilot", fmt.Sprintf("item 1 of %d", len(alice)), ep+" · turn "+turn)
	term.keys("c", "q")

	// A fourth name without an assignment still sees the whole database.
	term.start("d", fmt.Sprintf("%s --db %s annotate --annotator zoe", bin, db))
	s := term.waitFor("d", "item 1 of 35")
	if strings.Contains(s, "campaign") {
		t.Errorf("zoe's header names a campaign:\n%s", s)
	}
	term.keys("d", "q")
}

// cli returns a runner of the built binary on one database that fails the test on an error
// and returns what the command printed.
func cli(t *testing.T, bin, db string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"--db", db}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("m3eval %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
}
