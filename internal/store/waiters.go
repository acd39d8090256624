package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Writers that wait for the lock go before an import's next chunk. SQLite has no queue: the
// lock goes to whoever asks first once it is free, and an import asks again within
// milliseconds of its last commit. On a loaded machine an annotator's process is often not
// scheduled in that moment, and the load test measured waits of 500 ms and more (p99) for
// a save during a 1,000,000-line import. So a waiting writer holds a shared flock(2) on a
// small file of its own while it waits, and a bulk writer (import, judge, import-scores), each
// time it would try the lock for its next chunk, lets such writers in first (importPriorityMax
// at most per chunk). Bulk writers do not register themselves: with several of them, each
// would make the others wait for it, and no one would go first.
//
// The file lives in the temporary directory, named after the database's device and inode,
// not beside the database: SQLite's own files must not be opened by anything else (closing
// any descriptor of a file drops the process's POSIX locks on it), and no stray file is left
// in the user's directory. Where flock does not work (another machine over NFS, a private
// /tmp), writers simply compete as before.

// importPriorityMax bounds how long an import waits for other writers before a chunk, so that
// a stuck waiter cannot stop it.
const importPriorityMax = 250 * time.Millisecond

// waitersFile is the file of the writers waiting for the database at path.
func waitersFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("no inode for %s", path)
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("m3eval-writers-%d-%d", st.Dev, st.Ino)), nil
}

// waiting marks this process as waiting for the write lock until the returned func is called.
// It returns nil when a bulk writer's probe holds the file for that moment (try again), and a
// no-op where flock does not work.
func (s *Store) waiting() func() {
	name, err := waitersFile(s.path)
	if err != nil {
		return func() {}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o666) // read-only: flock needs no more, and other users can open it too
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // a bulk writer is probing (deferTo): a moment later it is free
		}
		return func() {}
	}
	return func() { f.Close() } // closing releases the flock
}

// waitersProbe is how a bulk writer sees whether short writers wait, while it waits for one
// chunk's lock. A nil probe (flock unavailable) sees none.
type waitersProbe struct {
	f     *os.File
	until time.Time // after this the bulk writer stops deferring, so a stuck waiter cannot stop it
}

// probeWaiters opens the probe for one chunk's wait.
func (s *Store) probeWaiters() *waitersProbe {
	name, err := waitersFile(s.path)
	if err != nil {
		return nil
	}
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil
	}
	return &waitersProbe{f: f, until: time.Now().Add(s.priorityMax)}
}

// deferTo reports whether a short writer waits and the bulk writer should not try the lock
// now. The exclusive flock succeeds only while nobody holds the shared one; it is released at
// once, so short writers are kept out of the file for two system calls at most.
func (p *waitersProbe) deferTo() bool {
	if p == nil || time.Now().After(p.until) {
		return false
	}
	return p.waiting()
}

// waiting reports whether a short writer waits for the lock now.
func (p *waitersProbe) waiting() bool {
	if p == nil {
		return false
	}
	fd := int(p.f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// EWOULDBLOCK: a waiter holds it, or another bulk writer probes this instant (then
		// deferring costs one lockPoll). Any other error: flock does not work here.
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(fd, syscall.LOCK_UN)
	return false
}

// close closes the probe's file.
func (p *waitersProbe) close() {
	if p != nil {
		p.f.Close()
	}
}
