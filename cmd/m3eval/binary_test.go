package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// TestMain gives the tests (and the binaries they run) an interval cache of their own, empty
// at the start, so that no run reads what an earlier run or the user's own commands stored,
// and removes it and the binary the subprocess tests built.
//
// testscript.Main makes this test binary the m3eval command of the scripts in
// testdata/script (script_test.go): run as "m3eval", it runs main, which exits with the
// command's status. The scripts set their own cache (scriptSetup), so no cache is made for
// such a run.
func TestMain(m *testing.M) {
	var cache string
	if os.Getenv("M3EVAL_CACHE_DIR") == "" {
		var err error
		if cache, err = os.MkdirTemp("", "m3eval-cache-"); err == nil {
			os.Setenv("M3EVAL_CACHE_DIR", cache)
		}
	}
	testscript.Main(cleanupM{m, func() {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
		if cache != "" {
			os.RemoveAll(cache)
		}
	}}, map[string]func(){"m3eval": main})
}

// cleanupM runs the tests, then cleanup: testscript.Main exits as soon as they are done.
type cleanupM struct {
	m       *testing.M
	cleanup func()
}

func (c cleanupM) Run() int {
	defer c.cleanup()
	return c.m.Run()
}

// testBinary builds m3eval once per test run, for tests whose behaviour is the process's:
// exit codes, file descriptors, the umask, another user.
func testBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "m3eval-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "m3eval")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err, out}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// result is what a subprocess run of m3eval did.
type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the built binary with args (stdin from stdin, if not nil) in dir.
func runBin(t *testing.T, dir string, stdin []byte, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(testBinary(t), args...), dir, stdin)
}

// runShell runs a shell script with $M3EVAL set to the binary.
func runShell(t *testing.T, dir, script string) result {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "M3EVAL="+testBinary(t))
	return runCmd(t, cmd, dir, nil)
}

func runCmd(t *testing.T, cmd *exec.Cmd, dir string, stdin []byte) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return result{out.String(), errb.String(), code}
}

// TestScreensNeedATerminal: annotate with input that is not a terminal says so and writes
// nothing to the output (no alternate screen, mouse mode or hidden cursor left on); the
// adjudication screen starts through the same tui.Run (tui's TestRunNeedsATerminal).
func TestScreensNeedATerminal(t *testing.T) {
	dir := t.TempDir()
	if r := runBin(t, dir, nil, "--db", "t.db", "import", "--demo"); r.code != 0 {
		t.Fatalf("import --demo: %d %s", r.code, r.stderr)
	}
	r := runBin(t, dir, []byte("q"), "--db", "t.db", "annotate", "--annotator", "alice")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "needs a terminal: standard input is not one") {
		t.Errorf("annotate with a pipe for input: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
