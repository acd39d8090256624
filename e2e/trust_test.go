package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	_ "github.com/mattn/go-sqlite3"
)

// The annotator a lab can trust (issue 10): every key counts, "✓ saved" is always true,
// text from data is shown and never obeyed. Real terminals: a raw pty and tmux.

var (
	binOnce sync.Once
	binPath string
	binDir  string
	binErr  error
)

// binary builds m3eval once for all the e2e tests; TestMain removes it at the end.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "m3eval-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "m3eval")
		cmd := exec.Command("go", "build", "-o", binPath, "../cmd/m3eval")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// demoDB imports the demo episodes into a new database in dir.
func demoDB(t *testing.T, bin, dir string) string {
	t.Helper()
	return demoInto(t, bin, filepath.Join(dir, "trust.db"))
}

// demoInto imports the demo episodes into db, a file or a PostgreSQL address.
func demoInto(t *testing.T, bin, db string) string {
	t.Helper()
	if out, err := exec.Command(bin, "--db", db, "import", "--demo").CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	return db
}

// stored reads what the database holds for an annotator: sample → field → value, and the
// status of each annotation under the key "_status".
func stored(t *testing.T, db, annotator string) map[string]map[string]string {
	t.Helper()
	conn, pg := openRaw(t, db)
	defer conn.Close()
	q := `SELECT t.sample_id, '_status', a.status FROM annotations a
		JOIN turns t ON t.id = a.turn_id JOIN annotators an ON an.id = a.annotator_id WHERE an.name = ?
		UNION ALL SELECT t.sample_id, v.field, v.value FROM annotation_values v JOIN annotations a ON a.id = v.annotation_id
		JOIN turns t ON t.id = a.turn_id JOIN annotators an ON an.id = a.annotator_id WHERE an.name = ?`
	args := []any{annotator, annotator}
	if pg {
		q, args = strings.ReplaceAll(q, "?", "$1"), args[:1]
	}
	rows, err := conn.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var s, f, v string
		if err := rows.Scan(&s, &f, &v); err != nil {
			t.Fatal(err)
		}
		if out[s] == nil {
			out[s] = map[string]string{}
		}
		out[s][f] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkStored fails unless the database holds exactly these values (and status) for each
// sample named.
func checkStored(t *testing.T, db, annotator string, want map[string]map[string]string) {
	t.Helper()
	got := stored(t, db, annotator)
	for sample, fields := range want {
		for f, v := range fields {
			if got[sample][f] != v {
				t.Errorf("%s %s = %q, want %q (stored: %v)", sample, f, got[sample][f], v, got[sample])
			}
		}
		for f, v := range got[sample] {
			if _, ok := fields[f]; !ok {
				t.Errorf("%s has %s = %q, not typed", sample, f, v)
			}
		}
	}
}

// ptyProgram is a program on a raw pseudo-terminal; everything it draws is kept.
type ptyProgram struct {
	cmd  *exec.Cmd
	f    *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func startPty(t *testing.T, name string, args ...string) *ptyProgram {
	t.Helper()
	p := &ptyProgram{cmd: exec.Command(name, args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=")
	f, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	p.f = f
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		f.Close()
	})
	return p
}

// waitOutput waits until the program has drawn text.
func (p *ptyProgram) waitOutput(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := bytes.Contains(p.out.Bytes(), []byte(text))
		p.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("waited %v for %q on the pty", waitDeadline, text)
}

// write sends bytes in one write: the program reads them together, as from a fast typist.
func (p *ptyProgram) write(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.f, s); err != nil {
		t.Fatal(err)
	}
}

func (p *ptyProgram) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(waitDeadline):
		t.Fatal("the program did not exit")
	}
	return -1
}

// waitStored polls the database until cond holds.
func waitStored(t *testing.T, db, annotator string, what string, cond func(map[string]map[string]string) bool) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for {
		got := stored(t, db, annotator)
		if cond(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the database holds %v", waitDeadline, what, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBurstKeysOnRawPty types three whole items, and a comment that starts inside a burst,
// each as one write with no gap between the keys: every key acts, in order. On SQLite and
// on PostgreSQL.
func TestBurstKeysOnRawPty(t *testing.T) { onBackends(t, testBurstKeysOnRawPty) }

func testBurstKeysOnRawPty(t *testing.T, newDB func(string) string) {
	bin := binary(t)
	db := demoInto(t, bin, newDB("trust.db"))
	p := startPty(t, bin, "--db", db, "annotate", "--annotator", "pat")
	p.waitOutput(t, "item 1 of 35")
	p.write(t, "434\r54y5\r45y4\r")
	waitStored(t, db, "pat", "three submitted items", func(m map[string]map[string]string) bool {
		return m["demo_zh_umbrella_0_turn_3"]["_status"] == "done"
	})
	// Item 4: two scores, then c opens the comment box in the middle of the burst: the rest,
	// "q" included, is comment text.
	p.write(t, "54chi q")
	// esc in a read of its own (a lone ESC is the key, not the start of a sequence): sent
	// once the comment box shows the text, not after a guessed pause.
	p.waitOutput(t, "hi q")
	p.write(t, "\x1b")
	waitStored(t, db, "pat", "the comment", func(m map[string]map[string]string) bool {
		return m["demo_zh_umbrella_0_turn_4"]["comments"] == "hi q"
	})
	p.write(t, "q")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkStored(t, db, "pat", map[string]map[string]string{
		"demo_zh_umbrella_0_turn_1": {"_status": "done", "correctness": "4", "reasoning_completeness": "3",
			"overall_quality": "4"},
		"demo_zh_umbrella_0_turn_2": {"_status": "done", "correctness": "5", "reasoning_completeness": "4",
			"context_consistency": "Yes", "overall_quality": "5"},
		"demo_zh_umbrella_0_turn_3": {"_status": "done", "correctness": "4", "reasoning_completeness": "5",
			"context_consistency": "Yes", "overall_quality": "4"},
		"demo_zh_umbrella_0_turn_4": {"_status": "draft", "correctness": "5", "reasoning_completeness": "4",
			"comments": "hi q"},
	})
}

// commentBox is what the open comment editor shows.
const commentBox = "esc when done"

// TestCommentEditorDrawnAtOnce: the editor is on screen after c, shows each key as typed,
// and is gone after esc. It waits for states, not within 350 ms as it did: on a busy machine
// a draw may take any time. That the screen never says saved before the database holds the
// text is TestCommentNotShownSavedBeforeItIs.
func TestCommentEditorDrawnAtOnce(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	db := demoDB(t, bin, t.TempDir())
	term.start("c", fmt.Sprintf("%s --db %s annotate --annotator cid", bin, db))
	term.waitFor("c", "item 1 of 35")
	term.tmux("send-keys", "-t", "c", "c")
	term.waitFor("c", commentBox)
	term.tmux("send-keys", "-t", "c", "-l", "abc")
	term.waitFor("c", "┃ abc", "✓ saved")
	term.tmux("send-keys", "-t", "c", "Escape")
	term.until("c", "the editor gone after esc", func(s string) bool {
		return !strings.Contains(s, commentBox) && strings.Contains(s, "Comments") && strings.Contains(s, "abc")
	})
	// Keys after esc are commands again: "s" skips the item.
	term.tmux("send-keys", "-t", "c", "s")
	term.waitFor("c", "demo_zh_umbrella_0 · turn 2")
	term.tmux("send-keys", "-t", "c", "q")
	waitStored(t, db, "cid", "the comment", func(m map[string]map[string]string) bool {
		return m["demo_zh_umbrella_0_turn_1"]["comments"] == "abc"
	})
}

// within polls the screen until cond holds, failing after limit.
func within(t *testing.T, term *terminal, name string, limit time.Duration, what string, cond func(string) bool) {
	t.Helper()
	start := time.Now()
	for {
		s := term.screen(name)
		if cond(s) {
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not on screen within %v:\n%s", what, limit, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdLock takes the database's write lock from another connection until release is called
// (or the test ends): the test lets go once the screen has shown what it waits for, never
// after a guessed time that a busy machine may need whole for the first draw.
func holdLock(t *testing.T, db string) (release func()) {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	c, err := conn.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			c.ExecContext(context.Background(), `ROLLBACK`)
			c.Close()
			conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestLockedDatabaseNothingShownSaved: another connection holds the write lock while the
// annotator types. Nothing is shown saved before it is, the item cannot be left, and once
// the lock is gone every value typed meanwhile is in the database with no key pressed.
func TestLockedDatabaseNothingShownSaved(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	db := demoDB(t, bin, t.TempDir())
	term.start("l", fmt.Sprintf("%s --db %s annotate --annotator lou", bin, db))
	term.waitFor("l", "item 1 of 35", "✓ saved")
	release := holdLock(t, db)
	term.keys("l", "4", "3")
	term.waitFor("l", "✗ NOT SAVED", "✗ unsaved")
	term.keys("l", "4", "Enter")
	term.waitFor("l", "this item stays open")
	// While the lock is held (it is, until release), through several retries: never saved.
	for i := 0; i < 20; i++ {
		s := term.screen("l")
		if strings.Contains(s, "✓ saved") {
			t.Fatalf("shown saved while the database was locked:\n%s", s)
		}
		if !strings.Contains(s, "demo_zh_umbrella_0 · turn 1") {
			t.Fatalf("left the item with unsaved changes:\n%s", s)
		}
		if got := stored(t, db, "lou"); len(got) != 0 {
			t.Fatalf("the database holds %v while locked", got)
		}
		time.Sleep(100 * time.Millisecond) // the pace of the look, not a wait for a state
	}
	release()
	// No key pressed: the retries land everything.
	term.waitFor("l", "✓ saved", "every change landed")
	checkStored(t, db, "lou", map[string]map[string]string{
		"demo_zh_umbrella_0_turn_1": {"_status": "draft", "correctness": "4", "reasoning_completeness": "3", "overall_quality": "4"},
	})
	term.keys("l", "Enter")
	term.waitFor("l", "demo_zh_umbrella_0 · turn 2", "1 done", "✓ saved")
	term.keys("l", "q")
	checkStored(t, db, "lou", map[string]map[string]string{
		"demo_zh_umbrella_0_turn_1": {"_status": "done", "correctness": "4", "reasoning_completeness": "3", "overall_quality": "4"},
	})
}

// startWithCode runs command in tmux and records its exit code in a file.
func startWithCode(term *terminal, name, command, codeFile string) {
	term.start(name, fmt.Sprintf("sh -c '%s; echo $? > %s'", command, codeFile))
}

func exitCodeFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no exit code in %s", path)
	return ""
}

// TestQuitWithUnsavedChangesAsks: q with a change not saved asks; a second q quits and the
// command exits 1, saying so.
func TestQuitWithUnsavedChangesAsks(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	dir := t.TempDir()
	db := demoDB(t, bin, dir)
	code := filepath.Join(dir, "code")
	startWithCode(term, "q", fmt.Sprintf("%s --db %s annotate --annotator quinn 2>%s/err", bin, db, dir), code)
	term.waitFor("q", "item 1 of 35", "✓ saved")
	holdLock(t, db) // held until the test ends: the forced quit gives the change up
	term.keys("q", "5")
	term.waitFor("q", "✗ NOT SAVED")
	term.keys("q", "q")
	// The question is on the screen of a program that still runs: one q did not quit.
	term.waitFor("q", "q again quits and loses them")
	if b, err := os.ReadFile(code); err == nil {
		msg, _ := os.ReadFile(filepath.Join(dir, "err"))
		t.Fatalf("exited after one q: %s %s", b, msg)
	}
	term.keys("q", "q")
	if c := exitCodeFile(t, code); c != "1" {
		t.Fatalf("forced quit with unsaved changes exited %s, want 1", c)
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "err"))
	if !strings.Contains(string(msg), "quit with 1 change(s) not saved") {
		t.Fatalf("stderr: %s", msg)
	}
}

// TestDiskFullNothingShownSaved: the database sits on a 4 MB tmpfs that fills up while the
// annotator types. Saves fail, the screen says so; once space is freed, everything typed is
// in the database without a key pressed. Needs root for mount (skipped otherwise).
func TestDiskFullNothingShownSaved(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	db := demoDB(t, bin, mnt)
	term.start("d", fmt.Sprintf("%s --db %s annotate --annotator dee", bin, db))
	term.waitFor("d", "item 1 of 35", "✓ saved")
	// Fill the disk: dd stops at ENOSPC.
	filler := filepath.Join(mnt, "filler")
	exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run()
	term.keys("d", "2", "3", "4")
	term.waitFor("d", "✗ NOT SAVED", "✗ unsaved")
	term.keys("d", "q")
	term.waitFor("d", "q again quits and loses them")
	term.keys("d", "j") // any other key: keep working
	term.waitFor("d", "not quitting")
	if s := term.screen("d"); strings.Contains(s, "✓ saved") {
		t.Fatalf("shown saved on a full disk:\n%s", s)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	term.waitFor("d", "✓ saved", "every change landed")
	checkStored(t, db, "dee", map[string]map[string]string{
		"demo_zh_umbrella_0_turn_1": {"_status": "draft", "correctness": "2", "reasoning_completeness": "3", "overall_quality": "4"},
	})
	term.keys("d", "q")
}

// TestEscapeSequencesInDataAreShownNotObeyed imports a turn whose response retitles the
// window, clears the screen and draws a fake answer; the annotator shows it as text, the
// window title stays, and status prints the annotator's name without its escapes.
func TestEscapeSequencesInDataAreShownNotObeyed(t *testing.T) {
	term := newTerminal(t)
	bin := binary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "esc.db")
	src := filepath.Join(dir, "evil.jsonl")
	evil := "\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[5;60HFAKE 5 Fully right\u009b31m"
	rec := fmt.Sprintf(`{"sample_id":"evil_turn_1","episode_id":"evil\u001b[7m","turn":1,"action_type":"initial","task_type":"t",`+
		`"user_message":"hello","vlm_response":%q,"expected_answer":"x","images":[],"model":"m"}`, evil)
	rec = strings.ReplaceAll(rec, `\x1b`, `\u001b`)
	rec = strings.ReplaceAll(rec, `\a`, `\u0007`)
	if err := os.WriteFile(src, []byte(rec+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "--db", db, "import", src).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// The annotator's name carries an escape too; the header shows it and status prints it.
	pidE := term.start("e", fmt.Sprintf(`%s --db %s annotate --annotator "$(printf 'eve\033]0;T\007')"`, bin, db))
	before := term.tmux("display-message", "-p", "-t", "e", "#{pane_title}")
	s := term.waitFor("e", "␛]0;PWNED␇", "␛[2J", "eve␛]0;T␇", "evil␛[7m")
	if strings.Count(s, "FAKE") != strings.Count(s, "HFAKE") {
		t.Fatalf("the fake answer was drawn:\n%s", s)
	}
	if after := term.tmux("display-message", "-p", "-t", "e", "#{pane_title}"); after != before || strings.Contains(after, "PWNED") {
		t.Fatalf("pane title changed: %q -> %q", before, after)
	}
	term.keys("e", "4")
	term.waitFor("e", "✓ saved")
	term.keys("e", "q")
	waitExit(t, pidE)
	out, err := exec.Command(bin, "--db", db, "status").CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if bytes.ContainsAny(out, "\x1b\x07") || !bytes.Contains(out, []byte("eve␛]0;T␇")) {
		t.Fatalf("status prints control characters: %q", out)
	}
}
