package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/session"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestAnnotatorsSaveSideBySide: several annotators, each on a store of their own (as on
// several serve hosts), save and undo at once while an import runs in chunks; every save
// and undo lands, each annotation's undo batches are 1, 2, 3, … with no number taken twice,
// and the import completes. On PostgreSQL the annotators' saves run side by side (beginSave).
func TestAnnotatorsSaveSideBySide(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead", "follow_up", "update"})
	const annotators, rounds = 6, 12
	bulk := storetest.Open(t, path, store.Options{})
	im, err := bulk.BeginImport(ctx, store.ImportOptions{Source: "big.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	stop := make(chan struct{})
	imported := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				imported <- im.Commit()
				return
			default:
			}
			tr := turn(fmt.Sprintf("bulk%05d", i), 1, "initial")
			if _, _, err := im.PutTurn(&tr); err != nil {
				imported <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, annotators)
	for a := 0; a < annotators; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := storetest.Open(t, path, store.Options{Durable: true, LockWait: time.Minute})
			q, err := st.OpenQueue(ctx, fmt.Sprintf("ann%d", a), nil)
			if err != nil {
				errs <- err
				return
			}
			ref, _, err := q.First(ctx, false)
			if err != nil {
				errs <- err
				return
			}
			e := session.Edit{TurnID: ref.TurnID, RubricVersion: "v"}
			for r := 0; r < rounds; r++ {
				v := strconv.Itoa(r%5 + 1)
				if _, err := q.SetValue(ctx, e, "correctness", &v); err != nil {
					errs <- fmt.Errorf("ann%d save %d: %w", a, r, err)
					return
				}
				if r%4 == 3 { // undo the last one: the value goes back to the one before
					if _, _, ok, err := q.Undo(ctx, e); err != nil || !ok {
						errs <- fmt.Errorf("ann%d undo %d: %v %v", a, r, ok, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-imported; err != nil {
		t.Fatalf("the import beside the saves: %v", err)
	}
	db := storetest.RawDB(t, path, false)
	rows, err := db.Query(`SELECT an.name, v.value, (SELECT count(DISTINCT c.batch) FROM changes c WHERE c.annotation_id = a.id),
		(SELECT max(c.batch) FROM changes c WHERE c.annotation_id = a.id), (SELECT count(*) FROM changes c WHERE c.annotation_id = a.id)
		FROM annotations a JOIN annotators an ON an.id = a.annotator_id JOIN annotation_values v ON v.annotation_id = a.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	// Rounds 0..11 with undos after 3, 7 and 11: the last value standing is round 10's.
	want := strconv.Itoa(10%5 + 1)
	n := 0
	for rows.Next() {
		var name, value string
		var batches, maxBatch, changes int
		if err := rows.Scan(&name, &value, &batches, &maxBatch, &changes); err != nil {
			t.Fatal(err)
		}
		n++
		if value != want || batches != rounds || maxBatch != rounds || changes != rounds {
			t.Errorf("%s: value %s (want %s), %d batches up to %d, %d changes (want %d each)", name, value, want, batches, maxBatch, changes, rounds)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != annotators {
		t.Errorf("%d annotations, want %d", n, annotators)
	}
}

// BenchmarkConcurrentSavesPostgres: 25 annotators save at once on one store (as the sessions of
// one serve host), 40 durable saves each, with their saves side by side (beginSave) and, as
// the baseline, one at a time under the campaign's lock. Reports saves/s and the p99 of a save.
func BenchmarkConcurrentSavesPostgres(b *testing.B) {
	dsn := storetest.PostgresPath(b, storetest.RequirePostgres(b))
	fillTurnsPostgres(b, dsn, 10_000)
	const annotators, saves = 25, 40
	for _, mode := range []string{"side-by-side", "one-at-a-time"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			s, err := store.Open(ctx, dsn, store.Options{Durable: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			store.SetExclusiveSaves(s, mode == "one-at-a-time")
			for i := 0; i < b.N; i++ {
				var mu sync.Mutex
				var took []time.Duration
				var wg sync.WaitGroup
				start := time.Now()
				for a := 0; a < annotators; a++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						q, err := s.OpenQueue(ctx, fmt.Sprintf("%s-%d-%d", mode, i, a), nil)
						if err != nil {
							b.Error(err)
							return
						}
						ref, _, err := q.First(ctx, true)
						if err != nil {
							b.Error(err)
							return
						}
						for j := 0; j < saves; j++ {
							v := strconv.Itoa(j%5 + 1)
							t0 := time.Now()
							if _, err := q.SetValue(ctx, session.Edit{TurnID: ref.TurnID, RubricVersion: "bench"}, "correctness", &v); err != nil {
								b.Error(err)
								return
							}
							mu.Lock()
							took = append(took, time.Since(t0))
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				el := time.Since(start)
				slices.Sort(took)
				b.ReportMetric(float64(len(took))/el.Seconds(), "saves/s")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "µs-p99-save")
			}
		})
	}
}
