package store

import (
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
// small file of its own while it waits, and the import, before each chunk, lets such writers
// in first (importPriorityMax at most).
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
		return func() {}
	}
	return func() { f.Close() } // closing releases the flock
}

// letWaitersFirst returns once no writer waits for the lock, or after importPriorityMax.
func (s *Store) letWaitersFirst() {
	name, err := waitersFile(s.path)
	if err != nil {
		return
	}
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	deadline := time.Now().Add(importPriorityMax)
	for time.Now().Before(deadline) {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return
		}
		time.Sleep(lockPoll)
	}
}
