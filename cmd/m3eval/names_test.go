package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newNameFlags are the flags completed from the database that name something new (or
// that may): they are outside the unknown-name rule.
var newNameFlags = map[string]bool{
	"import --annotator":    true, // the labels' annotator, created by the import
	"annotate --annotator":  true, // a new annotator starts labeling
	"import-scores --judge": true, // a new judge's scores
	"judge --name":          true, // the rule judge's name in the database
}

// nameFlagsOf walks the command tree under root for the flags names() declared: those
// whose name must exist (checked) and those that name something new (fresh).
func nameFlagsOf(root *cobra.Command) (checked, fresh []nameFlag) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if nf, isNew, ok := nameFlagOf(commandPath(c), f); ok && isNew {
				fresh = append(fresh, nf)
			} else if ok {
				checked = append(checked, nf)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return checked, fresh
}

// TestEveryNameFlagFollowsTheRule: every flag completed from the database is either checked
// (the unknown-name rule) or one of the flags known to name something new: a flag declared
// later as new cannot slip by; and the rule covers at least the flags it did.
func TestEveryNameFlagFollowsTheRule(t *testing.T) {
	checked, fresh := nameFlagsOf(newRootCmd())
	for _, nf := range fresh {
		if key := nf.command + " --" + nf.flag; !newNameFlags[key] {
			t.Errorf("%s names %s from the database but is neither checked nor a known new name", key, nf.kind)
		}
	}
	if len(fresh) != len(newNameFlags) {
		t.Errorf("new names %v, want %v", fresh, newNameFlags)
	}
	if len(checked) < 19 {
		t.Errorf("only %d flags checked: %v", len(checked), checked)
	}
}

// TestUnknownNamesOneRule runs every command that takes a name with one the database does
// not hold, as a process: exit status 1 and one wording, "--FLAG VALUE: no such KIND in DB
// (KINDs: …)", before anything runs (issue #29 item 6). Known names still work.
func TestUnknownNamesOneRule(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	tour, err := filepath.Abs("../../annotations/tour")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"import", "--demo"},
		{"import", "--annotator", "bob", filepath.Join(tour, "bob.json")},
		{"import", "--annotator", "carol", filepath.Join(tour, "carol.json")},
		{"import-scores", "--judge", "gpt", filepath.Join(tour, "gpt.csv")},
		{"sample", "--name", "pilot", "--n", "12", "--by", "action_type", "--seed", "42"},
		{"assign", "--sample", "pilot", "--annotators", "bob,carol", "--overlap", "2"},
	} {
		if r := runBin(t, dir, nil, append([]string{"--db", db}, args...)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	// The rest of each command line, so that only the name is wrong.
	rest := map[string][]string{
		"annotate --campaign":   {"--annotator", "bob"},
		"annotate --start":      {"--annotator", "bob"},
		"export --campaign":     {"--final"},
		"report --judge":        {"-o", filepath.Join(dir, "r.html")},
		"report --campaign":     {"-o", filepath.Join(dir, "r.html")},
		"assign --sample":       {"--annotators", "bob,carol", "--overlap", "2"},
		"adjudicate --campaign": {"--list"},
		"adjudicate --take":     {"--adjudicator", "judy", "--turn", "demo_zh_umbrella_0_turn_5"},
		"adjudicate --turn":     {"--adjudicator", "judy", "--take", "bob"},
		"estimate --annotator":  {"--judge", "gpt"},
		"estimate --sample":     {"--judge", "gpt"},
		"sample --judge":        {"--active", "--n", "5", "--name", "act"},
	}
	kinds := map[string]string{}
	nameFlags, _ := nameFlagsOf(newRootCmd())
	for _, nf := range nameFlags {
		key := nf.command + " --" + nf.flag
		kinds[key] = nf.kind
		t.Run(strings.ReplaceAll(key, " ", "_"), func(t *testing.T) {
			args := append(append([]string{"--db", db}, strings.Fields(nf.command)...), "--"+nf.flag, "nosuch")
			args = append(args, rest[key]...)
			r := runBin(t, dir, nil, args...)
			want := fmt.Sprintf("m3eval: --%s nosuch: no such %s in %s (%ss: ", nf.flag, nf.kind, db, nf.kind)
			if r.code != 1 || !strings.HasPrefix(r.stderr, want) || strings.Contains(r.stderr, "--help") {
				t.Errorf("%v: exit %d, stderr\n%s\nwant exit 1 and %q…", args[2:], r.code, r.stderr, want)
			}
			if r.stdout != "" {
				t.Errorf("%v: printed %q before refusing", args[2:], r.stdout)
			}
		})
	}
	// What the lists hold.
	r := runBin(t, dir, nil, "--db", db, "score", "--judge", "gpt4")
	if want := "(judges: gpt)"; !strings.Contains(r.stderr, want) {
		t.Errorf("score --judge gpt4: %q, want %q", r.stderr, want)
	}
	r = runBin(t, dir, nil, "--db", db, "judge", "--explain", "x")
	if want := "(sample_ids: demo_en_apples_1_turn_1, demo_en_apples_1_turn_2, demo_en_apples_1_turn_3, …)"; !strings.Contains(r.stderr, want) {
		t.Errorf("judge --explain x: %q, want %q", r.stderr, want)
	}
	// Names the database holds pass the check.
	for _, args := range [][]string{
		{"score", "--judge", "gpt", "--annotator", "bob", "--annotator", "carol"},
		{"qc", "--campaign", "pilot"},
		{"adjudicate", "--list", "--campaign", "pilot"},
		{"sample", "--show", "pilot"},
		{"judge", "--explain", "demo_zh_umbrella_0_turn_5"},
		{"export", "--annotator", "carol", "-o", filepath.Join(dir, "carol.json")},
	} {
		if r := runBin(t, dir, nil, append([]string{"--db", db}, args...)...); r.code != 0 {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	// No database yet: the command says so in its own words, not the name rule's.
	empty := t.TempDir()
	r = runBin(t, empty, nil, "--db", filepath.Join(empty, "none.db"), "qc", "--campaign", "x")
	if r.code != 1 || strings.Contains(r.stderr, "no such sample") {
		t.Errorf("qc on no database: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, "none.db")); err == nil {
		t.Error("the check created the database")
	}
}

// TestUsageWords: the usage errors of issue #29 items 5 and 6 say what to do in words, exit
// 2, and show no library internals.
func TestUsageWords(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"agree"}, "m3eval: missing RATINGS.csv: m3eval agree RATINGS.csv\n"},
		{[]string{"agree", "a.csv", "b.csv"}, `m3eval: m3eval agree takes RATINGS.csv, got 2 arguments: "a.csv" "b.csv"`},
		{[]string{"illusion", "score"}, "m3eval: missing LOG|NAME=LOG: m3eval illusion score [--testset NAME=FILE ...] LOG|NAME=LOG ...\n"},
		{[]string{"import-scores", "--judge", "x"}, "m3eval: missing FILE: m3eval import-scores --judge NAME FILE...\n"},
		{[]string{"status", "extra"}, `m3eval: m3eval status takes no arguments, got "extra"`},
		{[]string{"completion", "tcsh"}, "m3eval: unknown command \"tcsh\" for \"m3eval completion\"\nRun 'm3eval completion --help' for usage.\n"},
		{[]string{"report", "--by", "color"}, `m3eval: --by "color": use one of action_type, task_type, model, episode (or "" for none)`},
	}
	for _, tc := range cases {
		r := runBin(t, dir, nil, tc.args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s\nwant exit 2 and %q…", tc.args, r.code, r.stderr, tc.want)
		}
		for _, internal := range []string{"arg(s)", `""`, "EOF"} {
			if strings.Contains(r.stderr, internal) && !strings.Contains(tc.want, internal) {
				t.Errorf("%v: %q shows %q", tc.args, r.stderr, internal)
			}
		}
		if tc.args[0] == "completion" && r.stdout != "" {
			t.Errorf("completion tcsh printed %d bytes of help on standard output", len(r.stdout))
		}
	}
}

// TestEveryCommandChecksRubric: a --rubric that is missing or not a rubric fails every
// command, also those that do not use it (status accepted any file; issue #29 item 7).
func TestEveryCommandChecksRubric(t *testing.T) {
	dir := t.TempDir()
	if r := runBin(t, dir, nil, "--db", "t.db", "import", "--demo"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o644)
	// The check is the root's, before any command runs: commands that read the rubric and
	// commands that do not (status, sample --list, agree) alike.
	for _, args := range [][]string{{"status"}, {"score"}, {"export"}, {"qc"}, {"judge"}, {"sample", "--list"}, {"agree", "x.csv"}} {
		for _, bad := range []struct{ file, says string }{{"nosuch.json", "rubric nosuch.json: no such file"}, {"empty.json", "empty.json: rubric: the file is empty"}} {
			r := runBin(t, dir, nil, append([]string{"--db", "t.db", "--rubric", bad.file}, args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, bad.says) {
				t.Errorf("%v --rubric %s: exit %d %q", args, bad.file, r.code, r.stderr)
			}
		}
	}
	// The built-in rubric's file, and the same from standard input, are accepted.
	rub, _ := filepath.Abs("../../annotations/rubric.json")
	if r := runBin(t, dir, nil, "--db", "t.db", "--rubric", rub, "status"); r.code != 0 {
		t.Errorf("status --rubric rubric.json: %d %s", r.code, r.stderr)
	}
	data, _ := os.ReadFile(rub)
	if r := runBin(t, dir, data, "--db", "t.db", "--rubric", "-", "score"); r.code != 0 || !strings.HasPrefix(r.stdout, "no annotations yet") {
		t.Errorf("score --rubric -: %d %s %s", r.code, r.stdout, r.stderr)
	}
}
