package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestWatchChangesAcrossStores: a store that watches a PostgreSQL campaign learns of a write
// another store (another process, another host) commits to it, and its channel closes when
// the watch ends. On SQLite there is nothing to watch: the channel is nil.
func TestWatchChangesAcrossStores(t *testing.T) {
	sq := storetest.Open(t, filepath.Join(t.TempDir(), "m3eval.db"), store.Options{})
	if ch := sq.WatchChanges(context.Background()); ch != nil {
		t.Error("WatchChanges on SQLite is not nil")
	}

	path := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	watcher := storetest.Open(t, path, store.Options{Durable: true})
	writer := storetest.Open(t, path, store.Options{Durable: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := watcher.WatchChanges(ctx)

	// The watch starts listening in the background: write until a notification comes (a write
	// before the LISTEN is not announced), each with its own rubric version.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		if err := writer.RememberRubric(ctx, fmt.Sprintf("v%d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
			if time.Now().After(deadline) {
				t.Fatal("no notification of the other store's writes within 30 s")
			}
			continue
		}
		break
	}
	// Listening now: the next write is announced too.
	if err := writer.RememberRubric(ctx, "after", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("a write while listening was not announced within 30 s")
	}
	cancel()
	for range ch { // drain what is pending; the channel must close
	}
}
