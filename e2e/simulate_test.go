package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freeAddr returns a 127.0.0.1 address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The progress line shows on a terminal while episodes run and is gone when the summary
// prints; written to a file, stderr has the summary only.
func TestSimulateProgressLine(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	scenes, _ := filepath.Abs("../annotations/demo/images/scenes.jsonl")
	addr := freeAddr(t)
	server := exec.Command(bin, "simulate", "--demo-vlm", "--scenes", scenes, "--listen", addr, "--demo-latency", "40ms")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	for deadline := time.Now().Add(waitDeadline); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the demo VLM does not listen: %v", err)
		}
	}
	dir := t.TempDir()
	run := func(out string) string {
		return bin + " simulate --scenes " + scenes + " --endpoint http://" + addr + "/v1 --model faithful --strategy both --concurrency 2 --out " + filepath.Join(dir, out)
	}
	term.start("sim", "sh -c '"+run("t.jsonl")+"; echo EXIT=$?; sleep 60'")
	// The shared bar (internal/progress): "simulate  43% |████   | (37/86, 19 turns/s) [1s:2s]".
	during := term.waitFor("sim", "turns/s", "/86,")
	if !strings.Contains(during, "simulate ") {
		t.Errorf("progress line: %q", during)
	}
	after := term.waitFor("sim", "EXIT=0", "6 of 6 episodes written")
	if strings.Contains(after, "turns/s") {
		t.Errorf("the progress line stayed on the screen:\n%s", after)
	}

	// Not a terminal: no progress line in the captured stderr.
	cmd := exec.Command("sh", "-c", run("u.jsonl")+" 2>"+filepath.Join(dir, "err.txt"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "err.txt"))
	if strings.Contains(string(b), "turns/s") || strings.Contains(string(b), "\r") || !strings.Contains(string(b), "6 of 6 episodes written") {
		t.Errorf("stderr to a file: %q", b)
	}
}
