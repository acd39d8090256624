package simulate_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/testkit"
)

// The client cases of issue #37 and the slow endpoints of issue #38, through m3eval
// simulate's flags against the demo VLM on 127.0.0.1: each delivery persona answers as the
// faithful one does, delivered as some real server does.

// simTurn is what these tests read of a written turn.
type simTurn struct {
	SampleID    string         `json:"sample_id"`
	Turn        int            `json:"turn"`
	VLMResponse string         `json:"vlm_response"`
	Meta        map[string]any `json:"meta"`
}

// simulateWith runs m3eval simulate --model model (rules, 3 turns) against endpoint with the
// extra flags: the turns written by sample id without the model's suffix, the output (stdout
// and stderr) and the error.
func simulateWith(t *testing.T, endpoint, model string, extra ...string) (map[string]simTurn, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "turns.jsonl")
	args := append([]string{"--scenes", demoScenesFile, "--model", model, "--turns", "3", "-o", out}, extra...)
	if endpoint != "" {
		args = append(args, "--endpoint", endpoint, "--retries", "2")
	}
	text, err := testkit.RunSimulate(t, args...)
	turns := map[string]simTurn{}
	b, _ := os.ReadFile(out)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var tr simTurn
		if jerr := json.Unmarshal([]byte(line), &tr); jerr != nil {
			t.Fatalf("turns file: %v: %s", jerr, line)
		}
		turns[strings.Replace(tr.SampleID, "_"+model, "", 1)] = tr
	}
	return turns, text, err
}

func TestSimulateReadsEveryServer(t *testing.T) {
	endpoint := testkit.DemoVLM(t, demoScenesFile, 0)
	want, out, err := simulateWith(t, endpoint, "faithful")
	if err != nil || len(want) == 0 {
		t.Fatalf("faithful: %v\n%s", err, out)
	}
	for _, c := range []struct {
		model string
		extra []string
		says  string
	}{
		{"streamed", nil, ""},
		{"parts", nil, ""},
		{"error200", nil, ""},
		// Retry-After: 45 on each first try, cut to the --max-retry-wait given (the test does
		// not wait 45 s), and said.
		{"retryafter", []string{"--max-retry-wait", "10ms"}, "asked to wait 45s before retrying (Retry-After); waiting 10ms, the most --max-retry-wait allows"},
	} {
		t.Run(c.model, func(t *testing.T) {
			got, out, err := simulateWith(t, endpoint, c.model, c.extra...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(got) != len(want) {
				t.Fatalf("%d turns, the faithful run wrote %d\n%s", len(got), len(want), out)
			}
			for id, w := range want {
				if g := got[id]; g.VLMResponse != w.VLMResponse || g.Meta["truncated"] != nil {
					t.Errorf("%s: %q (meta %v), want the faithful answer %q", id, g.VLMResponse, g.Meta, w.VLMResponse)
				}
			}
			if !strings.Contains(out, c.says) || strings.Contains(out, "cut at the token limit") {
				t.Errorf("output lacks %q:\n%s", c.says, out)
			}
			// The request log keeps the answer as it came (an event stream as its text), and
			// a replay reads it back into the same turns.
			log := filepath.Join(t.TempDir(), "requests.jsonl")
			if _, out, err := simulateWith(t, endpoint, c.model, append(c.extra, "--log", log)...); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			again, out, err := simulateWith(t, "", c.model, "--replay", log)
			if err != nil || len(again) != len(want) {
				t.Fatalf("replay: %d turns, %v\n%s", len(again), err, out)
			}
			for id, w := range want {
				if again[id].VLMResponse != w.VLMResponse {
					t.Errorf("replayed %s: %q, want %q", id, again[id].VLMResponse, w.VLMResponse)
				}
			}
		})
	}
	// Cut answers are written marked, never as complete ones, and counted.
	t.Run("cut", func(t *testing.T) {
		// (The cut answers steer the conversation elsewhere than the faithful one's, so the
		// turns are checked by themselves: each at most the persona's cut, marked.)
		got, out, err := simulateWith(t, endpoint, "cut", "--max-tokens", "5")
		if err != nil || len(got) == 0 {
			t.Fatalf("%d turns, %v\n%s", len(got), err, out)
		}
		for id, g := range got {
			if g.Meta["truncated"] != true || len(g.VLMResponse) > 19+3 {
				t.Errorf("%s: %q meta %v; want an answer cut at 19 bytes, marked truncated", id, g.VLMResponse, g.Meta)
			}
		}
		if first := got["apples_en_rules_turn_1"]; !strings.HasPrefix(want["apples_en_rules_turn_1"].VLMResponse, first.VLMResponse) || first.VLMResponse == want["apples_en_rules_turn_1"].VLMResponse {
			t.Errorf("turn 1: %q, want a cut prefix of the faithful %q", first.VLMResponse, want["apples_en_rules_turn_1"].VLMResponse)
		}
		if !strings.Contains(out, "simulate: "+strconv.Itoa(len(got))+" turn(s) written were cut at the token limit") || !strings.Contains(out, "meta.truncated: true: raise --max-tokens") {
			t.Errorf("the summary does not count the cut turns:\n%s", out)
		}
		// Replayed from its request log, the run writes the same turns, still marked cut.
		log := filepath.Join(t.TempDir(), "cut.requests.jsonl")
		if _, _, err := simulateWith(t, endpoint, "cut", "--max-tokens", "5", "--log", log); err != nil {
			t.Fatal(err)
		}
		again, out, err := simulateWith(t, "", "cut", "--max-tokens", "5", "--replay", log)
		if err != nil || len(again) != len(got) {
			t.Fatalf("replay: %d turns, %v\n%s", len(again), err, out)
		}
		for id, g := range got {
			if a := again[id]; a.VLMResponse != g.VLMResponse || a.Meta["truncated"] != true {
				t.Errorf("replayed %s: %q meta %v, want %q marked truncated", id, a.VLMResponse, a.Meta, g.VLMResponse)
			}
		}
	})
}

// A redirect is never followed to a GET: the episodes fail saying so, and the canned answer
// is written nowhere.
func TestSimulateFollowsNoRedirect(t *testing.T) {
	d := testkit.DemoVLMServer(t, demoScenesFile)
	var mu sync.Mutex
	var gets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		d.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	got, out, err := simulateWith(t, srv.URL+"/v1", "redirect")
	if err == nil || len(got) != 0 || strings.Contains(out, demovlm.CannedAnswer) {
		t.Fatalf("%d turns written, err %v:\n%s", len(got), err, out)
	}
	if !strings.Contains(out, "redirects (HTTP 302)") || !strings.Contains(out, "turn the POST into a GET") {
		t.Errorf("the failures do not say why:\n%s", out)
	}
	if gets != 0 {
		t.Errorf("%d GET requests", gets)
	}
}

// A server that never answers holds a turn no longer than --turn-timeout, however many
// retries --retries allows; an answer over 16 MiB fails its episode, saying so.
func TestSimulateSlowAndHugeAnswers(t *testing.T) {
	endpoint := testkit.DemoVLM(t, demoScenesFile, 0)
	start := time.Now()
	got, out, err := simulateWith(t, endpoint, "hang@apples_en", "--timeout", "50ms", "--retries", "1000", "--turn-timeout", "400ms")
	if err == nil || !strings.Contains(out, "no answer within the turn's time limit 400ms (--turn-timeout)") {
		t.Fatalf("err %v:\n%s", err, out)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %s", took)
	}
	for id := range got {
		if strings.HasPrefix(id, "apples_en") {
			t.Errorf("the hung episode's turn %s was written", id)
		}
	}

	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(huge.Close)
	got, out, err = simulateWith(t, huge.URL+"/v1", "m", "--concurrency", "1")
	if err == nil || len(got) != 0 || !strings.Contains(out, "larger than 16 MiB") {
		t.Fatalf("%d turns, err %v:\n%.2000s", len(got), err, out)
	}
}

// --max-retry-wait and --turn-timeout must be above 0: a usage error names the flag.
func TestSimulateRetryFlagsChecked(t *testing.T) {
	for _, c := range [][]string{{"--max-retry-wait", "0s"}, {"--turn-timeout", "-1s"}} {
		_, err := testkit.RunSimulate(t, append([]string{"--scenes", demoScenesFile, "--dry-run"}, c...)...)
		if err == nil || !isUsage(err) || !strings.Contains(err.Error(), c[0]+" ") {
			t.Errorf("%v: err %v (usage %v)", c, err, isUsage(err))
		}
	}
}
