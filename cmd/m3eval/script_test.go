package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command-line scripts of testdata/script: each .txtar file is a few
// m3eval command lines with the output they must print, the files they read beside them
// (testscript's format: https://pkg.go.dev/github.com/rogpeppe/go-internal/testscript).
// "exec m3eval" runs this package's main in a child process (TestMain), so what a script
// checks is the binary's behaviour: its exit status, standard output and error, files.
//
// Besides testscript's own commands, a script may use
//
//	exits CODE m3eval ARGS...   run m3eval and require exit status CODE (0 ok, 1 error,
//	                            2 usage, 130 interrupted); stdout and stderr are kept for
//	                            the next stdout/stderr commands
//
// $DEMO is the repository's annotations/demo folder, $SCORE the score fixture's folder,
// $VISTRAJQA the VisTrajQA sessions convert's tests read.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               scriptSetup,
		Cmds:                map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": cmdExits},
	})
}

// scriptSetup gives each script an interval cache of its own and the paths of the data it
// reads from the repository.
func scriptSetup(env *testscript.Env) error {
	env.Setenv("M3EVAL_CACHE_DIR", filepath.Join(env.WorkDir, ".cache"))
	env.Setenv("NO_COLOR", "1")
	for name, rel := range map[string]string{"DEMO": "../../annotations/demo", "SCORE": scoreFixture,
		"VISTRAJQA": "../../internal/convert/vistrajqa/testdata/in"} {
		abs, err := filepath.Abs(rel)
		if err != nil {
			return err
		}
		env.Setenv(name, abs)
	}
	return nil
}

// cmdExits is the scripts' "exits CODE PROGRAM ARGS...".
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}
