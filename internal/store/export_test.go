package store

import (
	"strconv"
	"time"
)

// SetPriorityMax sets how long s's bulk writers defer to waiting short writers per chunk.
func SetPriorityMax(s *Store, d time.Duration) { s.priorityMax = d }

// WritersWaiting reports whether a short writer waits for the lock of s's database, as a bulk
// writer sees it.
func WritersWaiting(s *Store) bool {
	p := s.probeWaiters()
	defer p.close()
	return p.deferTo()
}

// SetChunkTime sets how long s's bulk writers hold the lock at most.
func SetChunkTime(s *Store, d time.Duration) { s.chunkTime = d }

// WriteLockSQL is the statement that takes s's write lock on PostgreSQL (the campaign's
// advisory lock) in another session's transaction, for tests that hold it.
func WriteLockSQL(s *Store) string {
	return "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(s.d.lockKey, 10) + ")"
}

// SetExclusiveSaves makes s's saves on PostgreSQL take the campaign's lock alone, as every
// other write does (the baseline of BenchmarkConcurrentSavesPostgres).
func SetExclusiveSaves(s *Store, on bool) { s.d.exclusiveSaves = on }

// Setting reads a run-time setting of s's write pool's sessions (PostgreSQL's SHOW), or of
// its read pool when read is true.
func Setting(s *Store, name string, read bool) (string, error) {
	db := s.wdb
	if read {
		db = s.db
	}
	var v string
	err := db.QueryRow("SHOW " + name).Scan(&v)
	return v, err
}
