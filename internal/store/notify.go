package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// On PostgreSQL several processes, on several hosts, write one campaign. A screen that shows
// the campaign (serve's status screen) learns of their writes by LISTEN/NOTIFY instead of
// only reading again on a timer. On SQLite there is nothing to listen to; the screens keep
// their timers.
//
// The notification is not sent inside the write's transaction: PostgreSQL serializes the
// commits of all transactions that NOTIFY in a database (a lock held until after the commit
// is on disk), which would undo annotators' saves running side by side, and one per save
// (250 a second in the load test) is far more than a screen reads. Each process sends at most
// one per notifyDelay instead, after the writes that began meanwhile.

// changeChannel is the campaign's notification channel: one per schema, named from the same
// hash as its write lock (a schema's name may be longer than a channel's 63 bytes).
func (d dialect) changeChannel() string {
	return fmt.Sprintf("m3eval_changes_%016x", uint64(d.lockKey))
}

// notifyDelay is how long after a write begins its notification is sent: time for the write
// to commit (a save takes milliseconds), and the writes begun meanwhile share it. A write
// still uncommitted then is announced by the next one, or seen on the screens' timer.
const notifyDelay = 100 * time.Millisecond

// notifyChange announces, notifyDelay from now, that the campaign changed; a write that
// begins while an announcement is pending joins it. Nothing on SQLite. A notification that
// cannot be sent is dropped: it only hastens a screen that reads on its timer anyway.
func (s *Store) notifyChange() {
	if !s.d.pg || !s.notifying.CompareAndSwap(false, true) {
		return
	}
	go func() {
		time.Sleep(notifyDelay)
		s.notifying.Store(false) // a write that begins from now on sends its own
		ctx, cancel := context.WithTimeout(context.Background(), notifySendTimeout)
		defer cancel()
		_, _ = s.db.ExecContext(ctx, `SELECT pg_notify(?, '')`, s.d.changeChannel())
	}()
}

// notifySendTimeout bounds the sending of one notification (a server that stopped answering).
const notifySendTimeout = 5 * time.Second

// watchRetry is how long WatchChanges waits before it listens again after losing its
// connection (the server restarted, the network dropped).
const watchRetry = time.Second

// WatchChanges returns a channel that receives soon after any process commits a write to the
// campaign, this one included. It is closed when ctx ends. Notifications that come
// while one is pending are merged into it: a receiver reads the campaign once for all of
// them. When the connection it listens on is lost, it tells a change too (one may have been
// missed) and listens again. On SQLite it returns nil, which never receives: callers keep
// reading on their timer, as they must anyway for writes no notification covers (imports).
func (s *Store) WatchChanges(ctx context.Context) <-chan struct{} {
	if !s.d.pg {
		return nil
	}
	ch := make(chan struct{}, 1)
	tell := func() {
		select {
		case ch <- struct{}{}:
		default: // one pending already stands for this one
		}
	}
	go func() {
		defer close(ch)
		for {
			s.listen(ctx, tell)
			if ctx.Err() != nil {
				return
			}
			tell()
			if sleepCtx(ctx, watchRetry) != nil {
				return
			}
		}
	}()
	return ch
}

// listen holds one connection of the read pool, LISTENs on the campaign's channel and calls
// tell for each notification, until the context ends or the connection fails. The
// connection is then discarded, never handed back to the pool still listening.
func (s *Store) listen(ctx context.Context, tell func()) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		pc := pgxConn(dc)
		if pc == nil {
			return driver.ErrBadConn
		}
		if _, err := pc.Exec(ctx, `LISTEN `+quoteIdent(s.d.changeChannel())); err != nil {
			return errors.Join(driver.ErrBadConn, err)
		}
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				return errors.Join(driver.ErrBadConn, err)
			}
			tell()
		}
	})
}
