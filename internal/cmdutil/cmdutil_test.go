package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func tree() (*cobra.Command, *[]string, *string) {
	root := &cobra.Command{Use: "m", SilenceErrors: true, SilenceUsage: true}
	sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return nil }}
	leaf := &cobra.Command{Use: "leaf", RunE: func(*cobra.Command, []string) error { return nil }}
	var list []string
	var one string
	leaf.Flags().StringArrayVar(&list, "list", nil, "")
	leaf.Flags().StringVar(&one, "one", "b", "")
	sub.AddCommand(leaf)
	root.AddCommand(sub)
	return root, &list, &one
}

// kind is a named string type, as the engines' formats are.
type kind string

// enumTree is a tree whose leaf has the enumerated flags --one (a, or "" for none) and
// --typed (x, y; default "": not given).
func enumTree() (root *cobra.Command, one *string, typed *kind) {
	root, _, _ = tree()
	leaf := findCommand(root, "sub leaf")
	one, typed = new(string), new(kind)
	EnumVar(leaf.Flags(), one, "enum", "a", []string{"a", ""}, "one of them")
	EnumVar(leaf.Flags(), typed, "typed", "", []kind{"x", "y"}, "a typed one")
	root.SetFlagErrorFunc(FlagErrors(func(err error) error { return err }))
	CompleteFlags(root)
	return root, one, typed
}

// TestEnumVar: an enumerated flag takes its values and its default, refuses any other at
// parse time with a ValueError naming the flag and the values, shows them in the help, and
// completes them.
func TestEnumVar(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		bad   string // the ValueError's text; "" passes
		one   string
		typed kind
	}{
		{[]string{"sub", "leaf"}, "", "a", ""}, // the defaults
		{[]string{"sub", "leaf", "--enum", "", "--typed", "y"}, "", "", "y"},
		{[]string{"sub", "leaf", "--typed", ""}, "", "a", ""}, // the default, though not listed
		{[]string{"sub", "leaf", "--typed", "z"}, `--typed "z": use one of x, y`, "", ""},
		{[]string{"sub", "leaf", "--enum", "c"}, `--enum "c": use one of a (or "" for none)`, "", ""},
	} {
		root, one, typed := enumTree()
		root.SetArgs(tc.args)
		err := root.Execute()
		var ve *ValueError
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.bad != "" && (!errors.As(err, &ve) || err.Error() != tc.bad):
			t.Errorf("%q: %v, want %s", tc.args, err, tc.bad)
		case tc.bad == "" && (*one != tc.one || *typed != tc.typed):
			t.Errorf("%q: took %q %q", tc.args, *one, *typed)
		}
	}
	root, _, _ := enumTree()
	var help strings.Builder
	root.SetOut(&help)
	root.SetArgs([]string{"sub", "leaf", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`--enum a|""`, "one of them (default a)", "--typed x|y", "a typed one\n"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
	for flag, want := range map[string]string{"enum": "a\n:4\n", "typed": "x\ny\n:4\n"} {
		root, _, _ := enumTree()
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(io.Discard)
		root.SetArgs([]string{cobra.ShellCompRequestCmd, "sub", "leaf", "--" + flag, ""})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("--%s completes %q, want %q", flag, out.String(), want)
		}
	}
}

// TestEnumMistakesPanic: a declaration without values, or whose default is not one of them,
// is a mistake in the code; so are Suggest for a flag that does not exist and Check of a list.
func TestEnumMistakesPanic(t *testing.T) {
	for _, tc := range []struct {
		def    string
		values []string
	}{{"a", nil}, {"c", []string{"a", "b"}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v did not panic", tc)
				}
			}()
			var v string
			EnumVar(pflag.NewFlagSet("x", pflag.ContinueOnError), &v, "v", tc.def, tc.values, "")
		}()
	}
	for what, mistake := range map[string]func(){
		"Suggest for no such flag": func() { Suggest(pflag.NewFlagSet("x", pflag.ContinueOnError), "nope", "a") },
		"Check of a list flag": func() {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			fs.StringArray("l", nil, "")
			Check(fs, "l", func() error { return nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", what)
				}
			}()
			mistake()
		}()
	}
}

// TestCheck: a flag's own rule refuses a value when it is parsed, in the rule's words only
// (no pflag wrapping), and leaves the flag's help and default as they were.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  string
	}{
		{[]string{"sub", "leaf", "--n", "3"}, ""},
		{[]string{"sub", "leaf", "--n", "-1"}, "--n -1: not negative"},
	} {
		root, _, _ := tree()
		leaf := findCommand(root, "sub leaf")
		var n int
		leaf.Flags().IntVar(&n, "n", 5, "count")
		Check(leaf.Flags(), "n", func() error {
			if n < 0 {
				return fmt.Errorf("--n %d: not negative", n)
			}
			return nil
		})
		root.SetFlagErrorFunc(FlagErrors(func(err error) error { return err }))
		var help strings.Builder
		root.SetOut(&help)
		root.SetArgs(tc.args)
		err := root.Execute()
		if (err == nil) != (tc.bad == "") || (err != nil && err.Error() != tc.bad) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.bad)
		}
		if tc.bad == "" && n != 3 {
			t.Errorf("took %d", n)
		}
		root.SetArgs([]string{"sub", "leaf", "--help"})
		if err := root.Execute(); err != nil || !strings.Contains(help.String(), "--n int ") || !strings.Contains(help.String(), "count (default 5)") {
			t.Errorf("help %v:\n%s", err, help.String())
		}
	}
}

// TestSuggestAndKeys: the shell completes a suggested flag's values and a KEY=VALUE flag's
// "KEY=" (no space after), from the flag's declaration; another value is accepted.
func TestSuggestAndKeys(t *testing.T) {
	for _, tc := range []struct {
		annotate func(*pflag.FlagSet)
		want     string
	}{
		{func(fs *pflag.FlagSet) { Suggest(fs, "list", "p", "q") }, "p\nq\n:4\n"},
		{func(fs *pflag.FlagSet) { Keys(fs, "list", "k", "l") }, "k=\nl=\n:6\n"},
	} {
		root, list, _ := tree()
		tc.annotate(findCommand(root, "sub leaf").Flags())
		CompleteFlags(root)
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(io.Discard)
		root.SetArgs([]string{cobra.ShellCompRequestCmd, "sub", "leaf", "--list", ""})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("completes %q, want %q", out.String(), tc.want)
		}
		root.SetArgs([]string{"sub", "leaf", "--list", "other"})
		if err := root.Execute(); err != nil || len(*list) != 1 {
			t.Errorf("another value: %v %q", err, *list)
		}
	}
}

func TestGroups(t *testing.T) {
	root := &cobra.Command{Use: "m"}
	run := func(*cobra.Command, []string) error { return nil }
	AddGroups(root, Group{ID: "g", Title: "G:", Commands: []*cobra.Command{{Use: "a", RunE: run}}})
	if c := root.Commands()[0]; c.GroupID != "g" {
		t.Errorf("group %q", c.GroupID)
	}
	defer func() {
		if recover() == nil {
			t.Error("a command in no group did not panic")
		}
	}()
	root.AddCommand(&cobra.Command{Use: "loose", RunE: run})
	AddGroups(root)
}

func TestFormatVersion(t *testing.T) {
	info := func(settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261123215601-cf72536f0a1b"}}
		for i := 0; i < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	platform := "go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{info("vcs.revision", "cf72536f0a1b2c3d", "vcs.time", "2026-11-23T21:56:01Z", "vcs.modified", "false"),
			"v0.0.0-20261123215601-cf72536f0a1b\nrevision cf72536f0a1b2c3d (2026-11-23T21:56:01Z)\n" + platform},
		{info("vcs.revision", "cf72536f0a1b2c3d", "vcs.time", "2026-11-23T21:56:01Z", "vcs.modified", "true"),
			"v0.0.0-20261123215601-cf72536f0a1b\nrevision cf72536f0a1b2c3d (2026-11-23T21:56:01Z), with uncommitted changes\n" + platform},
		{info(), "v0.0.0-20261123215601-cf72536f0a1b\nrevision unknown (built without VCS information)\n" + platform},
	} {
		if got := formatVersion(tc.info); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestDocs(t *testing.T) {
	root, _, _ := tree()
	root.PersistentFlags().String("db", "/from/env.db", "database")
	dir := filepath.Join(t.TempDir(), "cli")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m_gone.md"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := GenDocs(root, dir, map[string]string{"db": "m3eval.db"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "m.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `(default "m3eval.db")`) || strings.Contains(string(b), "env.db") || strings.Contains(string(b), "Auto generated") {
		t.Errorf("m.md:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "m_gone.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the page of a removed command stayed")
	}
	other := t.TempDir()
	if err := GenDocs(root, other, nil); err != nil {
		t.Fatal(err)
	}
	if diff, err := DocsDiff(dir, other); err != nil || diff != "" {
		t.Errorf("two runs differ: %v %s", err, diff)
	}
	os.WriteFile(filepath.Join(other, "m_sub.md"), []byte("changed"), 0o644)
	os.Remove(filepath.Join(other, "m_sub_leaf.md"))
	os.WriteFile(filepath.Join(other, "m_new.md"), []byte("new"), 0o644)
	diff, err := DocsDiff(dir, other)
	want := "m_new.md is missing\nm_sub.md differs\nm_sub_leaf.md documents no command"
	if err != nil || diff != want {
		t.Errorf("diff %q, want %q (%v)", diff, want, err)
	}
}
