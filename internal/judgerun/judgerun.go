// Package judgerun runs the rule-based judge (internal/judge) over an m3eval database: m3eval
// judge stores its scores through the same store path and rubric checks as import-scores,
// m3eval judge --explain shows one turn's verdict, and m3eval score --metrics computes the
// action-space metrics. The judging is in internal/judge, the SQL in internal/store; this
// package only moves turns and verdicts between them. Request holds m3eval judge's flags,
// checks them and runs the command.
package judgerun

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// GCPercent is the GOGC m3eval judge runs with: the judge allocates a few short-lived
// strings and maps per turn, and a larger heap target cuts the collector's share of a
// million-turn run (BenchmarkJudge1M uses it too).
const GCPercent = 400

// Options of a judge run.
type Options struct {
	Name    string           // the judge's name in the database ("rules")
	Filter  store.TurnFilter // the turns to score; nil: every turn
	Replace bool             // re-score scores made with other rules, and changed values
}

// Counts of a run, by outcome of the stored scores.
type Counts struct {
	Turns                         int
	Inserted, Unchanged, Replaced int
	Version                       string
}

// String is the summary line m3eval judge prints.
func (c Counts) String() string {
	return fmt.Sprintf("%d turns judged with rules %s: %d scores new, %d unchanged, %d replaced",
		c.Turns, c.Version, c.Inserted, c.Unchanged, c.Replaced)
}

// episodeJob is one episode to judge, its turns copied out of the store's reused slices.
type episodeJob struct {
	turns  []dataset.Turn
	ids    []int64
	chosen []bool
	out    []judge.Verdict
	err    error
	done   chan struct{}
}

// Judge scores the chosen turns and stores the scores in one transaction: all or nothing.
// Episodes are judged on every core while one goroutine writes, in episode order.
func Judge(ctx context.Context, s *store.Store, rb *rubric.Rubric, j *judge.Judge, o Options) (Counts, error) {
	c := Counts{Version: j.Rules.Version}
	im, err := s.BeginJudgeRun(ctx, o.Name, j.Rules.Version, j.Rules.Source, o.Replace)
	if err != nil {
		return c, err
	}
	defer im.Rollback()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *episodeJob, 256)
	ordered := make(chan *episodeJob, 256)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				job.out, job.err = j.Episode(job.turns)
				close(job.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(jobs)
		readErr <- s.StreamEpisodes(ctx, o.Filter, func(turns []dataset.Turn, ids []int64, chosen []bool) error {
			job := &episodeJob{turns: append([]dataset.Turn(nil), turns...), ids: append([]int64(nil), ids...),
				chosen: append([]bool(nil), chosen...), done: make(chan struct{})}
			select {
			case jobs <- job:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case ordered <- job:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
	}()
	var werr error
	for job := range ordered {
		select {
		case <-job.done:
		default:
			// The judging is behind the writes: end the chunk rather than hold the write lock
			// while waiting (annotators save in that gap).
			if werr == nil {
				werr = im.Flush()
			}
			<-job.done
		}
		if werr != nil {
			continue
		}
		if werr = job.err; werr == nil {
			werr = store1(im, rb, job, &c)
		}
		if werr != nil {
			cancel()
		}
	}
	wg.Wait()
	if err := <-readErr; werr == nil && err != nil {
		werr = err
	}
	if werr != nil {
		return c, werr
	}
	if c.Turns == 0 {
		return c, ErrNoTurns
	}
	return c, im.Commit()
}

// ErrNoTurns says the filter chose no turn.
var ErrNoTurns = errors.New("no turn to judge: import turns first, or loosen --filter")

// store1 writes the verdicts of the chosen turns of one episode, each value checked against
// the rubric for the turn as import-scores checks a judge's values; one call to the store for
// the episode (a first run inserts its scores with one statement).
func store1(im *store.ScoreImporter, rb *rubric.Rubric, job *episodeJob, c *Counts) error {
	rows := make([]store.TurnScores, 0, len(job.out))
	for i, v := range job.out {
		if !job.chosen[i] {
			continue
		}
		turnID, t := job.ids[i], &job.turns[i]
		item := rubric.Item{ActionType: t.ActionType, Turn: t.Turn}
		c.Turns++
		fields, values := make([]string, len(v.Values)), make([]string, len(v.Values))
		for k, x := range v.Values {
			f, ok := rb.Field(x.Field)
			if !ok {
				return fmt.Errorf("sample %s: %s is not a field of the rubric", v.SampleID, x.Field)
			}
			if x.Value != "" {
				if err := f.Check(x.Value, item); err != nil {
					return fmt.Errorf("sample %s: %s = %s (rule %s): %w", v.SampleID, x.Field, x.Value, x.Rule, err)
				}
			}
			fields[k], values[k] = x.Field, x.Value
		}
		rows = append(rows, store.TurnScores{TurnID: turnID, Sample: v.SampleID, Fields: fields, Values: values})
	}
	outs, err := im.PutTurnsScores(rows)
	if err != nil {
		return err
	}
	for i, row := range rows {
		for k, o := range outs[i] {
			switch {
			case row.Values[k] == "" && o == dataset.Unchanged:
			case o == dataset.Inserted:
				c.Inserted++
			case o == dataset.Unchanged:
				c.Unchanged++
			default:
				c.Replaced++
			}
		}
	}
	return nil
}

// Explain judges the episode of one sample and returns that turn's verdict.
func Explain(ctx context.Context, s *store.Store, j *judge.Judge, sampleID string) (*judge.Verdict, error) {
	var found *judge.Verdict
	err := s.StreamEpisodes(ctx, store.TurnFilter{"sample_id": {sampleID}}, func(turns []dataset.Turn, _ []int64, chosen []bool) error {
		vs, err := j.Episode(turns)
		if err != nil {
			return err
		}
		for i := range vs {
			if chosen[i] {
				found = &vs[i]
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: sample %q is not in the database", store.ErrNotFound, sampleID)
	}
	return found, nil
}

// ParseFilter reads KEY=VALUE arguments into a filter; a key given twice takes either value.
func ParseFilter(args []string) (store.TurnFilter, error) {
	f := store.TurnFilter{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--filter %q: give KEY=VALUE (keys: %s)", a, strings.Join(store.TurnFilterKeys(), ", "))
		}
		if !slices.Contains(store.TurnFilterKeys(), k) {
			return nil, fmt.Errorf("--filter %q: unknown key %s (keys: %s)", a, k, strings.Join(store.TurnFilterKeys(), ", "))
		}
		f[k] = append(f[k], v)
	}
	return f, nil
}
