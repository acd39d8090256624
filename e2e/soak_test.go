package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
)

// The soak and load tests of docs/annotating.md. They take minutes and stay out of
// `make test`: M3EVAL_SOAK=1 runs them.
func soak(t *testing.T) {
	if os.Getenv("M3EVAL_SOAK") == "" {
		t.Skip("a soak test: set M3EVAL_SOAK=1 to run it")
	}
}

// scoreFields are the rubric rows the soak types into on a first turn (the other two are
// fixed to NA there); a score moves the focus to the next, and stays on the last.
var scoreFields = []struct{ label, name string }{
	{"Correctness", "correctness"}, {"Reasoning Completeness", "reasoning_completeness"}, {"Overall Quality", "overall_quality"},
}

// rowValue is a score row of the rubric pane: the English label, the Chinese one, the value
// (· while unset). (It matched no row once the Chinese labels were added, and the soak then
// checked no value at all: the log line's count of values checked shows that.)
var rowValue = regexp.MustCompile(`(Correctness|Reasoning Completeness|Overall Quality) +\p{Han}+ +([1-5·])`)

// TestSoakKillAtRandom types scores at random speed into the annotator and kills it with
// SIGKILL at a random moment, 100 times (M3EVAL_SOAK_TRIALS to change). Whenever the screen
// said "✓ saved" just before the kill, every value it showed must be in the database. On
// SQLite and on PostgreSQL.
func TestSoakKillAtRandom(t *testing.T) {
	soak(t)
	onBackends(t, func(t *testing.T, newDB func(string) string) { soakKillAtRandom(t, newDB("trust.db")) })
}

func soakKillAtRandom(t *testing.T, db string) {
	trials := 100
	if v, err := strconv.Atoi(os.Getenv("M3EVAL_SOAK_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	term := newTerminal(t)
	term.start("keep", "sleep 3600") // the server outlives each killed session
	bin := binary(t)
	demoInto(t, bin, db)
	rng := rand.New(rand.NewPCG(10, uint64(time.Now().UnixNano())))
	var checked, claimed, values, lost int
	for i := 0; i < trials; i++ {
		name := fmt.Sprintf("k%03d", i)
		annotator := "soak" + name
		pid := term.start(name, fmt.Sprintf("%s --db %s annotate --annotator %s", bin, quoteShell(db), annotator))
		term.waitFor(name, "item 1 of 35")
		typed := map[string][]string{}
		n := 1 + rng.IntN(8)
		for k := 0; k < n; k++ {
			v := strconv.Itoa(1 + rng.IntN(5))
			f := scoreFields[min(k, len(scoreFields)-1)].name
			typed[f] = append(typed[f], v)
			term.tmux("send-keys", "-t", name, v)
			if gap := rng.IntN(40); gap > 20 {
				time.Sleep(time.Duration(gap-20) * time.Millisecond)
			}
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		screen := term.screen(name)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		checked++
		// The header, with the save state, is always the first line: a screen without it
		// (drawn off the top) is an error, not a trial to skip (#40).
		if first, _, _ := strings.Cut(screen, "\n"); !strings.HasPrefix(first, "m3eval · ") {
			t.Errorf("trial %d: the header is not on screen\n%s", i, screen)
			continue
		}
		if !strings.Contains(screen, "✓ saved") {
			continue
		}
		claimed++
		got := stored(t, db, annotator)["demo_zh_umbrella_0_turn_1"]
		for _, m := range rowValue.FindAllStringSubmatch(screen, -1) {
			if m[2] == "·" {
				continue
			}
			var field string
			for _, f := range scoreFields {
				if f.label == m[1] {
					field = f.name
				}
			}
			values++
			// The screen's value, or one typed after it that landed between the capture and
			// the kill.
			seq := typed[field]
			j := slices.Index(seq, m[2])
			if j < 0 || !slices.Contains(seq[j:], got[field]) {
				lost++
				t.Errorf("trial %d: the screen showed %s = %s as saved, the database holds %q (typed %v)\n%s",
					i, field, m[2], got[field], seq, screen)
			}
		}
	}
	t.Logf("kill -9 soak: %d trials, %d killed while showing ✓ saved, %d values shown saved checked, %d lost", checked, claimed, values, lost)
	if claimed > 0 && values == 0 {
		t.Errorf("%d screens showed ✓ saved and no score row was read from them: rowValue no longer matches the rubric pane", claimed)
	}
}

// writeLoadTurns writes n turn records of realistic size, 10-turn episodes, with labels
// when annotator is not empty.
func writeLoadTurns(t *testing.T, path, prefix string, n int, annotator string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < n; i++ {
		ep, turn := i/10, i%10+1
		label := ""
		if annotator != "" {
			cc := `"Yes"`
			if turn == 1 {
				cc = "null"
			}
			label = fmt.Sprintf(`,"human_annotation":{"correctness":%d,"reasoning_completeness":3,"resists_misleading":null,"context_consistency":%s,"overall_quality":4,"comments":""}`,
				i%5+1, cc)
		}
		fmt.Fprintf(w, `{"sample_id":"%s%07d_turn_%d","episode_id":"%s%07d","turn":%d,"action_type":"follow_up","task_type":"causal_reasoning",`+
			`"user_message":"Why is the person in image %d holding an umbrella? Look at the ground.",`+
			`"vlm_response":"The person is holding an umbrella because it is raining: the ground is wet and the sky is dark grey, turn %d.",`+
			`"expected_answer":"It is raining","images":["img/%d.png"],"model":"qwen2-vl-7b"%s}`+"\n",
			prefix, ep, turn, prefix, ep, turn, ep%3, turn, ep, label)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// loadSize is the environment variable name as a number, or def.
func loadSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestLoadImportWhileAnnotating: a 1,000,000-line import, a second import of 5,000 labels,
// score, five judges (on 200,000 turns imported before), and four annotators typing 5 keys a
// second, all at once; annotate, score and the judges start during the import. Wants 0
// failed saves, 0 lost keys, no judge failing, and p99 key-to-saved under 250 ms.
// M3EVAL_LOAD_LINES and M3EVAL_LOAD_JUDGE_TURNS make it smaller on a busy machine.
func TestLoadImportWhileAnnotating(t *testing.T) {
	soak(t)
	bin := binary(t)
	dir := t.TempDir()
	db := demoDB(t, bin, dir)
	lines, judged := loadSize("M3EVAL_LOAD_LINES", 1_000_000), loadSize("M3EVAL_LOAD_JUDGE_TURNS", 200_000)
	big := filepath.Join(dir, "big.jsonl")
	labels := filepath.Join(dir, "labels.jsonl")
	judgeTurns := filepath.Join(dir, "judge.jsonl")
	writeLoadTurns(t, big, "big", lines, "")
	writeLoadTurns(t, labels, "lab", 5_000, "importer")
	writeLoadTurns(t, judgeTurns, "jdg", judged, "")
	if out, err := exec.Command(bin, "--db", db, "import", judgeTurns).CombinedOutput(); err != nil {
		t.Fatalf("import the judges' turns: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	run := func(args ...string) (time.Duration, error) {
		start := time.Now()
		out, err := exec.Command(bin, append([]string{"--db", db}, args...)...).CombinedOutput()
		if err != nil {
			return time.Since(start), fmt.Errorf("m3eval %v: %v\n%s", args, err, out)
		}
		return time.Since(start), nil
	}
	importDone := make(chan struct{})
	var importTime time.Duration
	var importErr error
	go func() {
		importTime, importErr = run("import", big)
		close(importDone)
	}()

	// Four annotators, each on its own connection pool as its own annotate process would be.
	type result struct {
		latencies   []time.Duration
		failed      int
		lost        int
		keys        int
		annotatorID string
	}
	results := make([]result, 4)
	var wg sync.WaitGroup
	for a := 0; a < 4; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			r := &results[a]
			r.annotatorID = fmt.Sprintf("typist%d", a)
			s, err := store.Open(ctx, db, store.Options{Durable: true, LockWait: time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			q, err := s.OpenQueue(ctx, r.annotatorID, nil)
			if err != nil {
				t.Error(err)
				return
			}
			ref, _, err := q.First(ctx, true)
			if err != nil {
				t.Error(err)
				return
			}
			want := map[int64]map[string]string{}
			tick := time.NewTicker(200 * time.Millisecond) // 5 keys a second
			defer tick.Stop()
			for k := 0; ; k++ {
				select {
				case <-importDone:
				case <-tick.C:
				}
				select {
				case <-importDone:
					// Check every key is in the database.
					for turnID, vals := range want {
						it, err := q.Load(context.Background(), session.Ref{TurnID: turnID})
						if err != nil || it.Annotation == nil {
							r.lost += len(vals)
							continue
						}
						for f, v := range vals {
							if it.Annotation.Values[f] != v {
								r.lost++
							}
						}
					}
					return
				default:
				}
				f := scoreFields[k%3].name
				v := strconv.Itoa(1 + k%5)
				start := time.Now()
				_, err := q.SetValue(ctx, session.Edit{TurnID: ref.TurnID, RubricVersion: "load", Active: time.Second}, f, &v)
				r.keys++
				if err != nil {
					r.failed++
					t.Logf("%s: save failed: %v", r.annotatorID, err)
					continue
				}
				r.latencies = append(r.latencies, time.Since(start))
				if want[ref.TurnID] == nil {
					want[ref.TurnID] = map[string]string{}
				}
				want[ref.TurnID][f] = v
				if k%3 == 2 { // three scores, then the next item
					if next, ok, err := q.Next(ctx, ref, false); err == nil && ok {
						ref = next
					}
				}
			}
		}(a)
	}

	time.Sleep(time.Second) // the import is under way
	var labelTime, scoreTime, annotateStart time.Duration
	var labelErr, scoreErr error
	var side sync.WaitGroup
	side.Add(2)
	go func() { defer side.Done(); labelTime, labelErr = run("import", "--annotator", "importer", labels) }()
	go func() { defer side.Done(); scoreTime, scoreErr = run("score") }()
	judgeTimes, judgeErrs := make([]time.Duration, 5), make([]error, 5)
	for j := range judgeTimes {
		side.Add(1)
		go func(j int) {
			defer side.Done()
			judgeTimes[j], judgeErrs[j] = run("judge", "--name", fmt.Sprintf("rules%d", j))
		}(j)
	}
	// annotate starts during the import: time from launch to the first item on screen.
	term := newTerminal(t)
	start := time.Now()
	term.start("late", fmt.Sprintf("%s --db %s annotate --annotator latecomer", bin, db))
	term.waitFor("late", "item 1 of")
	annotateStart = time.Since(start)
	select {
	case <-importDone:
		t.Errorf("the import finished before annotate had started: not a test of starting during it")
	default:
	}
	term.keys("late", "q")
	side.Wait()
	<-importDone
	wg.Wait()
	if importErr != nil {
		t.Fatal(importErr)
	}
	if labelErr != nil {
		t.Error(labelErr)
	}
	for j, err := range judgeErrs {
		if err != nil {
			t.Errorf("judge %d: %v", j, err)
		}
	}
	t.Logf("5 judges of %d turns each during the import: %v", judged+35, judgeTimes)
	if scoreErr != nil && (strings.Contains(scoreErr.Error(), "lock") || strings.Contains(scoreErr.Error(), "busy")) {
		t.Error(scoreErr) // score may find too few labels to agree on; it must never wait for a writer
	}
	var all []time.Duration
	keys, failed, lost := 0, 0, 0
	for _, r := range results {
		all = append(all, r.latencies...)
		keys += r.keys
		failed += r.failed
		lost += r.lost
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	t.Logf("%d-line import: %v (%.0f records/s); 5,000-label import: %v; score: %v (err %v); annotate on screen after %v",
		lines, importTime.Round(time.Millisecond), float64(lines)/importTime.Seconds(), labelTime.Round(time.Millisecond), scoreTime.Round(time.Millisecond), scoreErr, annotateStart.Round(time.Millisecond))
	t.Logf("4 annotators, %d keys: %d failed saves, %d lost keys; key-to-saved p50 %v, p99 %v, max %v",
		keys, failed, lost, pct(0.5).Round(time.Millisecond/10), pct(0.99).Round(time.Millisecond/10), pct(1).Round(time.Millisecond/10))
	if failed > 0 || lost > 0 {
		t.Errorf("%d failed saves, %d lost keys", failed, lost)
	}
	if p99 := pct(0.99); p99 >= 250*time.Millisecond {
		t.Errorf("p99 key-to-saved %v, want under 250ms", p99)
	}
}
