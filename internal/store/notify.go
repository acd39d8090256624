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
// only reading again on a timer: every write transaction sends a notification on the
// campaign's channel, which PostgreSQL delivers when (and only if) it commits. On SQLite there
// is nothing to listen to; the screens keep their timers.

// changeChannel is the campaign's notification channel: one per schema, named from the same
// hash as its write lock (a schema's name may be longer than a channel's 63 bytes).
func (d dialect) changeChannel() string {
	return fmt.Sprintf("m3eval_changes_%016x", uint64(d.lockKey))
}

// notifyChange queues, inside a write transaction just begun, the campaign's notification:
// sent to the listeners at commit, dropped on rollback. Nothing on SQLite.
func (s *Store) notifyChange(ctx context.Context, q querier) error {
	if !s.d.pg {
		return nil
	}
	_, err := q.ExecContext(ctx, `SELECT pg_notify(?, '')`, s.d.changeChannel())
	return err
}

// watchRetry is how long WatchChanges waits before it listens again after losing its
// connection (the server restarted, the network dropped).
const watchRetry = time.Second

// WatchChanges returns a channel that receives soon after any process commits a write to the
// campaign, this one included, until ctx ends (then it is closed). Notifications that come
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
