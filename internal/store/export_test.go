package store

import "time"

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
