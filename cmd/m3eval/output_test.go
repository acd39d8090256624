package main

import (
	"bytes"
	"github.com/m3bench/m3eval/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// labeledDB imports testkit.LabeledFixture for alice into dir/team.db.
func labeledDB(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "labeled.json")
	if err := os.WriteFile(src, []byte(testkit.LabeledFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "team.db")
	mustRun(t, "--db", db, "import", "--annotator", "alice", src)
	return db
}

// TestOutputNeverReplacesTheDatabase: `export -o team.db` (a typo for team.json) must leave
// the database alone, however the path is spelt, and so must -o of its -wal and -shm.
func TestOutputNeverReplacesTheDatabase(t *testing.T) {
	dir := t.TempDir()
	db := labeledDB(t, dir)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	before, _ := os.ReadFile(db)
	for _, o := range []string{"team.db", "./sub/../team.db", "team.db-wal", "team.db-shm"} {
		r := runBin(t, dir, nil, "--db", "team.db", "export", "-o", o)
		if r.code != 1 || !strings.Contains(r.stderr, "refusing to write over it") {
			t.Errorf("export -o %s: exit %d, %q", o, r.code, r.stderr)
		}
	}
	// Another database is no output file either.
	other := filepath.Join(dir, "other.db")
	mustRun(t, "--db", other, "import", "--demo")
	if r := runBin(t, dir, nil, "--db", "team.db", "export", "-o", "other.db"); r.code != 1 || !strings.Contains(r.stderr, "is an SQLite database") {
		t.Errorf("export -o other.db: exit %d, %q", r.code, r.stderr)
	}
	// The same guard covers the -o of score (any command with --db).
	if r := runBin(t, dir, nil, "--db", "team.db", "score", "-o", "team.db"); r.code != 1 || !strings.Contains(r.stderr, "refusing to write over it") {
		t.Errorf("score -o team.db: exit %d, %q", r.code, r.stderr)
	}
	after, _ := os.ReadFile(db)
	if !bytes.Equal(before, after) {
		t.Fatal("the database file changed")
	}
	if out := mustRun(t, "--db", db, "status"); !strings.Contains(out, "4 items") {
		t.Fatalf("status after the refused exports: %s", out)
	}
}

// TestOutputStreamsIntoNonRegularFiles: a FIFO and a character device stay what they are and
// receive the output, as with a shell's redirection.
func TestOutputStreamsIntoNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	labeledDB(t, dir)
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Opened read-write, the test's end never blocks and never sees EOF; a deadline ends the
	// read when the output went elsewhere (today's bug: the FIFO replaced by a regular file).
	rd, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	r := runBin(t, dir, nil, "--db", "team.db", "export", "--format", "jsonl", "-o", "pipe")
	if r.code != 0 {
		t.Fatalf("export -o fifo: %d %s", r.code, r.stderr)
	}
	var b []byte
	rd.SetReadDeadline(time.Now().Add(3 * time.Second))
	for strings.Count(string(b), "\n") < 3 {
		buf := make([]byte, 1<<16)
		n, err := rd.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			break
		}
	}
	if strings.Count(string(b), "\n") != 3 {
		t.Errorf("the FIFO's reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}

	// A null device of our own (the system's /dev/null must not be put at risk by a test).
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unixMkdev(1, 3))); err != nil {
		t.Skipf("mknod: %v", err)
	}
	os.Chmod(null, 0o666)
	if r := runBin(t, dir, nil, "--db", "team.db", "export", "-o", "null"); r.code != 0 {
		t.Fatalf("export -o null: %d %s", r.code, r.stderr)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 || fi.Mode().Perm() != 0o666 {
		t.Errorf("the null device became %v (%v)", fi.Mode(), err)
	}
	// -o /dev/stdout when standard output is a pipe: the output reaches the pipe. The test
	// uses a link of its own, shaped as /dev/stdout is: today's bug replaced the link itself,
	// and a regression must not break the machine's /dev/stdout.
	os.Symlink("/proc/self/fd/1", filepath.Join(dir, "stdout"))
	if r := runBin(t, dir, nil, "--db", "team.db", "export", "--format", "jsonl", "-o", "stdout"); r.code != 0 || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("export -o stdout: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "stdout")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the stdout link was replaced")
	}
	// Standard output redirected to a file: -o of that same file writes through the shell's
	// descriptor, which keeps its place.
	if r := runShell(t, dir, `"$M3EVAL" --db team.db export --format jsonl -o stdout > redirected.jsonl`); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "redirected.jsonl")); strings.Count(string(b), "\n") != 3 {
		t.Errorf("redirected.jsonl = %q", b)
	}
}

func unixMkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor)
}

// TestOutputModeFollowsTheUmask: a new file gets 0666 &^ umask (readable by colleagues under
// the usual 022); a replaced file keeps its mode.
func TestOutputModeFollowsTheUmask(t *testing.T) {
	dir := t.TempDir()
	labeledDB(t, dir)
	for umask, want := range map[string]os.FileMode{"022": 0o644, "027": 0o640, "077": 0o600} {
		name := "out" + umask + ".json"
		r := runShell(t, dir, "umask "+umask+" && exec \"$M3EVAL\" --db team.db export -o "+name)
		if r.code != 0 {
			t.Fatalf("%d %s", r.code, r.stderr)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("umask %s: mode %v, want %v (%v)", umask, fi.Mode().Perm(), want, err)
		}
	}
	kept := filepath.Join(dir, "kept.json")
	os.WriteFile(kept, []byte("old"), 0o664)
	os.Chmod(kept, 0o664)
	if r := runShell(t, dir, "umask 077 && exec \"$M3EVAL\" --db team.db export -o kept.json"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if fi, _ := os.Stat(kept); fi.Mode().Perm() != 0o664 {
		t.Errorf("a replaced file's mode became %v", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(kept); !bytes.HasPrefix(b, []byte("[\n")) {
		t.Errorf("kept.json = %q", b)
	}
	// A failed output leaves no temporary file behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestOutputThroughSymlinkReplacesTheTarget: -o through a link writes the file it points at,
// and the link stays a link.
func TestOutputThroughSymlinkReplacesTheTarget(t *testing.T) {
	dir := t.TempDir()
	labeledDB(t, dir)
	os.WriteFile(filepath.Join(dir, "real.json"), nil, 0o644)
	os.Symlink("real.json", filepath.Join(dir, "link.json"))
	if r := runBin(t, dir, nil, "--db", "team.db", "export", "-o", "link.json"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "link.json")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "real.json")); !bytes.HasPrefix(b, []byte("[\n")) {
		t.Errorf("real.json = %q", b)
	}
	// A link to the database is the database.
	os.Symlink("team.db", filepath.Join(dir, "db-link"))
	if r := runBin(t, dir, nil, "--db", "team.db", "export", "-o", "db-link"); r.code != 1 {
		t.Errorf("export -o link-to-db: %d %s", r.code, r.stderr)
	}
}

// TestReadOnlyCommandsOnAReadOnlyDatabase: status, export and score read a database that
// cannot be written, (1) as an unprivileged user (nobody, via setpriv) in a directory only
// root may write, (2) as root on a read-only bind mount in a private mount namespace
// (unshare): root's permission checks pass, only the file system refuses.
func TestReadOnlyCommandsOnAReadOnlyDatabase(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	labeledDB(t, dir)
	for _, d := range []string{dir, filepath.Dir(dir), filepath.Dir(bin)} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(filepath.Join(dir, "team.db"), 0o644)
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if _, err := os.Stat(filepath.Join(dir, "team.db-wal")); err == nil {
		t.Fatal("the fixture left a WAL")
	}
	cmds := []string{"status", "export --include-drafts", "export --format csv", "score --format json"}
	type way struct{ name, prefix string }
	ways := []way{{"nobody", "setpriv --reuid=65534 --regid=65534 --clear-groups "}}
	if r := runShell(t, dir, "unshare -m --propagation private true"); r.code == 0 {
		ways = append(ways, way{"ro-mount", ""})
	} else {
		t.Logf("no mount namespace here (%s): only the unprivileged-user case runs", r.stderr)
	}
	for _, w := range ways {
		for _, c := range cmds {
			script := w.prefix + `"$M3EVAL" --db team.db ` + c
			if w.name == "ro-mount" {
				script = `unshare -m --propagation private sh -c 'mount -o bind,ro . . && cd . && touch probe 2>/dev/null && echo writable; ` +
					`cd "$PWD" && "$M3EVAL" --db team.db ` + c + `'`
			}
			r := runShell(t, dir, script)
			if r.code != 0 || strings.Contains(r.stdout, "writable") {
				t.Errorf("%s: %s: exit %d\n%s%s", w.name, c, r.code, r.stdout, r.stderr)
				continue
			}
			if c == "status" && !strings.Contains(r.stdout, "4 items") {
				t.Errorf("%s: status said %q", w.name, r.stdout)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // labeled.json, team.db
		t.Errorf("the read-only directory gained files: %v", entries)
	}
}
