package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Imports side by side and interrupted imports (issue 24): whatever an import reports stored
// is stored, whatever the others do; nothing of a failed import is ever visible.

// soakTrials is M3EVAL_SOAK_TRIALS, or def.
func soakTrials(def int) int {
	if v, err := strconv.Atoi(os.Getenv("M3EVAL_SOAK_TRIALS")); err == nil && v > 0 {
		return v
	}
	return def
}

// poolTurn is turn i of a trial's pool of turns, five to an episode, with a label by who (the
// file's own annotator) and one by "shared", the same in every file.
func poolTurn(i int, who string) string {
	ep, n := i/5, i%5+1
	return fmt.Sprintf(`{"sample_id":"p%05d_turn_%d","episode_id":"p%05d","turn":%d,"action_type":"follow_up","task_type":"t",`+
		`"user_message":"Why is it wet? (%d)","vlm_response":"It rained.","expected_answer":"rain",`+
		`"human_annotations":[{"annotator":%q,"status":"draft","correctness":%d},{"annotator":"shared","status":"draft","correctness":%d}]}`,
		ep, n, ep, n, i, who, 1+i%5, 1+(i/3)%5)
}

// soakDB opens a database file read-only with the driver, not with m3eval.
func soakDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// checkClean checks what every trial must leave: a sound file, no import batch or claim left
// behind, no hidden row.
func checkClean(t *testing.T, db *sql.DB, trial int) {
	t.Helper()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("trial %d: integrity_check: %q %v", trial, res, err)
	}
	for _, q := range []string{`SELECT count(*) FROM pragma_foreign_key_check`, `SELECT count(*) FROM import_batches`,
		`SELECT count(*) FROM import_claims`,
		`SELECT (SELECT count(*) FROM turns) - (SELECT count(*) FROM visible_turns)`,
		`SELECT (SELECT count(*) FROM annotations) - (SELECT count(*) FROM visible_annotations)`} {
		if n := count(t, db, q); n != 0 {
			t.Fatalf("trial %d: %s: %d", trial, q, n)
		}
	}
}

var importLine = regexp.MustCompile(`(\d+) turns new, (\d+) unchanged, (\d+) replaced; (\d+) labels new, (\d+) unchanged, (\d+) replaced`)

// TestSoakConcurrentImports: two to four imports of overlapping windows of one pool of turns,
// some files broken at a random line, started at random offsets, 200 trials
// (M3EVAL_SOAK_TRIALS to change). Afterwards every label an import reported stored is
// there, no turn only a failed import had is visible, and the file is sound.
func TestSoakConcurrentImports(t *testing.T) {
	soak(t)
	trials := soakTrials(200)
	bin := binary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(24, seed))
	const pool = 4000
	var imports, failedImports, labelsChecked int
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "soak.db")
		n := 2 + rng.IntN(3)
		type file struct {
			path     string
			from, to int  // the window of the pool
			broken   bool // a bad line somewhere
			delay    time.Duration
			out      []byte
			err      error
		}
		files := make([]file, n)
		for k := range files {
			f := &files[k]
			f.from = rng.IntN(pool / 2)
			f.to = min(pool, f.from+500+rng.IntN(pool/2))
			f.broken = rng.IntN(3) == 0
			f.delay = time.Duration(rng.IntN(400)) * time.Millisecond
			f.path = filepath.Join(dir, fmt.Sprintf("f%d.jsonl", k))
			var b bytes.Buffer
			bad := f.from + rng.IntN(f.to-f.from)
			for i := f.from; i < f.to; i++ {
				if f.broken && i == bad {
					b.WriteString("{\"sample_id\": broken\n")
				}
				b.WriteString(poolTurn(i, fmt.Sprintf("a%d", k)) + "\n")
			}
			if err := os.WriteFile(f.path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for k := range files {
			wg.Add(1)
			go func(f *file) {
				defer wg.Done()
				time.Sleep(f.delay)
				f.out, f.err = exec.Command(bin, "--db", dbPath, "import", f.path).CombinedOutput()
			}(&files[k])
		}
		wg.Wait()
		ok := map[int]bool{} // pool turns of the files that were imported
		db := soakDB(t, dbPath)
		for k := range files {
			f := &files[k]
			imports++
			if f.broken {
				failedImports++
				if f.err == nil || bytes.Contains(f.out, []byte("panic")) || !bytes.Contains(f.out, []byte("f"+strconv.Itoa(k)+".jsonl:")) {
					t.Fatalf("trial %d: the broken file %d did not fail with a line naming it: %v\n%s", trial, k, f.err, f.out)
				}
				continue
			}
			if f.err != nil {
				t.Fatalf("trial %d: import %d failed: %v\n%s", trial, k, f.err, f.out)
			}
			m := importLine.FindSubmatch(f.out)
			if m == nil {
				t.Fatalf("trial %d: import %d said %s", trial, k, f.out)
			}
			labels := 0
			for _, g := range m[4:] {
				v, _ := strconv.Atoi(string(g))
				labels += v
			}
			if want := 2 * (f.to - f.from); labels != want {
				t.Fatalf("trial %d: import %d reported %d labels, its file has %d", trial, k, labels, want)
			}
			for i := f.from; i < f.to; i++ {
				ok[i] = true
			}
			// Every label of its own annotator, and its shared one on each of its turns.
			own := count(t, db, `SELECT count(*) FROM visible_annotations a JOIN annotators an ON an.id = a.annotator_id WHERE an.name = ?`, fmt.Sprintf("a%d", k))
			if own != f.to-f.from {
				t.Fatalf("trial %d: import %d reported %d labels of a%d stored, %d are there\n%s", trial, k, f.to-f.from, k, own, f.out)
			}
			labelsChecked += own
		}
		if store, want := count(t, db, `SELECT count(*) FROM visible_turns`), len(ok); store != want {
			t.Fatalf("trial %d: %d turns visible, the files that were imported have %d", trial, store, want)
		}
		shared := count(t, db, `SELECT count(*) FROM visible_annotations a JOIN annotators an ON an.id = a.annotator_id WHERE an.name = 'shared'`)
		if shared != len(ok) {
			t.Fatalf("trial %d: %d shared labels visible, want %d", trial, shared, len(ok))
		}
		labelsChecked += shared
		for k := range files {
			if files[k].broken {
				name := fmt.Sprintf("a%d", k)
				if n := count(t, db, `SELECT count(*) FROM annotations a JOIN annotators an ON an.id = a.annotator_id WHERE an.name = ?`, name); n != 0 {
					t.Fatalf("trial %d: %d labels of the failed import %d are in the file", trial, n, k)
				}
			}
		}
		checkClean(t, db, trial)
		db.Close()
	}
	t.Logf("concurrent imports soak: %d trials, %d imports (%d of broken files), %d labels checked, 0 lost", trials, imports, failedImports, labelsChecked)
}

// faultBase is a database with a few turns and labels that every fault trial starts from,
// and its counts of visible turns and labels.
func faultBase(t *testing.T, bin, dir string) (path string, turns, labels int) {
	t.Helper()
	src := filepath.Join(dir, "base.jsonl")
	var b bytes.Buffer
	for i := 0; i < 20; i++ {
		b.WriteString(poolTurn(90000+i, "base") + "\n")
	}
	if err := os.WriteFile(src, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "base.db")
	if out, err := exec.Command(bin, "--db", path, "import", src).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	return path, 20, 40
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkFault checks the end of a process a fault stopped: the documented exit status, one
// line on standard error and no panic, and, unless it completed, nothing of it visible.
func checkFault(t *testing.T, trial int, what string, err error, out []byte, wantCode int, dbPath string, turns, labels, scores int) bool {
	t.Helper()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			// The signal came before the Go runtime had set up its handler (the process had
			// just started and written nothing): killed by SIGINT, which a shell shows as 130.
			code, out = 130, []byte("m3eval: (killed by SIGINT at start)")
		}
	} else if err != nil {
		t.Fatalf("trial %d (%s): %v", trial, what, err)
	}
	if bytes.Contains(out, []byte("panic")) || bytes.Contains(out, []byte("goroutine ")) {
		t.Fatalf("trial %d (%s): a panic:\n%s", trial, what, out)
	}
	if code == 0 {
		return false // done before the fault
	}
	if code != wantCode {
		t.Fatalf("trial %d (%s): exit %d, want %d\n%s", trial, what, code, wantCode, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "m3eval: ") || strings.Count(string(out), "m3eval: ") != 1 {
		t.Fatalf("trial %d (%s): want one line m3eval: ..., got\n%s", trial, what, out)
	}
	db := soakDB(t, dbPath)
	defer db.Close()
	if n := count(t, db, `SELECT count(*) FROM visible_turns`); n != turns {
		t.Fatalf("trial %d (%s): %d turns visible after the fault, want %d\n%s", trial, what, n, turns, out)
	}
	if n := count(t, db, `SELECT count(*) FROM visible_annotations`); n != labels {
		t.Fatalf("trial %d (%s): %d labels visible after the fault, want %d\n%s", trial, what, n, labels, out)
	}
	if n := count(t, db, `SELECT count(*) FROM judge_scores WHERE import_batch IS NULL OR import_batch NOT IN (SELECT id FROM import_batches)`); n != scores {
		t.Fatalf("trial %d (%s): %d judge scores visible after the fault, want %d\n%s", trial, what, n, scores, out)
	}
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("trial %d (%s): integrity_check: %q %v", trial, what, res, err)
	}
	return true
}

// TestSoakImportFaults interrupts imports (new turns with labels, --replace of changed
// ones), judge runs and import-scores with SIGINT at random moments, and runs imports on a
// tmpfs too small for them, 100 trials each (M3EVAL_SOAK_TRIALS to change; the disk-full
// half needs root to mount). Each ends in exit 130 or 1 with one line, no panic, nothing of
// it visible.
func TestSoakImportFaults(t *testing.T) {
	soak(t)
	trials := soakTrials(100)
	bin := binary(t)
	dir := t.TempDir()
	base, baseTurns, baseLabels := faultBase(t, bin, dir)
	const n = 30000
	var fresh, changed, scores bytes.Buffer
	scores.WriteString("sample_id,correctness,overall_quality\n")
	for i := 0; i < n; i++ {
		fresh.WriteString(poolTurn(i, "big") + "\n")
		changed.WriteString(strings.Replace(poolTurn(i, "big"), "It rained.", "It snowed.", 1) + "\n")
		fmt.Fprintf(&scores, "p%05d_turn_%d,%d,%d\n", i/5, i%5+1, 1+i%5, 1+i%3)
	}
	bigFile, changedFile, scoresFile := filepath.Join(dir, "big.jsonl"), filepath.Join(dir, "changed.jsonl"), filepath.Join(dir, "scores.csv")
	for name, b := range map[string]*bytes.Buffer{bigFile: &fresh, changedFile: &changed, scoresFile: &scores} {
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The --replace, judge and import-scores trials start from the base with big.jsonl in.
	withBig := filepath.Join(dir, "with-big.db")
	copyFile(t, base, withBig)
	if out, err := exec.Command(bin, "--db", withBig, "import", bigFile).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(3, seed))
	interrupted, completed := map[string]int{}, map[string]int{}
	for trial := 0; trial < trials; trial++ {
		db := filepath.Join(t.TempDir(), "f.db")
		args, turns, labels, what := []string{"import", bigFile}, baseTurns, baseLabels, "import"
		switch trial % 4 {
		case 0:
			copyFile(t, base, db)
		case 1:
			args, what = []string{"import", "--replace", changedFile}, "import --replace"
		case 2:
			args, what = []string{"judge"}, "judge"
		case 3:
			args, what = []string{"import-scores", "--judge", "gpt", scoresFile}, "import-scores"
		}
		if trial%4 != 0 {
			copyFile(t, withBig, db)
			turns, labels = baseTurns+n, baseLabels+2*n
		}
		var stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Millisecond)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		if checkFault(t, trial, what+" + SIGINT", err, stderr.Bytes(), 130, db, turns, labels, 0) {
			interrupted[what]++
		} else {
			completed[what]++
		}
	}
	t.Logf("SIGINT: %d trials; interrupted (exit 130, nothing visible): %v; completed first: %v; 0 panics", trials, interrupted, completed)

	mnt := filepath.Join(dir, "tmpfs")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Logf("disk full: no tmpfs (%v: %s); skipped", err, out)
		return
	}
	exec.Command("umount", mnt).Run()
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	fi, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	full := 0
	for trial := 0; trial < trials; trial++ {
		size := int(fi.Size()/1024) + 64 + rng.IntN(12*1024) // KB: the base fits, big.jsonl does not
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dk", size), "tmpfs", mnt).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v: %s", err, out)
		}
		db := filepath.Join(mnt, "f.db")
		copyFile(t, base, db)
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "--db", db, "import", bigFile)
		cmd.Stderr = &stderr
		err := cmd.Run()
		if checkFault(t, trial, fmt.Sprintf("import on a %d KB tmpfs", size), err, stderr.Bytes(), 1, db, baseTurns, baseLabels, 0) {
			full++
			if !bytes.Contains(stderr.Bytes(), []byte("full")) {
				t.Errorf("trial %d: the error does not say the disk is full: %s", trial, stderr.Bytes())
			}
		}
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount: %v: %s", err, out)
		}
	}
	t.Logf("disk full: %d trials, %d failed with exit 1 and nothing visible, %d fitted, 0 panics", trials, full, trials-full)
}
