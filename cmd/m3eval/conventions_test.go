package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdutil"
)

// The CLI conventions of issue #15: groups, the --db default, flag values checked and
// declared and completed with their values, completion from the database, --version, the generated docs.

// TestHelpGroupsAndDBDefault: the root's help files every command under its group, and the
// database default appears once, whatever $M3EVAL_DB says.
func TestHelpGroupsAndDBDefault(t *testing.T) {
	for _, env := range []string{"", "/srv/study.db"} {
		t.Setenv("M3EVAL_DB", env)
		help := mustRun(t, "--help")
		groups := map[string][]string{
			"Annotation:": {"import", "annotate", "status", "export", "sample", "assign", "serve", "qc", "adjudicate"},
			"Scoring:":    {"judge", "import-scores", "score", "estimate", "agree", "report", "rubric"},
			"Datasets:":   {"illusion", "convert", "simulate"},
			"Databases:":  {"copy"},
		}
		sections := regexp.MustCompile(`(?m)^(\S[^\n]*:)\n((?:  \S[^\n]*\n)+)`).FindAllStringSubmatch(help, -1)
		var titles []string
		for _, s := range sections {
			titles = append(titles, s[1])
			want, ok := groups[s[1]]
			if !ok {
				continue
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(s[2]), "\n") {
				got = append(got, strings.Fields(line)[0])
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s lists %v, want %v", s[1], got, want)
			}
		}
		if i := slices.Index(titles, "Annotation:"); i < 0 || !slices.Equal(titles[i:i+5], []string{"Annotation:", "Scoring:", "Datasets:", "Databases:", "Additional Commands:"}) {
			t.Errorf("sections %v", titles)
		}
		def := env
		if def == "" {
			def = "m3eval.db"
		}
		if n := strings.Count(help, def); n != 1 {
			t.Errorf("M3EVAL_DB=%q: the default %q appears %d times in --help:\n%s", env, def, n, help)
		}
		if !strings.Contains(help, "$M3EVAL_DB") || !strings.Contains(help, "--quiet") {
			t.Errorf("--help does not explain $M3EVAL_DB or --quiet:\n%s", help)
		}
	}
}

// badValue is a value no enumerated flag accepts.
const badValue = "no-such-value"

// TestEnumeratedFlagValues: every enumerated flag (declared with cmdutil.EnumVar) is checked
// at parse time; an unknown value is a usage error naming the flag and every valid value, the
// help shows the values, and the shell completes the same values.
func TestEnumeratedFlagValues(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	n := 0
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			e, ok := f.Value.(cmdutil.Enumerated)
			if !ok {
				return
			}
			n++
			command, values := commandPath(c), e.Values()
			args := append([]string{"--db", db}, strings.Fields(command)...)
			_, err := run(t, append(args, "--"+f.Name, badValue)...)
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Errorf("%s --%s %s: %v, want a usage error", command, f.Name, badValue, err)
				return
			}
			for _, v := range values {
				if v != "" && !strings.Contains(err.Error(), v) {
					t.Errorf("%s --%s: %q does not list %q", command, f.Name, err, v)
				}
			}
			if !strings.HasPrefix(err.Error(), "--"+f.Name+` "`+badValue+`": use one of `) {
				t.Errorf("%s --%s: %q", command, f.Name, err)
			}
			help := mustRun(t, append(strings.Fields(command), "--help")...)
			if want := "--" + f.Name + " " + strings.Join(values, "|"); !strings.Contains(strings.ReplaceAll(help, `|""`, "|"), want) {
				t.Errorf("%s --help does not show %q:\n%s", command, want, help)
			}
			got, _ := completions(t, append(append([]string{"__complete"}, args...), "--"+f.Name, "")...)
			want := slices.DeleteFunc(slices.Clone(values), func(v string) bool { return v == "" })
			if !slices.Equal(got, want) {
				t.Errorf("%s --%s completes %q, want %q", command, f.Name, got, want)
			}
		})
	}
	walk(newRootCmd())
	if n < 20 {
		t.Errorf("only %d enumerated flags declared", n)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a usage error created the database: %v", err)
	}
	// The defaults themselves pass, and a valid value is taken.
	mustRun(t, "agree", "--help")
	if _, err := run(t, "--db", db, "score", "--format", "latex", "--ci", "bca"); err != nil && strings.Contains(err.Error(), "use one of") {
		t.Errorf("valid values refused: %v", err)
	}
}

// completions runs m3eval __complete in process and returns the candidates and the directive.
func completions(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("m3eval %v: %v", args, err)
	}
	var got []string
	directive := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
			directive = line
		case line == "", strings.HasPrefix(line, "Completion ended"):
		default:
			got = append(got, line)
		}
	}
	return got, directive
}

// completionFixture is a database with the demo turns, the rule judge's scores and a
// campaign "pilot" that assigns turns to alice and alan.
func completionFixture(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	mustRun(t, "--db", db, "import", "--demo")
	mustRun(t, "--db", db, "judge")
	mustRun(t, "--db", db, "sample", "--name", "pilot", "--n", "4", "--by", "action_type")
	mustRun(t, "--db", db, "assign", "--sample", "pilot", "--annotators", "alice,alan", "--overlap", "1")
	return db
}

// TestDynamicCompletion: names and ids come from the database --db names, by prefix; a
// database that does not exist completes nothing and is not created.
func TestDynamicCompletion(t *testing.T) {
	db := completionFixture(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"score", "--judge", ""}, []string{"rules"}},
		{[]string{"report", "--judge", "r"}, []string{"rules"}},
		{[]string{"score", "--annotator", "al"}, []string{"alan", "alice"}},
		{[]string{"export", "--annotator", "ali"}, []string{"alice"}},
		{[]string{"annotate", "--start", "demo_en_apples_1_turn_"}, []string{
			"demo_en_apples_1_turn_1", "demo_en_apples_1_turn_2", "demo_en_apples_1_turn_3", "demo_en_apples_1_turn_4",
			"demo_en_apples_1_turn_5", "demo_en_apples_1_turn_6", "demo_en_apples_1_turn_7"}},
		{[]string{"annotate", "--start", "zzz"}, nil},
		{[]string{"qc", "--campaign", ""}, []string{"pilot"}},
		{[]string{"assign", "--sample", "p"}, []string{"pilot"}},
		{[]string{"annotate", "--filter", ""}, []string{"action_type="}},
		{[]string{"judge", "--filter", ""}, []string{"action_type=", "episode=", "model=", "sample_id=", "task_type="}},
		{[]string{"score", "--by", ""}, []string{"action_type", "task_type", "model", "episode"}},
	} {
		got, directive := completions(t, append([]string{"__complete", "--db", db}, tc.args...)...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
		if directive == "" {
			t.Errorf("%v: no directive", tc.args)
		}
	}
	if _, directive := completions(t, "__complete", "annotate", "--filter", ""); directive != ":6" {
		t.Errorf("--filter KEY= completion adds a space: directive %s", directive)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if got, _ := completions(t, "__complete", "--db", missing, "score", "--judge", ""); got != nil {
		t.Errorf("missing database completes %q", got)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completion created the database: %v", err)
	}
	// $M3EVAL_DB names the database when --db does not.
	t.Setenv("M3EVAL_DB", db)
	if got, _ := completions(t, "__complete", "score", "--judge", ""); !slices.Equal(got, []string{"rules"}) {
		t.Errorf("with $M3EVAL_DB: %q", got)
	}
}

// TestBinaryCompletionAndUsage: the built binary completes from a real database, and a bad
// value exits with status 2 listing the valid ones.
func TestBinaryCompletionAndUsage(t *testing.T) {
	db := completionFixture(t)
	dir := t.TempDir()
	r := runBin(t, dir, nil, "__complete", "--db", db, "score", "--annotator", "")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "alan\nalice\n:4\n") {
		t.Errorf("__complete: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, dir, nil, "__complete", "--db", db, "adjudicate", "--turn", "demo_en_apples_1_turn_7")
	if r.code != 0 || r.stdout != "demo_en_apples_1_turn_7\n:4\n" {
		t.Errorf("__complete --turn: %d %q", r.code, r.stdout)
	}
	r = runBin(t, dir, nil, "--db", db, "score", "--ci", "normal")
	want := "m3eval: --ci \"normal\": use one of percentile, bca\nRun 'm3eval score --help' for usage.\n"
	if r.code != 2 || r.stderr != want || r.stdout != "" {
		t.Errorf("bad --ci: exit %d, stderr %q, want 2 and %q", r.code, r.stderr, want)
	}
	// The completion script the shell loads names the binary's hidden __complete command.
	if r = runBin(t, dir, nil, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "__complete") {
		t.Errorf("completion bash: %d %q", r.code, r.stderr)
	}
}

// TestVersion builds m3eval in a fresh clone of this repository (go stamps VCS information
// only where .git is a directory, not in a git worktree) carrying this work tree's files, and
// checks --version against git: the revision, its commit time, and whether the tree differs.
func TestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds the binary")
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	top := git(".", "rev-parse", "--show-toplevel")
	clone := filepath.Join(t.TempDir(), "m3eval")
	if out, err := exec.Command("git", "clone", "-q", "--shared", top, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// The clone gets the work tree's files, uncommitted changes included.
	for _, f := range strings.Split(git(top, "ls-files", "--cached", "--others", "--exclude-standard"), "\n") {
		b, err := os.ReadFile(filepath.Join(top, f))
		if errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(clone, f)) // deleted in the work tree
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := git(clone, "rev-parse", "HEAD")
	if head != git(top, "rev-parse", "HEAD") {
		t.Fatal("the clone is at another commit")
	}
	bin := filepath.Join(t.TempDir(), "m3eval")
	build := exec.Command("go", "build", "-buildvcs=true", "-trimpath", "-o", bin, "./cmd/m3eval")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	unix := git(clone, "show", "-s", "--format=%ct", "HEAD")
	at, err := time.Parse("2006-01-02 15:04:05 -0700", git(clone, "show", "-s", "--format=%ci", "HEAD"))
	if err != nil || unix == "" {
		t.Fatal(err)
	}
	modified := git(clone, "status", "--porcelain") != ""
	wantRev := "revision " + head + " (" + at.UTC().Format(time.RFC3339) + ")"
	if modified {
		wantRev += ", with uncommitted changes"
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "m3eval v") || !strings.Contains(lines[0], head[:12]) ||
		lines[1] != wantRev || !strings.HasPrefix(lines[2], "go1.") {
		t.Errorf("--version:\n%s\nwant m3eval v…%s…, %q, go1.…", out, head[:12], wantRev)
	}
	if strings.HasSuffix(lines[0], "+dirty") != modified {
		t.Errorf("module version %q, tree modified: %v", lines[0], modified)
	}
}

// TestDocsUpToDate: docs/cli is what `make docs` writes now, whatever the environment.
func TestDocsUpToDate(t *testing.T) {
	t.Setenv("M3EVAL_DB", "/somewhere/else.db")
	got := t.TempDir()
	mustRun(t, "gen-docs", got)
	diff, err := cmdutil.DocsDiff(filepath.Join("..", "..", "docs", "cli"), got)
	if err != nil {
		t.Fatal(err)
	}
	if diff != "" {
		t.Errorf("docs/cli is stale; run `make docs` and commit docs/cli:\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(got, "m3eval.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "else.db") || !strings.Contains(string(b), `(default "m3eval.db")`) || strings.Contains(string(b), "Auto generated") {
		t.Errorf("m3eval.md depends on the environment or the date:\n%s", b)
	}
}

// TestEveryCommandHasAnExample: the help of every command a user can run shows an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		} else if !strings.HasPrefix(strings.TrimSpace(c.Example), "m3eval ") && !strings.HasPrefix(strings.TrimSpace(c.Example), "source ") {
			t.Errorf("%s: example %q does not start with the command", c.CommandPath(), c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}
