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

// TestCommandChecks: each campaign command's request refuses flags that cannot work before the
// database is opened, with a usage error; good flags pass and are read.
func TestCommandChecks(t *testing.T) {
	bad := map[string]interface{ Check() error }{
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

// TestRateDefaults: rates not given keep the earlier run's (-1), except gold with --gold;
// the flags themselves say whether they were given, so parsing them is all it takes.
func TestRateDefaults(t *testing.T) {
	for _, tc := range []struct {
		args              []string
		wantGold, wantRep float64
	}{
		{nil, -1, -1},
		{[]string{"--gold", "gold.json"}, 0.05, -1},
		{[]string{"--gold", "gold.json", "--gold-rate", "0.2", "--repeat", "0.1"}, 0.2, 0.1},
		{[]string{"--gold-rate", "0", "--repeat", "0"}, 0, 0},
	} {
		c := &AssignCommand{}
		fs := pflag.NewFlagSet("assign", pflag.ContinueOnError)
		c.AddFlags(fs)
		if err := fs.Parse(append(tc.args, "--sample", "s", "--show")); err != nil {
			t.Fatal(err)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		if c.GoldRate != tc.wantGold || c.RepeatRate != tc.wantRep {
			t.Errorf("%v: gold %v repeat %v", tc.args, c.GoldRate, c.RepeatRate)
		}
		if err := c.Check(); err != nil || c.GoldRate != tc.wantGold || c.RepeatRate != tc.wantRep {
			t.Errorf("%v: a second Check (Run checks again) moved the rates: %v %v %v", tc.args, err, c.GoldRate, c.RepeatRate)
		}
	}
	// The help shows the flags as pflag's own float flags: no default printed.
	fs := pflag.NewFlagSet("assign", pflag.ContinueOnError)
	(&AssignCommand{}).AddFlags(fs)
	for _, name := range []string{"gold-rate", "repeat"} {
		if f := fs.Lookup(name); f.Value.Type() != "float" || f.DefValue != "0" {
			t.Errorf("--%s: type %s, default %q", name, f.Value.Type(), f.DefValue)
		}
	}
	if err := fs.Parse([]string{"--repeat", "x"}); err == nil {
		t.Error("--repeat x parsed")
	}
}
