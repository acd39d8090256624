package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWithPostgresScript: scripts/with-postgres (what make test and .ci/run start PostgreSQL
// with) starts a server whose address works for psql, passes the command's failing exit status
// on, and leaves neither a server nor its directory behind.
func TestWithPostgresScript(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no psql: .ci/run installs Debian's postgresql package")
		}
		t.Skip("no PostgreSQL client (psql) installed")
	}
	script, err := filepath.Abs("../scripts/with-postgres")
	if err != nil {
		t.Fatal(err)
	}
	// The command prints the address and what psql reads there, then fails.
	cmd := exec.Command(script, "sh", "-c", `echo "dsn=$M3EVAL_TEST_POSTGRES"; psql "$M3EVAL_TEST_POSTGRES" -Atc "SELECT 'answer=' || (6 * 7)"; exit 3`)
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "M3EVAL_TEST_POSTGRES=") { // a server of its own, not make test's
			env = append(env, e)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("with-postgres: %v (want the command's exit status 3)\n%s", err, out)
	}
	if !strings.Contains(string(out), "answer=42") {
		t.Fatalf("psql did not reach the server:\n%s", out)
	}
	m := regexp.MustCompile(`dsn=postgres://postgres@/postgres\?host=(/[^&\s]+)&port=\d+`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no socket address in:\n%s", out)
	}
	dir := m[1]
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's directory %s is still there (%v)", dir, err)
	}
	// No postgres process of that data directory is left (the server is stopped, not orphaned).
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			t.Errorf("a process still names %s: %s", dir, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
