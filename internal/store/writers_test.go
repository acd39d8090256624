package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestShortWritersWaitTheirTurn: adjudication saves (adjudicate --take) in another process's
// store while an import writes chunk after chunk: each waits for the lock and saves; none
// fails with "database is locked" (issue 24 item 4: 50 of 64 failed, their write ran in a
// deferred transaction on the read pool, which cannot wait once its snapshot is stale).
func TestShortWritersWaitTheirTurn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m3eval.db")
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	id := turnIDs(t, s, "epz_turn_2")[0]
	im, err := s.BeginImport(ctx, store.ImportOptions{Source: "big.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	adj := storetest.Open(t, path, store.Options{Durable: true})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the import: chunks of new turns until the saves are done
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			var ts []dataset.Turn
			for j := range 128 {
				ts = append(ts, turn(fmt.Sprintf("big%05d", i), j+1, "follow_up"))
			}
			if _, _, err := im.PutTurns(ts); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	failed := 0
	for k := 0; k < 64; k++ {
		v := fmt.Sprint(1 + k%5)
		if err := adj.SetFinal(ctx, store.FinalEdit{TurnID: id, Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
			failed++
			t.Logf("save %d: %v", k, err)
		}
	}
	close(done)
	wg.Wait()
	if failed > 0 {
		t.Fatalf("%d of 64 adjudication saves failed during an import", failed)
	}
}
