package workflow

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestCommandChecks: each campaign command refuses flags that cannot work before the
// database is opened, with a usage error; good flags pass and are read.
func TestCommandChecks(t *testing.T) {
	bad := map[string]Command{
		"sample --list --show":     &SampleCommand{Format: "table", List: true, Show: "a"},
		"sample without --by":      &SampleCommand{Format: "table"},
		"sample --where x":         &SampleCommand{Format: "table", List: true, Where: []string{"action_type"}},
		"assign without --sample":  &AssignCommand{Format: "table", Show: true},
		"assign without --overlap": &AssignCommand{Format: "table", AssignOptions: AssignOptions{Sample: "s"}, Names: "a,b"},
		"adjudicate --list --turn": &AdjudicateCommand{Format: "table", List: true, DecideOptions: DecideOptions{SampleID: "t"}},
		"adjudicate, no name":      &AdjudicateCommand{Format: "table"},
		"adjudicate --set x=":      &AdjudicateCommand{Format: "json", DecideOptions: DecideOptions{Adjudicator: "j"}, Sets: []string{"correctness="}},
	}
	for name, c := range bad {
		if err := c.Check(); !errors.Is(err, usage.Err) {
			t.Errorf("%s: %v is not a usage error", name, err)
		}
	}
	s := &SampleCommand{Format: "json", Where: []string{"model=a", "model=b", "meta.x="}}
	s.Params.By = []string{"model"}
	if err := s.Check(); err != nil || !reflect.DeepEqual(s.Params.Where, map[string][]string{"model": {"a", "b"}, "meta.x": {""}}) {
		t.Errorf("sample: %v %v", err, s.Params.Where)
	}
	if s.StoreOptions().ReadOnly {
		t.Error("drawing a sample opens the database read-only")
	}
	a := NewAdjudicateCommand()
	a.Format, a.Adjudicator, a.SampleID, a.Sets = "table", "judy", "t1", []string{"correctness=2", "correctness=3"}
	if err := a.Check(); err != nil || a.Set["correctness"] != "3" || a.Screen() || a.StoreOptions() != (store.Options{Durable: true}) {
		t.Errorf("adjudicate: %v %v", err, a.Set)
	}
	if q := NewQCCommand(); q.StraightRun != 10 {
		t.Errorf("qc defaults %+v", q.QCOptions)
	}
	// A --format the command does not write is refused when parsed, naming the valid ones.
	for _, tc := range []struct {
		c    interface{ AddFlags(*pflag.FlagSet) }
		bad  string
		want string
	}{
		{&SampleCommand{}, "md", `--format "md": use one of table, json`},
		{&AssignCommand{}, "md", `--format "md": use one of table, json`},
		{NewQCCommand(), "csv", `--format "csv": use one of table, json, md`},
		{NewAdjudicateCommand(), "md", `--format "md": use one of table, json`},
	} {
		fs := pflag.NewFlagSet("c", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		tc.c.AddFlags(fs)
		var ve *cmdutil.ValueError
		if err := fs.Parse([]string{"--format", tc.bad}); !errors.As(err, &ve) || ve.Error() != tc.want {
			t.Errorf("%T: %v, want %s", tc.c, err, tc.want)
		}
	}
}

// TestRateDefaults: rates not given keep the earlier run's (-1), except gold with --gold.
func TestRateDefaults(t *testing.T) {
	for _, tc := range []struct {
		gold                string
		goldGiven, repGiven bool
		wantGold, wantRep   float64
	}{
		{"", false, false, -1, -1},
		{"gold.json", false, false, 0.05, -1},
		{"gold.json", true, true, 0.2, 0.1},
	} {
		c := &AssignCommand{AssignOptions: AssignOptions{GoldFile: tc.gold, GoldRate: 0.2, RepeatRate: 0.1}}
		c.RateDefaults(tc.goldGiven, tc.repGiven)
		if c.GoldRate != tc.wantGold || c.RepeatRate != tc.wantRep {
			t.Errorf("%+v: gold %v repeat %v", tc, c.GoldRate, c.RepeatRate)
		}
	}
}
