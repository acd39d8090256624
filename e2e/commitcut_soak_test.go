package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/testkit"
)

// TestSoakCommitCuts (#38) is the fault soak's PostgreSQL counterpart for lost COMMIT replies:
// the annotator runs through a proxy on 127.0.0.1 that, armed at random before a key, cuts
// the connection carrying the next COMMIT's reply after the server has committed. Keys are
// scores and undos (u), typed at random speed; once the screen says "✓ saved", every score
// row it shows (a value, or · for none) must be what the database holds: a retried write
// applied twice, or an undo undoing two steps, shows here. 100 trials (M3EVAL_SOAK_TRIALS).
func TestSoakCommitCuts(t *testing.T) {
	soak(t)
	trials := 100
	if v, err := strconv.Atoi(os.Getenv("M3EVAL_SOAK_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	db := postgresPath(t)
	bin := binary(t)
	demoInto(t, bin, db)
	cut, proxied := testkit.NewCommitCutter(t, db)
	term := newTerminal(t)
	term.start("keep", "sleep 3600")
	rng := rand.New(rand.NewPCG(38, uint64(time.Now().UnixNano())))
	var keys, armed, values, lost int
	for i := 0; i < trials; i++ {
		name := fmt.Sprintf("c%03d", i)
		annotator := "cut" + name
		// The stacked layouts as well as the wide one: the header, with its "✓ saved", is
		// always the first line (#40; 200×60 only, before, because the stacked panes pushed
		// it off the top).
		size := [][2]string{{"120", "40"}, {"120", "60"}, {"80", "24"}, {"200", "60"}}[i%4]
		term.tmux("new-session", "-d", "-s", name, "-x", size[0], "-y", size[1],
			"exec "+fmt.Sprintf("%s --db %s annotate --annotator %s", bin, quoteShell(proxied), annotator))
		pid, err := strconv.Atoi(strings.TrimSpace(term.tmux("display-message", "-p", "-t", name, "#{pane_pid}")))
		if err != nil {
			t.Fatal(err)
		}
		term.waitFor(name, "item 1 of 35")
		n := 2 + rng.IntN(8)
		for k := 0; k < n; k++ {
			key := strconv.Itoa(1 + rng.IntN(5))
			if rng.IntN(3) == 0 {
				key = "u"
			}
			if rng.IntN(2) == 0 {
				cut.Armed.Store(true)
				armed++
			}
			term.tmux("send-keys", "-t", name, key)
			keys++
			if gap := rng.IntN(60); gap > 20 {
				time.Sleep(time.Duration(gap-20) * time.Millisecond)
			}
		}
		// The screen and the database are compared once both are still: a screen that says
		// saved, the database read, the same screen again.
		var screen string
		var got map[string]string
		for {
			screen = term.waitFor(name, "✓ saved")
			if first, _, _ := strings.Cut(screen, "\n"); !strings.HasPrefix(first, "m3eval · ") || !strings.Contains(first, "✓ saved") {
				t.Fatalf("trial %d (%s×%s): the header is not the first line\n%s", i, size[0], size[1], screen)
			}
			got = stored(t, db, annotator)["demo_zh_umbrella_0_turn_1"]
			if term.screen(name) == screen {
				break
			}
		}
		for _, m := range rowValue.FindAllStringSubmatch(screen, -1) {
			var field string
			for _, f := range scoreFields {
				if f.label == m[1] {
					field = f.name
				}
			}
			values++
			want := m[2]
			if want == "·" {
				want = ""
			}
			if got[field] != want {
				lost++
				t.Errorf("trial %d: the screen shows %s = %s as saved, the database holds %q\n%s", i, field, m[2], got[field], screen)
			}
		}
		cut.Armed.Store(false)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Not waited for (kill(pid, 0) also finds a zombie tmux has not reaped yet): each
		// trial is another annotator, and its session ends with its process.
	}
	t.Logf("COMMIT-cut soak on PostgreSQL: %d trials, %d keys, %d armed, %d COMMIT replies cut, %d values shown saved checked, %d lost",
		trials, keys, armed, cut.Cuts.Load(), values, lost)
	if values == 0 {
		t.Error("no score row was read from the screens: rowValue no longer matches the rubric pane")
	}
}
