package cmdutil

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/store"
)

func tree() (*cobra.Command, *[]string, *string) {
	root := &cobra.Command{Use: "m", SilenceErrors: true, SilenceUsage: true}
	sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return nil }}
	leaf := &cobra.Command{Use: "leaf", RunE: func(*cobra.Command, []string) error { return nil }}
	var list []string
	var one string
	leaf.Flags().StringSliceVar(&list, "list", nil, "")
	leaf.Flags().StringVar(&one, "one", "b", "")
	sub.AddCommand(leaf)
	root.AddCommand(sub)
	return root, &list, &one
}

func TestEnumValues(t *testing.T) {
	var root *cobra.Command
	for _, tc := range []struct {
		args []string
		bad  string // the ValueError's text; "" passes
	}{
		{[]string{"sub", "leaf", "--list", "x,y", "--list", "y", "--one", "a"}, ""},
		{[]string{"sub", "leaf", "--one", "b"}, ""}, // the default
		{[]string{"sub", "leaf", "--one", ""}, ""},
		{[]string{"sub", "leaf", "--list", "x,z"}, `--list "z": use one of x, y`},
		{[]string{"sub", "leaf", "--one", "c"}, `--one "c": use one of a (or "" for none)`},
	} {
		var list *[]string
		var one *string
		root, list, one = tree()
		ApplyFlags(root, []Flag{
			{Command: "sub leaf", Name: "list", Values: []string{"x", "y"}},
			{Command: "sub leaf", Name: "one", Values: []string{"a", ""}},
		})
		root.SetArgs(tc.args)
		err := root.Execute()
		var ve *ValueError
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.bad != "" && (!errors.As(err, &ve) || ve.Error() != tc.bad):
			t.Errorf("%v: %v, want %s", tc.args, err, tc.bad)
		}
		if tc.bad == "" && len(tc.args) == 8 && (!slices.Equal(*list, []string{"x", "y", "y"}) || *one != "a") {
			t.Errorf("values not taken: %q %q", *list, *one)
		}
	}
	// The wrapped flag still reads as its type.
	if f := findCommand(root, "sub leaf").Flags().Lookup("list"); f.Value.Type() != "stringSlice" {
		t.Errorf("type %s", f.Value.Type())
	}
	if _, ok := findCommand(root, "sub leaf").GetFlagCompletionFunc("list"); !ok {
		t.Error("no completion registered")
	}
}

func TestRegistryMistakesPanic(t *testing.T) {
	for _, table := range [][]Flag{
		{{Command: "nope", Name: "one", Values: []string{"a"}}},
		{{Command: "sub leaf", Name: "nope", Values: []string{"a"}}},
		{{Command: "sub leaf", Name: "one"}},
		{{Command: "sub leaf", Name: "one", Values: []string{"a"}}, {Command: "sub leaf", Name: "one", Suggest: []string{"a"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v did not panic", table)
				}
			}()
			root, _, _ := tree()
			ApplyFlags(root, table)
		}()
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

// TestCompleteFromDatabase: names come from the database --db names; one with a control
// character is left out.
func TestCompleteFromDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, judge := range []string{"gpt-4o", "gpt\x1b[2J", "gpt\nrm"} {
		im, err := s.BeginScoreImport(ctx, judge, store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	root, _, _ := tree()
	root.PersistentFlags().String("db", path, "")
	ApplyFlags(root, []Flag{{Command: "sub leaf", Name: "one", From: store.CompleteJudges}})
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs([]string{cobra.ShellCompRequestCmd, "sub", "leaf", "--one", "g"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "gpt-4o\n:4\n" {
		t.Errorf("completions %q", got)
	}
}

// TestNewBar: --quiet, a persistent flag of the root, silences the bar of a subcommand.
func TestNewBar(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan string)
		go func() { b, _ := io.ReadAll(ptmx); read <- string(b) }()
		root, _, _ := tree()
		root.PersistentFlags().BoolP("quiet", "q", false, "")
		leaf := findCommand(root, "sub leaf")
		leaf.RunE = func(cmd *cobra.Command, _ []string) error {
			b := NewBar(cmd, "work", 10, progress.Records)
			b.Report(10, 10)
			b.Finish()
			return nil
		}
		root.SetErr(tty)
		args := []string{"sub", "leaf"}
		if quiet {
			args = append(args, "-q")
		}
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		out := <-read
		ptmx.Close()
		if got := strings.Contains(out, "work: 10 records in"); got == quiet {
			t.Errorf("quiet %v: %q", quiet, out)
		}
	}
}
