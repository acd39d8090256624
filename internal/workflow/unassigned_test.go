package workflow_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// TestUnassignedCampaign: --campaign NAME of a sample that is drawn but not assigned yet is
// not a campaign with no labels. qc said "no submitted labels yet", adjudicate --list "no
// disagreements to adjudicate", adjudicate --turn that the turn had no labels, export
// --final an empty list beside labels that disagree, and annotate that the queue was
// empty; each now says the campaign is not assigned, and how to assign it. Found by
// following docs/campaign.md with the tour's labels.
func TestUnassignedCampaign(t *testing.T) {
	db := filepath.Join(t.TempDir(), "u.db")
	importFiles(t, db, "")
	importFiles(t, db, "bob", "../../annotations/tour/bob.json")
	importFiles(t, db, "carol", "../../annotations/tour/carol.json")
	mustCommand(t, db, &workflow.SampleCommand{}, "--name", "pilot", "--n", "20", "--by", "action_type", "--min-per-stratum", "1")
	// The same labels without --campaign: both annotators, and turns that disagree.
	if out := mustCommand(t, db, workflow.NewQCCommand()); !strings.Contains(out, "carol") {
		t.Fatalf("qc of every label lacks carol:\n%s", out)
	}
	if out := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list"); !strings.Contains(out, "disagree") {
		t.Fatalf("adjudicate --list finds no disagreement:\n%s", out)
	}
	for name, run := range map[string]func() (string, error){
		"qc": func() (string, error) { return runCommand(t, db, workflow.NewQCCommand(), "--campaign", "pilot") },
		"adjudicate list": func() (string, error) {
			return runCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--campaign", "pilot")
		},
		"adjudicate decide": func() (string, error) {
			return runCommand(t, db, workflow.NewAdjudicateCommand(), "--adjudicator", "judy", "--campaign", "pilot", "--turn", "demo_zh_umbrella_0_turn_1", "--take", "bob")
		},
		"export final": func() (string, error) {
			out, errw, err := export(t, db, finalOf("pilot"))
			return out + errw, err
		},
	} {
		out, err := run()
		if err == nil || !strings.Contains(err.Error(), "pilot is not assigned yet") || !strings.Contains(err.Error(), "m3eval assign --sample pilot") {
			t.Errorf("%s --campaign pilot (not assigned): error %v, want one saying it is not assigned and how to assign it; wrote:\n%s", name, err, out)
		}
	}
	// annotate --campaign pilot (and a serve session) open the queue the same way.
	st, _ := testkit.OpenDB(t, db, store.Options{})
	_, err := workflow.AnnotatorQueue(context.Background(), st, "bob", "pilot", store.Filter{}, "")
	st.Close()
	if err == nil || !strings.Contains(err.Error(), "pilot is not assigned yet") {
		t.Errorf("annotate --campaign pilot (not assigned): error %v, want one saying it is not assigned", err)
	}
	// Once assigned, the same commands read the campaign.
	mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "bob,carol", "--overlap", "2")
	if out := mustCommand(t, db, workflow.NewQCCommand(), "--campaign", "pilot"); !strings.Contains(out, "carol") {
		t.Errorf("qc --campaign pilot (assigned) lacks carol:\n%s", out)
	}
	mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--campaign", "pilot")
	if _, _, err := export(t, db, finalOf("pilot")); err != nil {
		t.Errorf("export --final --campaign pilot (assigned): %v", err)
	}
}

// finalOf is m3eval export --final --campaign name.
func finalOf(name string) *workflow.ExportCommand {
	o := workflow.NewExportCommand()
	o.Final, o.Campaign = true, name
	o.Format.Format = "json"
	return o
}
