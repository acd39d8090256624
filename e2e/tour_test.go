package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tourCommand is one command of the README's tour and the expected output shown under its
// block (the lines of the ``` block that follows the ```sh block, empty when none follows).
type tourCommand struct {
	line  string // as written, continuation lines joined
	block int    // index of its ```sh block
}

// tourBlock is one ```sh block of the tour and the abridged output the README shows for it.
type tourBlock struct {
	commands []string
	expected []string
}

// readTour reads the ```sh blocks of the README's "A five-minute tour" section (up to the
// next "## " heading), joins continuation lines, and pairs each block with the plain ```
// block that follows it, which shows its expected output (abridged).
func readTour(t *testing.T, readme string) []tourBlock {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## A five-minute tour")
	if start < 0 {
		t.Fatal("README.md has no \"## A five-minute tour\" section")
	}
	text = text[start+1:]
	if end := strings.Index(text, "\n## "); end >= 0 {
		text = text[:end]
	}
	var blocks []tourBlock
	var cur []string
	in, kind := false, ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case !in && strings.HasPrefix(l, "```"):
			in, kind, cur = true, strings.TrimPrefix(l, "```"), nil
		case in && l == "```":
			in = false
			switch {
			case kind == "sh":
				blocks = append(blocks, tourBlock{commands: joinContinuations(cur)})
			case kind == "" && len(blocks) > 0 && blocks[len(blocks)-1].expected == nil:
				blocks[len(blocks)-1].expected = cur
			}
		case in:
			cur = append(cur, l)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("the tour has no ```sh blocks")
	}
	return blocks
}

func joinContinuations(lines []string) []string {
	var out []string
	acc := ""
	for _, l := range lines {
		if strings.HasSuffix(l, "\\") {
			acc += strings.TrimSuffix(l, "\\")
			continue
		}
		l = acc + l
		acc = ""
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return out
}

// interactive says whether a tour command opens a screen (the annotator, the adjudication
// screen): the test cannot type into it, so it leaves those out (the screens have their
// own end-to-end tests in tmux). The README's expected output is of a run without them.
func interactive(line string) bool {
	f := strings.Fields(line)
	for i, w := range f {
		if w != "m3eval" || i+1 >= len(f) {
			continue
		}
		rest := f[i+1:]
		for len(rest) > 1 && rest[0] == "--db" {
			rest = rest[2:]
		}
		switch rest[0] {
		case "annotate":
			return true
		case "adjudicate":
			return !strings.Contains(line, "--list") && !strings.Contains(line, "--turn")
		}
	}
	return false
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestReadmeTour runs the README's tour, command by command as written there, in a fresh
// directory (holding only a link to the repository's annotations/, which the tour reads as
// ../annotations from its tour/ directory) with the built binary on PATH, twice in a row in
// the same directory: every command succeeds both times; score shows a defined
// Krippendorff α and a judge correlation, qc flags someone, adjudicate --list lists turns,
// the report's agreement charts have data; each block's output holds the lines the README
// shows under it; and everything the tour writes is ignored by git.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the tour twice")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	blocks := readTour(t, "../README.md")
	bin := build(t)
	root := t.TempDir()
	repoAnn, err := filepath.Abs("../annotations")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repoAnn, filepath.Join(root, "annotations")); err != nil {
		t.Fatal(err)
	}
	// The scripted VLM listens on a free port rather than the README's 8000, which another
	// test (or developer) may hold.
	port := strconv.Itoa(freePort(t))

	// One bash runs the whole tour (the tour's cd and export carry over, and kill %1 finds
	// its job), with a marker and the exit status around each command.
	var script strings.Builder
	script.WriteString("exec 2>&1\n")
	var cmds []tourCommand
	for bi, b := range blocks {
		for _, l := range b.commands {
			c := tourCommand{line: l, block: bi}
			n := len(cmds)
			cmds = append(cmds, c)
			fmt.Fprintf(&script, "echo '@@cmd %d'\n", n)
			if interactive(l) {
				fmt.Fprintf(&script, "echo '@@rc %d 0'\n", n)
				continue
			}
			l = strings.ReplaceAll(l, "127.0.0.1:8000", "127.0.0.1:"+port)
			fmt.Fprintf(&script, "%s\necho \"@@rc %d $?\"\n", l, n)
			if strings.HasSuffix(strings.TrimSpace(l), "&") && strings.Contains(l, "--listen") {
				// Wait (up to 60 s) until the server answers, as a user would see its
				// "demo VLM … at" line before going on.
				fmt.Fprintf(&script, "for i in $(seq 600); do (echo >/dev/tcp/127.0.0.1/%s) 2>/dev/null && break; sleep 0.1; done\n", port)
			}
		}
	}
	env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + root, "LANG=C.UTF-8", "TERM=dumb"}
	for run := 1; run <= 2; run++ {
		cmd := exec.Command("bash", "-c", script.String())
		cmd.Dir = root
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(5 * time.Minute):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("run %d: the tour did not finish in 5 minutes:\n%s", run, out.String())
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // a server left behind, if any
		if err != nil {
			t.Fatalf("run %d: bash: %v\n%s", run, err, out.String())
		}
		outputs := splitTourOutput(t, out.String(), len(cmds))
		failed := false
		for i, c := range cmds {
			if outputs[i].rc != 0 {
				t.Errorf("run %d: %s\nexit %d:\n%s", run, c.line, outputs[i].rc, outputs[i].text)
				failed = true
			}
		}
		if failed {
			t.FailNow()
		}
		checkTourNumbers(t, run, cmds, outputs, filepath.Join(root, "tour"))
		// Each block's output holds the lines the README shows under it.
		for bi, b := range blocks {
			var all strings.Builder
			for i, c := range cmds {
				if c.block == bi {
					all.WriteString(outputs[i].text)
				}
			}
			got := normalizeSpace(all.String())
			for _, want := range b.expected {
				// "…" stands for text left out: the pieces between must each be there.
				for _, piece := range strings.Split(want, "…") {
					if w := normalizeSpace(piece); w != "" && !strings.Contains(got, w) {
						t.Errorf("run %d: the README shows %q under\n  %s\nbut the output is:\n%s", run, want, strings.Join(b.commands, "\n  "), all.String())
						break
					}
				}
			}
		}
	}
	// Nothing the tour writes would show up in git status: tour/ is ignored.
	var files []string
	filepath.Walk(filepath.Join(root, "tour"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("the tour wrote nothing under tour/")
	}
	check := exec.Command("git", append([]string{"-C", "..", "check-ignore", "--no-index", "--verbose", "--non-matching"}, files...)...)
	res, _ := check.Output()
	for _, l := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		if strings.HasPrefix(l, "::") {
			t.Errorf("the tour writes a file git would not ignore: %s", strings.TrimSpace(strings.TrimPrefix(l, "::")))
		}
	}
}

type tourOutput struct {
	text string
	rc   int
}

func splitTourOutput(t *testing.T, out string, n int) []tourOutput {
	t.Helper()
	res := make([]tourOutput, n)
	seen := make([]bool, n)
	cur := -1
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Text()
		var i, rc int
		if _, err := fmt.Sscanf(l, "@@cmd %d", &i); err == nil && strings.HasPrefix(l, "@@cmd ") {
			cur = i
			continue
		}
		if _, err := fmt.Sscanf(l, "@@rc %d %d", &i, &rc); err == nil && strings.HasPrefix(l, "@@rc ") {
			res[i].rc, seen[i] = rc, true
			continue
		}
		if cur >= 0 {
			res[cur].text += l + "\n"
		}
	}
	for i := range seen {
		if !seen[i] {
			t.Fatalf("command %d never finished; the tour's output:\n%s", i, out)
		}
	}
	return res
}

var spaces = regexp.MustCompile(`\s+`)

func normalizeSpace(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// checkTourNumbers checks the figures the tour is there to show.
func checkTourNumbers(t *testing.T, run int, cmds []tourCommand, outputs []tourOutput, tourDir string) {
	t.Helper()
	find := func(pred func(string) bool) (string, bool) {
		for i, c := range cmds {
			if pred(c.line) {
				return outputs[i].text, true
			}
		}
		return "", false
	}
	number := `-?[0-9]+\.[0-9]+`
	score, ok := find(func(l string) bool {
		return strings.Contains(l, "m3eval score --judge") && !strings.Contains(l, " -o ")
	})
	if !ok {
		t.Fatal("the tour has no `m3eval score --judge …` command printing to the terminal")
	}
	if !regexp.MustCompile(`Krippendorff's α \(ordinal\)\s+` + number).MatchString(score) {
		t.Errorf("run %d: score shows no defined Krippendorff α:\n%s", run, score)
	}
	if !regexp.MustCompile(`Human vs \S+\s+│\s+│\s+Pearson r \(item mean\)\s+` + number).MatchString(score) {
		t.Errorf("run %d: score shows no judge correlation:\n%s", run, score)
	}
	qc, ok := find(func(l string) bool { return strings.Contains(l, "m3eval qc") })
	if !ok || !regexp.MustCompile(`(?m)^\S+: \w+: `).MatchString(qc) {
		t.Errorf("run %d: qc flags nobody:\n%s", run, qc)
	}
	list, ok := find(func(l string) bool { return strings.Contains(l, "m3eval adjudicate --list") })
	if !ok || !regexp.MustCompile(`[1-9][0-9]* turns? disagrees?`).MatchString(list) {
		t.Errorf("run %d: adjudicate --list lists no turn:\n%s", run, list)
	}
	html, err := os.ReadFile(filepath.Join(tourDir, "report.html"))
	if err != nil {
		t.Fatalf("run %d: the tour's report: %v", run, err)
	}
	h := string(html)
	i := strings.Index(h, `<section id="agreement"`)
	if i < 0 {
		t.Fatalf("run %d: report.html has no agreement section", run)
	}
	sec := h[i:]
	if j := strings.Index(sec[1:], "<section"); j >= 0 {
		sec = sec[:j+1]
	}
	if strings.Contains(sec, "The numbers (0 rows)") {
		t.Errorf("run %d: a chart of the report's agreement section has no data", run)
	}
	if !regexp.MustCompile(`Krippendorff α \(ordinal\)</td><td>[^<]*</td><td[^>]*>` + number).MatchString(sec) {
		t.Errorf("run %d: the report's agreement table has no Krippendorff α estimate", run)
	}
}
